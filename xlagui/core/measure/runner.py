"""Run one training worker to its end: `run_worker`, a plain blocking function that reports
through a `TaskState`; the CLI calls it from its main thread, the GUI from a QThread.

The supervision itself (starting the process, reading its events, the cancel ladder, a death's
report) is `xlagui.core.measure.worker_process.WorkerProcess`, shared with the measuring workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xlagui.core.measure.transports.base import Transport
from xlagui.core.measure.transports.local import LOCAL
from xlagui.core.measure.worker_process import (
    CANCEL_GRACE_SECONDS,
    TERMINATE_GRACE_SECONDS,
    WorkerProcess,
)
from xlagui.core.protocol.eventlog import EventLog
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.identity import RunStatus, Split
from xlagui.core.protocol.record import ended_by
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan


@dataclass
class RunResult(EventLog):
    spec: RunSpec
    status: RunStatus  # finished, cancelled or error
    events: list[Event] = field(default_factory=list)
    returncode: int | None = None


def samples_from_scan(scan: DatasetScan) -> tuple[list[str], list[Sample], list[Sample]]:
    """Class names and the train/validation samples of a `DatasetScan` (no second walk)."""
    names = list(scan.class_names)
    index = {n: i for i, n in enumerate(names)}

    def samples(split: str) -> list[Sample]:
        return [Sample(f.path, index[f.label], f.format, f.mode) for f in scan.files_for(split)]

    return names, samples(Split.TRAIN), samples(Split.TEST)


def run_worker(
    spec: RunSpec,
    state: TaskState,
    on_event: Callable[[Event], None] | None = None,
    *,
    cancel_grace: float = CANCEL_GRACE_SECONDS,
    terminate_grace: float = TERMINATE_GRACE_SECONDS,
    command: Sequence[str] | None = None,
    transport: Transport = LOCAL,
) -> RunResult:
    """Run one worker to its end (on this machine, or where `transport` runs it) and return
    what it said. Never raises for a worker failure: a crash becomes an `error` event, a
    forced stop a `cancelled` event."""
    worker = WorkerProcess(
        spec,
        on_event,
        command=command,
        transport=transport,
        cancel_grace=cancel_grace,
        terminate_grace=terminate_grace,
    )
    with worker:
        worker.start()
        worker.run_to_end(state)
    assert worker.terminal is not None  # the stream's end always leaves one
    return RunResult(
        spec=spec,
        status=ended_by(worker.terminal),
        events=worker.events,
        returncode=worker.returncode,
    )
