"""The window's comparison side: one comparison at a time, its results, reopening, export.

A comparison runs in a `ComparisonSupervisor` thread (whose workers are processes); its queued
signals arrive here, on the GUI thread, and are shown on the Runs and "What XLA did" tabs.
"""

from __future__ import annotations

import dataclasses
import html
import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QSettings, Qt, QUrl, Signal
from PySide6.QtWidgets import QApplication, QFileDialog, QWidget

from xlagui.core.protocol.events import ErrorEvent, Event
from xlagui.core.protocol.identity import Role, RunStatus
from xlagui.present.levels import Level
from xlagui.ui.dataset.dataset_controller import DatasetController
from xlagui.ui.history.history_panel import HistoryPanel
from xlagui.ui.runs.machine_look import MachineLookGate
from xlagui.ui.runs.runs_tab import RunsTab
from xlagui.ui.settings.settings_panel import SettingsPanel
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.theme import VARIANT_TITLES
from xlagui.ui.shared.widgets import parent_window
from xlagui.ui.why.why_view import WhyPanel
from xlagui.ui.xla_did.xla_did_view import XlaDidPanel

if TYPE_CHECKING:
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.compare import ComparisonRequest, RunWorker
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.protocol.config import RunConfig
    from xlagui.core.protocol.interference import Preflight
    from xlagui.core.results.report import ComparisonReport
    from xlagui.ui.runs.supervisor import ComparisonSupervisor

# Which command starts a measuring worker for a run (tests: a fake one); None: the real worker.
MeasureCommand = Callable[[Any], "list[str] | None"]
# How a failed run's variant is named in the dialog's title.
VARIANT_WORDS: dict[str, str] = {Role.BASELINE: "baseline", Role.XLA: "XLA"}

log = logging.getLogger(__name__)


