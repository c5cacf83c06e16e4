"""A real worker whose arm gives an XLA flag the installed XLA does not know is refused at its
start with the flag's name (XLA itself would abort the process at its first compile). One
measuring worker at 48 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.worker_process import WorkerGone, WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ErrorEvent, Event
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


def test_a_worker_refuses_a_flag_xla_does_not_know(tmp_path: Path) -> None:
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    arm = "jit+xla_cpu_no_such_flag=1"
    config = RunConfig(batch_size=2, image_size=48, quick=True, seed=1, arms=(arm,))
    report = new_report(scan, config, environment={})
    entry = next(e for e in plan_measure_runs(config) if e.variant == arm)
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    events: list[Event] = []
    worker = WorkerProcess(spec, events.append)
    worker.start()
    try:
        with pytest.raises(WorkerGone):
            worker.wait_for("started", TaskState())
    finally:
        worker.close()
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.kind for e in errors] == [Failure.UNKNOWN_XLA_FLAG], events
    assert errors[0].facts["flag"] == "--xla_cpu_no_such_flag=1"
    assert errors[0].facts["variable"] == "XLA_FLAGS"
