"""The QThread that hosts one comparison off the GUI thread: the one comparison workflow
(`xlagui.core.compare.run`, the CLI's too), watched, its callbacks relayed as queued signals.

The thread decides nothing about the comparison: the workflow runs every phase (the machine's
set-up, the speed measurement, the inspection compile, the training runs, the save) and says how
each run ended; this only turns what it is told into signals, in the order it happened. The
workers are processes; the GUI never touches the report while this runs.
"""

from __future__ import annotations

import traceback

from PySide6.QtCore import QObject, QThread, Signal

from xlagui.core import compare
from xlagui.core.compare import CLOSING, ComparisonRequest, Watcher
from xlagui.core.measure.transports import MachineError
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.interference import Preflight
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.results.report import ComparisonReport
from xlagui.present.hosts import error_hint, error_message


class ComparisonSupervisor(QThread):
    """Runs the comparison of `request` (planned as `report`, which it fills), watching it.

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
        copying(str host, int done, int total): bytes of the dataset copied to the SSH host so
            far (only when a rounded percent changes).
        host_failed(str host, str message, str hint, str details): the SSH host could not take
            the comparison (a login refused, no room for the dataset); nothing ran.
        preflight(object preflight, bool final): the machine looked at before measuring
            (`core.protocol.interference.Preflight`); not final while waiting for it to go quiet.
        finished(): (QThread's) the comparison is over; `report` is final.
    """

    run_started = Signal(str, str, int)
    event_received = Signal(str, object)
    run_done = Signal(str, str, object)
    measurement_updated = Signal(object)
    inspecting = Signal()
    crashed = Signal(str, str)
    copying = Signal(str, int, int)
    host_failed = Signal(str, str, str, str)
    preflight = Signal(object, bool)

    def __init__(
        self,
        request: ComparisonRequest,
        report: ComparisonReport,
        parent: QObject | None = None,
    ) -> None:
        """`report`: the comparison as planned (`compare.plan(request)`), what the window
        shows while it runs."""
        super().__init__(parent)
        self.request, self.report = request, report
        self.out_dir = request.out_dir
        self.state = TaskState()
        self.setObjectName("xlagui-comparison")

    def request_stop(self, *, closing: bool = False) -> None:
        """Ask the comparison to stop: every worker is cancelled at once, the runs after them
        are skipped. `closing`: because the app is closing, so the run cut short is saved as
        `interrupted` and the runs skipped as `not run` (else both `cancelled`); a Stop followed
        by a close counts as a close. Safe to call from the GUI thread at any time."""
        self.state.request_interruption(CLOSING if closing else "")

    @property
    def stop_requested(self) -> bool:
        return self.state.is_interruption_requested()

    def run(self) -> None:
        try:
            compare.run(self.request, _Relay(self), self.state, report=self.report)
        except (MachineError, Cancelled):
            pass  # the host's refusal was said (`host_failed`); a stop before anything ran
        except Exception as exc:  # the supervision must never take the app down
            self.crashed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())


class _Relay(Watcher):
    """The workflow's observer (`core.compare.ComparisonObserver`), on the supervisor's thread:
    what the window shows becomes the supervisor's queued signals; what it shows otherwise
    (the phases, through the runs' own events; the model and the host, checked before the run
    by their panels) keeps `Watcher`'s nothing."""

    def __init__(self, supervisor: ComparisonSupervisor) -> None:
        self.to = supervisor
        self._copied = -1  # the percent of the dataset copy last said

    def on_answered(self, report: ComparisonReport) -> None:
        self.to.inspecting.emit()  # the answer is final: shown while the why is worked out

    def on_copy_progress(self, done: int, total: int) -> None:
        percent = round(100 * done / total) if total else 100
        target = self.to.request.target
        if percent != self._copied and target is not None:
            self._copied = percent
            self.to.copying.emit(target.host, done, total)

    def on_run_started(self, entry: RunEntry) -> None:
        self.to.run_started.emit(entry.run_id, entry.variant, entry.repeat)

    def on_event(self, entry: RunEntry, event: Event) -> None:
        self.to.event_received.emit(entry.run_id, event)

    def on_round(self, report: ComparisonReport) -> None:
        self.to.measurement_updated.emit(report.comparison)

    def on_run_done(self, entry: RunEntry) -> None:
        self.to.run_done.emit(entry.run_id, entry.status, self.to.report.comparison)

    def on_measured(self, report: ComparisonReport) -> None:
        self.to.measurement_updated.emit(report.comparison)

    def on_host_refused(self, host: str, error: MachineError) -> None:
        self.to.host_failed.emit(host, error_message(error), error_hint(error), error.details)

    def on_preflight(self, preflight: Preflight, final: bool) -> None:
        self.to.preflight.emit(preflight, final)
