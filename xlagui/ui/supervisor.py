"""The QThread that supervises one comparison off the GUI thread: first the interleaved speed
measurement (`compare.run_measurement`), then, unless the comparison is `quick`, the training
runs (`compare.run_comparison`).

The thread only hosts the supervision; the training runs in worker processes started by
`runner.run_worker` (a `worker_process.WorkerProcess`, or whatever `worker` a test injects).
Everything the GUI learns crosses as queued signals, in the order it happened, and the GUI
never touches the report while this runs.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal

from xlagui.core.compare import (
    CLOSING,
    RunWorker,
    inspect_after_measurement,
    run_comparison,
    run_measurement,
)
from xlagui.core.events import Event
from xlagui.core.report import ComparisonReport, RunEntry
from xlagui.core.spec import RunSpec
from xlagui.core.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.scan import DatasetScan


class ComparisonSupervisor(QThread):
    """Runs the queued runs of `report` one after the other, each in its worker process.

    Signals:
        run_started(str run_id, str variant, int repeat): a run is about to start its worker.
        event_received(str run_id, object event): one event of that run (`core.events.Event`).
        run_done(str run_id, str status, object comparison): the run ended ("finished",
            "cancelled", "interrupted", "not run" or "error", `core.report.RUN_STATUSES`);
            `comparison` is the report's recomputed `Comparison`.
        measurement_updated(object comparison): a round of the speed measurement ended (and
            once more when it is over); `comparison.interleaved` holds the estimate so far.
        inspecting(): a speed-only comparison's answer is in; one untimed compile per XLA
            arm with XLA's dump on follows, for "What XLA did".
        crashed(str message, str details): the supervision itself failed unexpectedly; the
            runs finished before it are kept in the report and its folder.
        finished(): (QThread's) the comparison is over; `report` is final.
    """

    run_started = Signal(str, str, int)
    event_received = Signal(str, object)
    run_done = Signal(str, str, object)
    measurement_updated = Signal(object)
    inspecting = Signal()
    crashed = Signal(str, str)

    def __init__(
        self,
        report: ComparisonReport,
        scan: DatasetScan,
        out_dir: Path,
        *,
        only: set[str] | None = None,
        worker: RunWorker | None = None,
        measure_command: Callable[[RunSpec], list[str] | None] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.report, self.scan, self.out_dir = report, scan, out_dir  # what to run, where
        self.only = only
        self.worker = worker
        self.measure_command = measure_command
        self.state = TaskState()
        self.setObjectName("xlagui-comparison")

    def request_stop(self, *, closing: bool = False) -> None:
        """Ask the current run to stop (the runner escalates to terminate, then kill) and
        skip the runs after it. `closing`: because the app is closing, so the run cut short is
        saved as `interrupted` and the runs skipped as `not run` (else both `cancelled`); a
        Stop followed by a close counts as a close. Safe to call from the GUI thread at any
        time."""
        self.state.request_interruption(CLOSING if closing else "")

    @property
    def stop_requested(self) -> bool:
        return self.state.is_interruption_requested()

    def run(self) -> None:
        try:
            if self.only is None and self.report.measure_runs:
                self._measure()
                if self.report.config.quick:
                    if self.worker is None:  # a test's fake worker has no XLA to inspect
                        self.inspecting.emit()
                        inspect_after_measurement(self.report, self.scan, self.out_dir,
                                                  self.state)
                    return
            # After a stop this only marks the training runs cancelled and saves.
            run_comparison(
                self.report,
                self.scan,
                self.out_dir,
                self.state,
                on_event=self._relay_event,
                on_run_start=self._relay_start,
                on_run_done=self._relay_done,
                only=self.only,
                worker=self.worker,
            )
        except Exception as exc:  # the supervision must never take the app down
            self.crashed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())

    def _measure(self) -> None:
        for entry in self.report.measure_runs:
            self.run_started.emit(entry.run_id, entry.variant, entry.repeat)
        try:
            run_measurement(
                self.report,
                self.scan,
                self.out_dir,
                self.state,
                on_event=self._relay_event,
                on_round=lambda report: self.measurement_updated.emit(report.comparison),
                command_for=self.measure_command,
            )
        finally:
            for entry in self.report.measure_runs:
                self._relay_done(entry)
            self.measurement_updated.emit(self.report.comparison)

    def _relay_start(self, entry: RunEntry) -> None:
        self.run_started.emit(entry.run_id, entry.variant, entry.repeat)

    def _relay_event(self, entry: RunEntry, event: Event) -> None:
        self.event_received.emit(entry.run_id, event)

    def _relay_done(self, entry: RunEntry) -> None:
        self.run_done.emit(entry.run_id, entry.status, self.report.comparison)
