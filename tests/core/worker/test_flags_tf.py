"""A real worker whose arm gives an XLA flag the installed XLA does not know is refused at its
start with the flag's name (XLA itself would abort the process at its first compile). One
measuring worker at 48 px."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.arm_workers import measuring_worker
from xlagui.core.measure.worker_process import WorkerGone
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


def test_a_worker_refuses_a_flag_xla_does_not_know(tmp_path: Path) -> None:
    worker, events = measuring_worker(tmp_path, "jit+xla_cpu_no_such_flag=1")
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
