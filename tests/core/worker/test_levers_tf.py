"""A lever's declared data reaches a real worker, with no worker code of its own: `knob2`
(tests/helpers/levers.py) sets an environment variable, a `tf.config` call and
`model.compile(steps_per_execution=2)`, and the worker (`python -m tests.helpers.levers`, the
real child with the knob registered and a check that refuses a run that did not get them)
starts. One measuring worker at 48 px, stopped once started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.levers import register_knob
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.worker_process import WorkerGone, WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import Event, StartedEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.spec import SPEC_FILE
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


def test_a_declared_lever_reaches_the_real_workers_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_knob(monkeypatch)
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    config = RunConfig(batch_size=2, image_size=48, quick=True, seed=1, arms=("knob2",))
    report = new_report(scan, config, environment={})
    entry = next(e for e in plan_measure_runs(config) if e.variant == "knob2")
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    command = [sys.executable, "-m", "tests.helpers.levers", str(spec.run_dir / SPEC_FILE)]
    events: list[Event] = []
    worker = WorkerProcess(spec, events.append, command=command)
    worker.start()
    try:
        try:
            started = worker.wait_for("started", TaskState())
        except WorkerGone as gone:  # the knob's check refused it: say what it found
            pytest.fail(f"the worker did not start: {gone}")
        assert isinstance(started, StartedEvent)
        assert started.levers == {"knob": "2"} and started.variant == "knob2"
        assert started.xla_in_effect is False and started.policy == "float32"
        worker.stop()
    finally:
        worker.close()
