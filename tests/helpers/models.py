"""A model checker for the window's tests: answers like
`xlagui.core.measure.model_check.check_models` at once, without TensorFlow, and records what it
was asked."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.protocol.events import PROTOCOL_VERSION, ModelEvent
from xlagui.core.protocol.task import TaskState


class FakeModelChecker:
    """Built-ins get `1,000 × (index + 1) + image size` parameters (so a size change shows),
    or the count `params` names; a file named in `refuse` is refused with its message; a file
    named in `fixed` takes that image size. With `gate` cleared, every check waits until it
    opens (a slow check); with `flops_gate` cleared, each spec that counts FLOPs waits after
    the answers before it were reported (a slow FLOP count after a quick build)."""

    def __init__(self, refuse: dict[str, str] | None = None,
                 fixed: dict[str, int] | None = None,
                 params: dict[str, int] | None = None) -> None:
        self.refuse = refuse or {}
        self.fixed = fixed or {}
        self.params = params or {}
        self.asked: list[ModelCheckSpec] = []
        self.gate = threading.Event()
        self.gate.set()
        self.flops_gate = threading.Event()
        self.flops_gate.set()

    def __call__(self, specs: list[ModelCheckSpec], state: TaskState,
                 transport: object = None) -> list[ModelEvent]:
        """`check_models`' call, each answer reported as it comes (`state.set_partial((index,
        event))`); `transport`: where the workflow checks it (ignored)."""
        self.gate.wait(30)
        state.raise_if_interrupted()
        self.asked.extend(specs)
        answers = []
        for index, spec in enumerate(specs):
            if spec.count_flops:
                for _ in range(600):  # at most 30 s, as `gate`
                    if self.flops_gate.wait(0.05):
                        break
                    state.raise_if_interrupted()
            answers.append(self._one(spec))
            state.set_partial((index, answers[-1]))
        return answers

    def _one(self, spec: ModelCheckSpec) -> ModelEvent:
        from xlagui.core.model.sources import builtin_names

        m = spec.model
        name = Path(m.file).name if m.file else m.name
        if name in self.refuse:
            raise ModelRefused(self.refuse[name])
        if name in self.params:
            params = self.params[name]
        elif m.source == "builtin":
            params = 1_000 * (builtin_names().index(m.name) + 1) + spec.image_size
        else:
            params = 4_321
        size = self.fixed.get(name, spec.image_size)
        outputs = 1 if spec.num_classes == 2 else spec.num_classes
        return ModelEvent(
            protocol=PROTOCOL_VERSION,
            model=dataclasses.replace(m, params=params),
            image_size=size,
            fixed_input_size=name in self.fixed,
            outputs=outputs,
            layers=3,
            summary=[f"input (InputLayer) ({size}, {size}, 3) 0", f"body (Dense) (8,) {params}",
                     f"head (Dense) ({outputs},) 9"],
            compile_words="Adam + binary_crossentropy",
            batch_size=spec.batch_size,
            flops_per_step=1e9 if spec.count_flops else None,
            memory_bytes=700 * 2**20 if spec.count_flops else None,
        )