class ComparisonController(QObject):
    """Starts and stops the comparison, shows its runs and results, reopens saved ones and
    exports the one shown.

    Signals:
        started(object ComparisonReport): a comparison began.
        finished(object ComparisonReport): it ended (finished, stopped or failed); the report
            holds every run that finished.
        report_shown(object ComparisonReport): a saved comparison was reopened.
        exported(object list): report files written (list of Paths).
        state_changed(): running, stopping or the report shown changed.
        message(str level, str html, int timeout_ms): for the window's message bar.
        status(str text, int timeout_ms): for the window's status bar.
    """

    started = Signal(object)
    finished = Signal(object)
    report_shown = Signal(object)
    exported = Signal(object)
    state_changed = Signal()
    message = Signal(str, str, int)
    status = Signal(str, int)

    def __init__(
        self,
        window: QWidget,
        datasets: DatasetController,
        settings: SettingsPanel,
        runs_tab: RunsTab,
        xla_did_panel: XlaDidPanel,
        history_panel: HistoryPanel,
        store: QSettings,
        *,
        worker: RunWorker | None = None,
        measure_command: MeasureCommand | None = None,
        history_root: Path | None = None,
        why: WhyPanel | None = None,
    ) -> None:
        super().__init__(window)
        self._why_panel = why
        if why is not None:  # the partial batch's fix, offered as the setting it is
            why.drop_remainder_asked.connect(lambda: settings.drop_remainder.setChecked(True))
        self._datasets = datasets
        self._settings = settings
        self._runs_tab = runs_tab
        self._xla_did_panel = xla_did_panel
        self._history_panel = history_panel
        self._store = store
        self.worker = worker
        self.measure_command = measure_command  # tests: a fake measuring worker
        self.history_root = history_root
        self.report: ComparisonReport | None = None  # what the Runs tab shows, when final
        self.report_folder: Path | None = None
        self.supervisor: ComparisonSupervisor | None = None
        self._run_variants: dict[str, str] = {}
        self._run_errors: dict[str, ErrorEvent] = {}
        # The look at the machine before a comparison starts (`start`).
        self._look = MachineLookGate(lambda: self._window, self)
        self._look.declined.connect(self._on_look_declined)
        history_panel.open_requested.connect(self.open_history_item)
        datasets.rescan_due.connect(self._on_datasets_rescan_due)

    def is_running(self) -> bool:
        return self.supervisor is not None and not self.supervisor.isFinished()

    @property
    def _window(self) -> QWidget:
        return parent_window(self)

    def is_stopping(self) -> bool:
        return self.is_running() and self.supervisor is not None \
            and self.supervisor.stop_requested

    def cannot_run_reason(self) -> str:
        """Why a comparison cannot start now, in words; "" when it can."""
        scan = self._datasets.scan
        if self.is_running():
            return "A comparison is running."
        if scan is None:
            return "Load a dataset first: drop a folder here, or use Browse…"
        if self._datasets.is_scanning() or self._datasets.is_rescan_due():
            return "Scanning the dataset…"
        if not scan.ok:
            return "The dataset has errors (see Problems)."
        from xlagui.core.compare.inputs import left_out_problem

        why = left_out_problem(scan, self._datasets.exclusions)
        if why:
            return why[0].upper() + why[1:] + ": put some back (Dataset tab)."
        errors = self._settings.errors()
        if errors:
            return errors[0]
        model_problem = self._settings.model_panel.problem()
        if model_problem:
            return model_problem
        machine_problem = self._settings.machine_panel.problem()
        if machine_problem:
            return machine_problem
        config = self._settings.config()
        if config is None:
            return "Check the settings marked in red."
        if scan.layout != "split" and (
            scan.holdout_percent != config.holdout_percent or scan.seed != config.seed
        ):
            return "Scanning the dataset…"
        return ""

    def start(self, *, only: set[Role] | None = None, quick: bool = False) -> bool:
        """Start a comparison (`quick`: the speed measurement only) or one side of it (`only`);
        False, with the reason shown, if it can't.

        A comparison that measures speed on this computer first looks at the machine for
        `PREFLIGHT_SECONDS` (a timer: the window stays live); when something else keeps it
        busy, the user is asked to measure anyway, wait for it to go quiet, or not start.
        True then means the look began (`preflight_pending`)."""
        reason = self.cannot_run_reason()
        config = self._settings.config()
        scan = self._datasets.scan
        if reason or config is None or scan is None:
            self.message.emit(Level.WARNING, html.escape(reason or "Cannot run now."), 6000)
            return False
        if self.preflight_pending:
            return True
        if only is None and self._look.wanted() and self._settings.machine_panel.target() is None:
            self.status.emit("Looking at what else is using the machine before measuring…", 0)
            self._look.look(config.busy_percent,
                            lambda wait: self._begin(only=only, quick=quick, wait_quiet=wait))
            self.state_changed.emit()
            return True
        return self._begin(only=only, quick=quick)

    @property
    def preflight_pending(self) -> bool:
        return self._look.pending

    def _on_look_declined(self) -> None:
        self.status.emit("Not started: the machine is busy.", 8000)
        self.state_changed.emit()

    def _begin(self, *, only: set[Role] | None, quick: bool,
               wait_quiet: float | None = None) -> bool:
        config = self._settings.config()
        scan = self._datasets.scan
        if config is None or scan is None:  # the settings changed during the look
            self.message.emit(Level.WARNING, "Cannot run now.", 6000)
            return False
        from xlagui.core.compare import plan
        from xlagui.core.results import history
        from xlagui.ui.runs.supervisor import ComparisonSupervisor

        if only is None:
            config = config.replace(quick=quick)
        try:
            folder = history.new_folder(self.history_root)
        except OSError as exc:
            log.error("cannot make a history folder: %s", exc)
            dialogs.show_error(self._window, "Cannot start",
                               f"There is no room for the results: {exc}",
                               "xlagui saves every comparison in its data folder; check that "
                               "it is writable and has free space.", traceback.format_exc())
            return False
        request = dataclasses.replace(self._request(scan, config, folder, only),
                                      wait_quiet_seconds=wait_quiet)
        report = plan(request)
        memory = self._settings.model_panel.memory_note(len(report.measure_runs))
        if memory:
            self.message.emit(Level.WARNING, html.escape(memory), 10000)
        self._run_variants = {}
        self._run_errors = {}
        self._runs_tab.view.begin(report, only=only, folder=folder)
        self.supervisor = self._watch(ComparisonSupervisor(request, report, parent=self))
        self.report = None
        self.report_folder = folder
        self.supervisor.start()
        from xlagui.present.run_status import running_status

        what = "comparison" if only is None else f"{VARIANT_TITLES[next(iter(only))]} run"
        target = self._settings.machine_panel.target()
        # The status bar, not the message bar: a bar appearing or going away mid-run would lay
        # out (and repaint) every plot again.
        self.status.emit(running_status(what, host=target.host if target else None,
                                        quick=config.quick and only is None), 0)
        log.info("started the %s on %s in %s (%s)", what, scan.root, folder, config.to_dict())
        self.started.emit(report)
        return True

    def _request(self, scan: DatasetScan, config: RunConfig, folder: Path,
                 only: set[Role] | None) -> ComparisonRequest:
        """What the workflow is asked to run: the settings, the dataset less the files left
        out, the model panel's check, the Machine group's host with what its preflight found."""
        from xlagui.core.compare import ComparisonRequest
        from xlagui.core.files import paths
        from xlagui.present.csv_notes import note_words
        from xlagui.present.markdown import folder_markdown, summary_markdown

        machine = self._settings.machine_panel
        target, host_info = machine.target(), machine.host_info()
        remote = target is not None and host_info is not None
        return ComparisonRequest(
            scan=scan, config=config, out_dir=folder, demo=self._datasets.demo,
            exclusions=self._datasets.exclusions,
            only=frozenset(only) if only is not None else None,
            model_check=self._settings.model_panel.check_for_run(),
            target=target if remote else None, host_info=host_info if remote else None,
            summary_text=summary_markdown, report_text=folder_markdown, csv_notes=note_words,
            worker=self.worker,
            worker_command=self.measure_command,
            history=self.history_root or paths.history_dir())

    def _watch(self, supervisor: ComparisonSupervisor) -> ComparisonSupervisor:
        supervisor.measurement_updated.connect(self._on_supervisor_measurement_updated)
        supervisor.inspecting.connect(self._on_supervisor_inspecting)
        supervisor.run_started.connect(self._on_supervisor_run_started)
        supervisor.event_received.connect(self._on_supervisor_event_received)
        supervisor.run_done.connect(self._on_supervisor_run_done)
        supervisor.crashed.connect(self._on_supervisor_crashed)
        supervisor.copying.connect(self._on_supervisor_copying)
        supervisor.host_failed.connect(self._on_supervisor_host_failed)
        supervisor.preflight.connect(self._on_supervisor_preflight)
        supervisor.finished.connect(self._on_supervisor_finished)
        return supervisor

    def stop(self, *, closing: bool = False) -> None:
        """Stop the running comparison; `closing`: because the window is closing, so the run
        in progress is saved as interrupted and those not started as not run. During the
        look at the machine before a comparison, nothing starts."""
        if self._look.cancel():
            self.status.emit("Not started.", 6000)
            self.state_changed.emit()
            return
        if not self.is_running() or self.supervisor is None:
            return
        if not self.supervisor.stop_requested:
            log.info("stop requested%s", " (closing)" if closing else "")
            self.supervisor.request_stop(closing=closing)
            self._runs_tab.view.mark_stopping()
            self.status.emit("Stopping…", 0)
        elif closing:  # stopping already: what it saves is now an interrupted comparison
            self.supervisor.request_stop(closing=True)
        self.state_changed.emit()

    def _on_datasets_rescan_due(self) -> None:
        if not self.is_running():  # a scan must not change the files under a running comparison
            self._datasets.rescan()

    # -- the supervisor's signals ---------------------------------------------------------------

    def _on_supervisor_run_started(self, run_id: str, variant: str, repeat: int) -> None:
        self._run_variants[run_id] = variant
        self._runs_tab.view.on_run_started(run_id, variant, repeat)

    def _on_supervisor_inspecting(self) -> None:
        report = self.supervisor.report if self.supervisor is not None else None
        if report is not None and report.config.explain:
            self.status.emit("Speed measured. Now why: each side once more, untimed: where each "
                             "step's time goes and whether the numbers stay the same (Esc skips "
                             "it)…", 0)
        else:
            self.status.emit("Speed measured. Compiling once more with XLA's dump on, for “What "
                             "XLA did” (Esc skips it)…", 0)

    def _on_supervisor_measurement_updated(self, comparison: Comparison | None) -> None:
        self._runs_tab.view.on_measurement(comparison)

    def _on_supervisor_event_received(self, run_id: str, event: Event) -> None:
        if isinstance(event, ErrorEvent):
            self._run_errors[run_id] = event
        self._runs_tab.view.on_event(run_id, event)

    def _on_supervisor_run_done(self, run_id: str, status: str,
                                comparison: Comparison | None) -> None:
        ended = RunStatus(status)  # a queued signal brings the status as a plain string
        self._runs_tab.view.on_run_done(run_id, ended, comparison)
        log.info("run %s ended: %s", run_id, ended)
        if ended is not RunStatus.ERROR:
            return
        # The supervisor said which variant this run is when it started it.
        variant = self._run_variants.get(run_id, "")
        title = f"The {VARIANT_WORDS.get(variant, variant or 'training')} run failed"
        err = self._run_errors.get(run_id)
        if err is not None:
            from xlagui.present.errors import error_hint
            from xlagui.present.model_files import error_text

            log.error("run %s failed: %s\n%s", run_id, err.message, err.details)
            dialogs.show_error(self._window, title, error_text(err), error_hint(err), err.details)
        else:
            dialogs.show_error(self._window, title, "the run ended without saying why",
                               "See its worker.log.")

    def _on_supervisor_crashed(self, message: str, details: str) -> None:
        log.error("the comparison's supervision failed: %s\n%s", message, details)
        dialogs.show_error(self._window, "The comparison stopped unexpectedly", message,
                           "Runs that finished before this are kept in the history.", details)

    def _on_supervisor_copying(self, host: str, done: int, total: int) -> None:
        from xlagui.present.format import size_bytes

        self.status.emit(f"Copying the dataset to {host}: {size_bytes(done)} of "
                         f"{size_bytes(total)}", 0)

    def _on_supervisor_preflight(self, preflight: Preflight, final: bool) -> None:
        """While waiting for a quiet machine, the status bar says so; a machine still busy when
        measuring starts is said in the message bar (the answer will say it too)."""
        from xlagui.present.machine_load import preflight_words

        words = preflight_words(preflight, final)
        if not final:
            self.status.emit(words, 0)
        elif preflight.busy:
            self.message.emit(Level.WARNING, html.escape(words), 12000)

    def _on_supervisor_host_failed(self, host: str, message: str, hint: str,
                                   details: str) -> None:
        log.error("the comparison could not run on %s: %s", host, message)
        dialogs.show_error(self._window, f"Cannot measure on {host}", message, hint, details)

    def _on_supervisor_finished(self) -> None:
        supervisor = self.supervisor
        if supervisor is None:
            return
        report = supervisor.report
        stopped = supervisor.stop_requested
        self.supervisor = None
        supervisor.deleteLater()
        self.report = report
        self._runs_tab.view.finish(report)
        self._xla_did_panel.show_report(report, supervisor.out_dir)
        if self._why_panel is not None:
            self._why_panel.show_report(report, supervisor.out_dir)
        self._history_panel.refresh(select=supervisor.out_dir)
        from xlagui.present.verdicts import short_verdict

        c = report.comparison
        if stopped:
            self.message.emit(Level.WARNING, "Stopped. Runs that finished before the stop are "
                                         "saved in the history.", 8000)
        elif c is not None and (
            c.interleaved is not None
            or (c.runs_compared.get(Role.BASELINE) and c.runs_compared.get(Role.XLA))
        ):
            self.message.emit(
                Level.OK if c.valid else Level.ERROR,
                f"<b>Comparison finished.</b> {html.escape(short_verdict(c))} The details are "
                "below.",
                15000)
        else:
            done = sum(1 for r in report.runs if r.status == RunStatus.FINISHED)
            self.message.emit(Level.INFO, f"Done: {done} run{'s' if done != 1 else ''} finished.",
                              6000)
        self.status.emit("Comparison saved in the history", 5000)
        log.info("comparison ended (%s), saved in %s", "stopped" if stopped else "done",
                 supervisor.out_dir)
        self.finished.emit(report)

    # -- history and export ---------------------------------------------------------------------

    def open_history_item(self, folder: Path) -> bool:
        if self.is_running():
            self.message.emit(
                Level.WARNING, "A comparison is running: reopen saved ones when it has finished.",
                6000)
            return False
        from xlagui.core.results import history

        try:
            report = history.load(Path(folder))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("cannot reopen %s: %s", folder, exc)
            dialogs.show_error(self._window, "Cannot reopen",
                               f"This comparison cannot be read: {exc}",
                               "The file may come from another version of xlagui or be "
                               "damaged.", traceback.format_exc())
            return False
        self._runs_tab.view.show_report(report, Path(folder))
        self._xla_did_panel.show_report(report, Path(folder))
        if self._why_panel is not None:
            self._why_panel.show_report(report, Path(folder))
        self.report = report
        self.report_folder = Path(folder)
        self.report_shown.emit(report)
        return True

    def export_report(self, folder: Path | None = None) -> list[Path] | None:
        """Write the shown comparison as PNG, CSV and JSON into `folder` (asked if None).

        All or nothing: if one file cannot be written, the others of this export are removed
        and the reason is shown.
        """
        report = self.report
        if report is None:
            self.message.emit(Level.WARNING, "Nothing to export yet: run a comparison or reopen "
                                         "one from the history.", 6000)
            return None
        if folder is None:
            start = str(self._store.value("export_folder", "") or Path.home())
            chosen = QFileDialog.getExistingDirectory(self._window, "Export the report to",
                                                      start)
            if not chosen:
                return None
            folder = Path(chosen)
        from xlagui.core.results import export
        from xlagui.present.csv_notes import note_words
        from xlagui.present.why_data import why_of
        from xlagui.ui.report_png import render_report_png

        stem = export.export_stem(report, folder)
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            why = why_of(report, self.report_folder)
            written = export.export_report(
                report, folder, lambda r, path: render_report_png(r, path, why), stem,
                words=note_words)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            log.warning("export to %s failed: %s", folder, reason)
            dialogs.show_error(
                self._window, "Export failed",
                f"The report could not be written to {folder}: {reason}",
                "Nothing was left behind. Choose a folder you can write to, with free space.",
                traceback.format_exc())
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self._store.setValue("export_folder", str(folder))
        log.info("exported %s", ", ".join(str(p) for p in written))
        url = QUrl.fromLocalFile(str(folder)).toString()
        self.message.emit(
            Level.OK, f"Exported {html.escape(stem)}.png, .csv and .json to "
            f"<a href='{url}'>{html.escape(str(folder))}</a>", 10000)
        self.exported.emit(written)
        return written

    def copy_markdown(self) -> str | None:
        """Put the shown comparison on the clipboard as Markdown tables
        (`xlagui.present.markdown`, what `xlagui compare` writes to comparison.md), to paste
        into an issue or a pull request; the text, or None when nothing is shown."""
        report = self.report
        if report is None:
            self.message.emit(Level.WARNING, "Nothing to copy yet: run a comparison or reopen one "
                                         "from the history.", 6000)
            return None
        from xlagui.present.markdown import report_markdown
        from xlagui.present.why_data import why_of

        text = report_markdown(report, why_of(report, self.report_folder))
        QApplication.clipboard().setText(text)
        self.message.emit(Level.OK, "Copied the comparison as Markdown: paste it into an issue or "
                                "a pull request.", 6000)
        return text
