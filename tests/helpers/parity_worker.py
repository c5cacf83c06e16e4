"""A test-only worker for the parity steps alone (the app's is `core/worker/explain.py`):
`python -m tests.helpers.parity_worker SPEC.json STEPS [--reference]` sets up the run of
SPEC.json like every worker (`set_up`: the arm applied, `started` said), with the test levers
registered (the knob and the perturbing lever), runs `parity_steps` and writes the trace to
`parity.json` in the run's folder; `--reference` then runs them again in the same process with
the initial weights nudged, two ways (`parity-reference.json`, `parity-reference2.json`), with
each batch's images in another order (`parity-reference-permuted.json`), as the app's
explaining worker does, and once more un-nudged (`parity-again.json`: the model was put back,
and the baseline repeats itself bit for bit). Ends with `finished`.
"""

from __future__ import annotations

import json
import sys
import time

from tests.helpers.levers import KNOB, PERTURB
from xlagui.core.protocol import levers
from xlagui.core.protocol.events import FinishedEvent, RunSummary
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.worker.child import read_spec
from xlagui.core.worker.io import EventSink, redirect_stdout

TRACE_FILES = {"plain": "parity.json", "reference": "parity-reference.json",
               "reference2": "parity-reference2.json",
               "reference-permuted": "parity-reference-permuted.json",
               "again": "parity-again.json"}


def main(argv: list[str]) -> None:
    from xlagui.core.worker.parity import parity_steps
    from xlagui.core.worker.setup import set_up

    levers.LEVERS = (*levers.LEVERS, KNOB, PERTURB)
    events = redirect_stdout()
    sink = EventSink(events, time.perf_counter())
    spec = read_spec(argv[0])
    steps = int(argv[1])
    setup = set_up(spec, sink, WorkerMode.INSPECT)
    runs = [("plain", False, 0)]
    if "--reference" in argv:
        runs += [("reference", True, 0), ("reference2", True, 1),
                 ("reference-permuted", False, 0), ("again", False, 0)]
    for name, nudge, nudge_seed in runs:
        t0 = time.perf_counter()
        trace = parity_steps(spec, setup, steps, nudge=nudge, nudge_seed=nudge_seed,
                             permute=name == "reference-permuted")
        print(f"parity {name}: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
        (spec.run_dir / TRACE_FILES[name]).write_text(json.dumps(trace.to_dict()))
    sink.emit(FinishedEvent(summary=RunSummary(mode=WorkerMode.INSPECT, steps_done=steps)))
    events.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
