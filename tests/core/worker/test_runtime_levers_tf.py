"""A real measuring worker of a runtime arm (1 intra-op thread, oneDNN off, 2 steps per
execution) starts with every value read back, and counts its blocks in batches: a block of 3
batches at 2 per call trains 4 and says 4. One measuring worker at 48 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.arm_workers import measuring_worker
from xlagui.core.measure.worker_process import WorkerGone
from xlagui.core.protocol.events import BlockEvent, StartedEvent, WorkerCommand
from xlagui.core.protocol.identity import Command
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


def test_a_runtime_arm_starts_and_counts_batches(tmp_path: Path) -> None:
    worker, _events = measuring_worker(tmp_path, "t1+nodnn+spe2")
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
