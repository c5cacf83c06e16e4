"""A test-only profiling worker: `python -m tests.helpers.profile_worker SPEC.json OUT STEPS`.

The real worker's set-up (`set_up`, the arm applied, the model compiled), one warm step as
`train.inspect` takes it, then `profile.explain_steps`; writes OUT/profile.json (the
`ArmProfile`) and OUT/trace.json (the reduced `Trace`, the material of a recorded fixture).
The lead's workflow is to call the same functions from the inspecting worker.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    from xlagui.core.explain.trace import read_xspace
    from xlagui.core.protocol.identity import WorkerMode
    from xlagui.core.worker import profile
    from xlagui.core.worker.child import read_spec
    from xlagui.core.worker.io import EventSink
    from xlagui.core.worker.setup import set_up

    spec_path, out, steps = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    spec = read_spec(spec_path)
    with open(out / "events.jsonl", "w", encoding="utf-8") as events:
        setup = set_up(spec, EventSink(events, time.perf_counter()), WorkerMode.INSPECT)
    setup.model.make_train_function()
    float(setup.model.train_function(iter(setup.datasets.stream))["loss"])  # warm
    dump = spec.run_dir / "xla" if spec.xla_mode.asks_for_xla else None
    folder = out / "profile"
    arm = profile.explain_steps(setup, steps, folder, dump)
    (out / "profile.json").write_text(json.dumps(arm.to_dict(), indent=1), encoding="utf-8")
    trace = read_xspace(next(folder.glob("plugins/profile/*/*.xplane.pb")),
                        names=profile.read_names(folder))
    (out / "trace.json").write_text(json.dumps(trace.to_dict()), encoding="utf-8")


if __name__ == "__main__":
    main()
