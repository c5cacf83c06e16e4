"""The inspecting worker of a comparison that explains why (`RunConfig.explain`): one untimed
worker per arm, after the speed answer, with a single compile serving three things:

1. the parity steps (`parity.parity_steps`): the first N steps from the seed's initial weights
   on batches every arm gets alike. Their first step compiles the train function, and with
   XLA's dump on, that compile writes "What XLA did";
2. on the baseline only, the rounding references parity is judged against: the same steps
   from its initial weights nudged by one ulp, two ways, and the same steps with each batch's
   images in another order (the same sums, reassociated); the model is put back after each;
3. where the time goes (`profile.explain_steps`): K warm steps under TensorFlow's profiler,
   attributed to layer, pass and op kind (XLA's instructions through the dump just written).

What it found is one `explained` event, then `finished`. A part that fails is left out with
its reason (an `Omission`): it is evidence, not the comparison.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

from xlagui.core.analysis.parity import PARITY_STEPS, REFERENCES
from xlagui.core.protocol.events import ExplainedEvent, FinishedEvent, RunSummary
from xlagui.core.protocol.identity import Role, WorkerMode, role_of
from xlagui.core.protocol.omissions import Omission, OmissionKind
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.why import ParityTrace
from xlagui.core.worker.errors import error_message
from xlagui.core.worker.io import EventSink
from xlagui.core.worker.parity import parity_batches, parity_steps
from xlagui.core.worker.profile import DEFAULT_STEPS, explain_steps
from xlagui.core.worker.setup import Setup, finish_summary

PROFILE_FOLDER = "profile"
T = TypeVar("T")


def explain(spec: RunSpec, setup: Setup, sink: EventSink) -> None:
    """Parity, its reference on the baseline, then the profile; `explained`, then `finished`."""
    omissions: list[Omission] = []
    # Decoded once for the baseline's four runs of the same steps.
    batches = _part(OmissionKind.PARITY, omissions, lambda: parity_batches(
        setup, spec.config.seed, spec.config.batch_size, PARITY_STEPS))
    steps = functools.partial(parity_steps, spec, setup, PARITY_STEPS, batches=batches)
    # The compile watch sees every parity step: the first compiles, the others are steady.
    parity = None if batches is None else _part(
        OmissionKind.PARITY, omissions, lambda: steps(watch=setup.compiles))
    setup.compiles.flush()
    references: list[ParityTrace] = []
    if parity is not None and role_of(spec.variant) is Role.BASELINE:
        for way in range(REFERENCES):
            nudged = _part(OmissionKind.PARITY, omissions,
                           functools.partial(steps, nudge=True, nudge_seed=way))
            if nudged is not None:
                references.append(nudged)
        permuted = _part(OmissionKind.PARITY, omissions, functools.partial(steps, permute=True))
        if permuted is not None:
            references.append(permuted)
    dump = spec.run_dir / "xla" if spec.arm.effective(spec.config).compiles_with_xla else None
    profile = _part(OmissionKind.PROFILE, omissions, lambda: explain_steps(
        setup, DEFAULT_STEPS, spec.run_dir / PROFILE_FOLDER, dump))
    sink.emit(ExplainedEvent(profile=profile, parity=parity, references=tuple(references)))
    summary = RunSummary(mode=WorkerMode.INSPECT, steps_done=1, omissions=tuple(omissions))
    sink.emit(FinishedEvent(summary=finish_summary(spec, setup, summary)))


def _part(kind: OmissionKind, omissions: list[Omission], work: Callable[[], T]) -> T | None:
    try:
        return work()
    except Exception as exc:  # evidence, not the comparison: left out with its reason
        omissions.append(Omission(kind, error_message(exc)))
        return None
