"""Parity traces from real workers, one process per arm (XLA's settings are process-global):
`arm_traces` plans the comparison's measuring runs for `arms`, starts the test-only parity
worker (`tests/helpers/parity_worker.py`) for each through the app's `WorkerProcess`, and reads
back its traces. The baseline's worker also gives the reference (its weights nudged) and a
repeat of itself. Used by the `tf` tests and `bench/bench_parity.py`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.helpers.parity_worker import TRACE_FILES
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import DatasetScan
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.worker_process import WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import Event, FinishedEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.spec import SPEC_FILE
from xlagui.core.protocol.task import TaskState
from xlagui.core.protocol.why import ParityTrace


def references(traces: dict[str, dict[str, ParityTrace]]) -> list[ParityTrace]:
    """The baseline's references among `arm_traces`'s traces (nudged, and permuted)."""
    return [t for name, t in traces["baseline"].items() if name.startswith("reference")]


def arm_traces(scan: DatasetScan, config: RunConfig, out: Path, steps: int,
               seconds: dict[str, float] | None = None) -> dict[str, dict[str, ParityTrace]]:
    """{arm: {"plain": trace, and for the baseline "reference", "reference2" and "again"}}
    for the baseline
    and every arm of `config.arms` (the perturbing lever registered by the caller). `seconds`,
    when given, gets what each `parity_steps` call took ("baseline plain", ...), from the logs."""
    report = new_report(scan, config, environment={})
    traces: dict[str, dict[str, ParityTrace]] = {}
    for entry in plan_measure_runs(config):
        spec = spec_for(entry, report, samples_from_scan(scan), out, mode=WorkerMode.INSPECT)
        args = [str(spec.run_dir / SPEC_FILE), str(steps)]
        baseline = entry.variant == "baseline"
        command = [sys.executable, "-m", "tests.helpers.parity_worker", *args,
                   *(["--reference"] if baseline else [])]
        events: list[Event] = []
        with WorkerProcess(spec, events.append, command=command) as worker:
            worker.start()
            worker.run_to_end(TaskState())
        if not any(isinstance(e, FinishedEvent) for e in events):
            log = (spec.run_dir / "worker.log")
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"the parity worker of {entry.variant} did not finish: "
                               f"{events[-1:]}\n{tail}")
        if seconds is not None:
            for line in (spec.run_dir / "worker.log").read_text(errors="replace").splitlines():
                if line.startswith("parity ") and line.endswith(" s"):
                    name, took = line[len("parity "):-2].split(": ")
                    seconds[f"{entry.variant} {name}"] = float(took)
        traces[str(entry.variant)] = {
            name: ParityTrace.from_dict(json.loads((spec.run_dir / file).read_text()))
            for name, file in TRACE_FILES.items() if (spec.run_dir / file).exists()
        }
    return traces
