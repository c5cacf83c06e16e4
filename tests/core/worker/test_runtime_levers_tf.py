"""A real measuring worker of a runtime arm (1 intra-op thread, oneDNN off, 2 steps per
execution) starts with every value read back, and counts its blocks in batches: a block of 3
batches at 2 per call trains 4 and says 4. One measuring worker at 48 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.worker_process import WorkerGone, WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import BlockEvent, Event, StartedEvent, WorkerCommand
from xlagui.core.protocol.identity import Command, WorkerMode
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


def test_a_runtime_arm_starts_and_counts_batches(tmp_path: Path) -> None:
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    arm = "t1+nodnn+spe2"
    config = RunConfig(batch_size=2, image_size=48, quick=True, seed=1, arms=(arm,))
    report = new_report(scan, config, environment={})
    entry = next(e for e in plan_measure_runs(config) if e.variant == arm)
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    events: list[Event] = []
    worker = WorkerProcess(spec, events.append)
    worker.start()
    state = TaskState()
    try:
        try:
            started = worker.wait_for("started", state)
        except WorkerGone as gone:  # a lever's check refused it: say what it found
            pytest.fail(f"the worker did not start: {gone}")
        assert isinstance(started, StartedEvent)
        assert started.levers == {"threads": "1", "onednn": "off", "spe": "2"}
        worker.send(WorkerCommand(Command.WARMUP, steps=2))
        worker.wait_for("warmup", state)
        worker.send(WorkerCommand(Command.BLOCK, steps=3, seq=1))
        block = worker.wait_for("block", state)
        assert isinstance(block, BlockEvent) and (block.seq, block.steps) == (1, 4)
        worker.stop()
    finally:
        worker.close()
