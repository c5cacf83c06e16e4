"""One real measuring worker of an arm at 48 px on a tiny set, as a comparison plans it: what
the runtime-lever and XLA-flag tests start."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.worker_process import WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.identity import WorkerMode


def measuring_worker(tmp_path: Path, arm: str) -> tuple[WorkerProcess, list[Event]]:
    """The measuring worker of `arm` (batch 2, 48 px, seed 1), not started, and the list its
    events go to."""
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    config = RunConfig(batch_size=2, image_size=48, quick=True, seed=1, arms=(arm,))
    report = new_report(scan, config, environment={})
    entry = next(e for e in plan_measure_runs(config) if e.variant == arm)
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    events: list[Event] = []
    return WorkerProcess(spec, events.append), events
