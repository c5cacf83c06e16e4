"""Profile a few warm training steps with TensorFlow's profiler (`profile_steps`), and where
their time goes (`explain_steps`): in a worker whose model is built, compiled and warm (one step
done, as `train.inspect` does), outside every timed run.

After one step under the profiler that is not counted (the profiler's own warm-up), each step
is the Keras train function on the pipeline's endless stream, as `train.inspect`
runs it, wrapped in a `tf.profiler.experimental.Trace("train", step_num=i)`: those events are
the step windows `explain.trace` reads. The steps' wall times (taken around the whole step, the
loss read included) and the model's own names go to `steps.json` beside the trace.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from xlagui.core.explain.attribute import attribute
from xlagui.core.explain.hlo_names import dump_op_names
from xlagui.core.explain.ops import Names
from xlagui.core.explain.trace import STEP_NAME, read_xspace
from xlagui.core.protocol.why import ArmProfile
from xlagui.core.worker.backends import profiler, step_window
from xlagui.core.worker.setup import Setup

STEPS_FILE = "steps.json"
DEFAULT_STEPS = 5


def model_names(model: Any) -> Names:
    """The model's leaf layers, its models (itself and any nested) and its optimizer's name."""
    layers: set[str] = set()
    models: set[str] = {model.name}

    def walk(m: Any) -> None:
        for layer in getattr(m, "layers", ()):
            if getattr(layer, "layers", None):  # a nested model (or any layer of layers)
                models.add(layer.name)
                walk(layer)
            else:
                layers.add(layer.name)

    walk(model)
    optimizer = getattr(getattr(model, "optimizer", None), "name", "") or ""
    return Names(frozenset(layers), frozenset(models), str(optimizer))


def profile_steps(setup: Setup, steps: int, folder: Path) -> Path:
    """Profile `steps` training steps into `folder`; the `.xplane.pb` written."""
    tf = setup.tf
    model = setup.model
    train = setup.steps
    stream = iter(setup.datasets.stream)
    walls: list[float] = []
    folder.mkdir(parents=True, exist_ok=True)
    with profiler(tf, folder):
        # The profiler's own first step is slower (its tracers warming up): one step under it,
        # outside the windows, that no figure counts.
        float(train(stream)["loss"])
        for i in range(steps):
            t0 = time.perf_counter()
            with step_window(tf, STEP_NAME, i):
                float(train(stream)["loss"])  # waits for the step
            walls.append(time.perf_counter() - t0)
    names = model_names(model)
    (folder / STEPS_FILE).write_text(json.dumps({
        "wall_seconds": walls,
        "layers": sorted(names.layers), "models": sorted(names.models),
        "optimizer": names.optimizer,
    }), encoding="utf-8")
    found = sorted(folder.glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise RuntimeError(f"the profiler wrote no trace under {folder}")
    return found[-1]


def read_names(folder: Path) -> Names:
    """The model's names `profile_steps` kept beside its trace."""
    d = json.loads((folder / STEPS_FILE).read_text(encoding="utf-8"))
    return Names(frozenset(d["layers"]), frozenset(d["models"]), str(d["optimizer"]))


def explain_steps(setup: Setup, steps: int, folder: Path, dump_dir: Path | None) -> ArmProfile:
    """Profile `steps` steps and attribute them; XLA's instructions through the optimized
    modules in `dump_dir` (the run's dump folder; None for an arm without XLA)."""
    trace = read_xspace(profile_steps(setup, steps, folder), names=read_names(folder))
    modules = {e.module for e in trace.events if e.module}
    op_names = dump_op_names(dump_dir, modules) if dump_dir is not None and modules else None
    return attribute(trace, op_names, steps)
