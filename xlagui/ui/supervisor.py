"""The QThread that supervises one comparison off the GUI thread: first the interleaved speed
measurement (`compare.run_measurement`), then, unless the comparison is `quick`, the training
runs (`compare.run_comparison`).

The thread only hosts the supervision; the training runs in worker processes started by
`runner.run_worker` (a `worker_process.WorkerProcess`, or whatever `worker` a test injects).
Everything the GUI learns crosses as queued signals, in the order it happened, and the GUI
never touches the report while this runs.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Iterator
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
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.transports import LOCAL, Transport
from xlagui.core.measure.transports import MachineError as RemoteError  # shim (lane W)
from xlagui.core.measure.transports import Target as SshTarget  # shim (lane W)
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.results.report import ComparisonReport
from xlagui.present.hosts import error_hint, error_message
from xlagui.present.markdown import summary_markdown

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan


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
        copying(str host, int done, int total): bytes of the dataset copied to the SSH host so
            far (only when a rounded percent changes).
        host_failed(str host, str message, str hint, str details): the SSH host could not take
            the comparison (a login refused, no room for the dataset); nothing ran.
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

    def __init__(
        self,
        report: ComparisonReport,
        scan: DatasetScan,
        out_dir: Path,
        *,
        only: set[str] | None = None,
        worker: RunWorker | None = None,
        measure_command: Callable[[RunSpec], list[str] | None] | None = None,
        host: tuple[SshTarget, HostInfo] | None = None,
        parent: QObject | None = None,
    ) -> None:
        """`host`: the SSH host every worker runs on, with what its preflight found (the
        Machine group's check); None: this computer."""
        super().__init__(parent)
        self.report, self.scan, self.out_dir = report, scan, out_dir  # what to run, where
        self.only = only
        self.worker = worker
        self.measure_command = measure_command
        self.host = host
        self.state = TaskState()
        self._copied = -1  # the percent of the dataset copy last said
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
            with self._machine() as transport:
                if transport is None:
                    return  # a stop while the dataset was copied, or a host that refused
                if self.only is None and self.report.measure_runs:
                    self._measure(transport)
                    if self.report.config.quick:
                        if self.worker is None:  # a test's fake worker has no XLA to inspect
                            self.inspecting.emit()
                            inspect_after_measurement(self.report, self.scan, self.out_dir,
                                                      self.state, transport=transport)
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
                    transport=transport,
                    tensorboard_text=summary_markdown,
                )
        except Exception as exc:  # the supervision must never take the app down
            self.crashed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())

    @contextlib.contextmanager
    def _machine(self) -> Iterator[Transport | None]:
        """Where the workers run: this computer, or the SSH host with the dataset there
        (copied once, its progress said); None when nothing can run (a stop during the copy,
        or the host refused: `host_failed` says why), every run then marked cancelled."""
        if self.host is None:
            yield LOCAL
            return
        from xlagui.core.measure.transports.ssh.transport import RemoteHost  # shim (lane W)

        target, info = self.host
        try:
            remote = RemoteHost.reopen(target, info)
        except RemoteError as exc:
            self._refused(target, exc)
            yield None
            return
        try:
            try:
                transport = remote.prepare(self.scan, self.report.config, self.out_dir,
                                           self.state, on_progress=self._relay_copy)
            except RemoteError as exc:
                self._refused(target, exc)
                yield None
                return
            except Cancelled:
                for entry in [*self.report.measure_runs, *self.report.runs]:
                    entry.status = "cancelled"
                yield None
                return
            try:
                yield transport
            finally:
                transport.close()
        finally:
            remote.close()

    def _refused(self, target: SshTarget, exc: RemoteError) -> None:
        for entry in [*self.report.measure_runs, *self.report.runs]:
            entry.status = "cancelled"
        self.host_failed.emit(target.host, error_message(exc), error_hint(exc), exc.details)

    def _relay_copy(self, done: int, total: int) -> None:
        percent = round(100 * done / total) if total else 100
        if percent != self._copied:
            self._copied = percent
            assert self.host is not None
            self.copying.emit(self.host[0].host, done, total)

    def _measure(self, transport: Transport) -> None:
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
                transport=transport,
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
