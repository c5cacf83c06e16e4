"""The window's dataset side: scanning a folder (or the demo set) and what is left out.

One scan at a time, owned by a `TaskOwner`: opening another folder (or rescanning after the
held-out share changed) cancels the scan running, whose result then never arrives.
"""

from __future__ import annotations

import html
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, QTimer, Signal
from PySide6.QtWidgets import QWidget

from xlagui.core.data import exclusions as excl
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.identity import Split
from xlagui.core.protocol.task import TaskState
from xlagui.present.exclusions import left_out
from xlagui.present.levels import Level
from xlagui.present.problem_kinds import KIND_WORDS
from xlagui.ui.dataset.dataset_panel import DatasetPanel
from xlagui.ui.settings.settings_panel import SettingsPanel
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.tasks import BackgroundTask, TaskKeeper, TaskOwner
from xlagui.ui.shared.widgets import parent_window

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan, Problem

RESCAN_DELAY_MS = 600

log = logging.getLogger(__name__)


class DatasetController(QObject):
    """Scans folders in the background, keeps the scan shown and the problems the next
    comparison leaves out, and shows both on the Dataset tab and in the settings.

    Signals:
        scanning(): a scan (or the demo set's drawing) began.
        loaded(object DatasetScan): a scan finished and is shown.
        failed(str message): a folder could not be scanned at all.
        rescan_due(): the held-out share or seed settled; whoever knows that no comparison
            runs calls `rescan`.
        state_changed(): what decides whether a comparison can start may have changed.
        message(str level, str html, int timeout_ms): for the window's message bar.
        status(str text, int timeout_ms): for the window's status bar.
    """

    scanning = Signal()
    loaded = Signal(object)
    failed = Signal(str)
    rescan_due = Signal()
    state_changed = Signal()
    message = Signal(str, str, int)
    status = Signal(str, int)

    def __init__(self, window: QWidget, panel: DatasetPanel, settings: SettingsPanel,
                 store: QSettings) -> None:
        super().__init__(window)
        self._panel = panel
        self._settings = settings
        self._store = store
        self.scan: DatasetScan | None = None
        # The problems whose files the next comparison leaves out (the folder is not changed).
        self.exclusions = excl.Exclusions()
        self.demo = False
        self._scan_path: str | None = None
        self._scanner = TaskOwner(self)
        self._scanner.progress.connect(panel.set_progress)
        self._scanner.done.connect(self._on_scanner_done)
        self._scanner.failed.connect(self._on_scanner_failed)
        self._tasks = TaskKeeper()  # drawing the demo set
        self._rescan_timer = QTimer(self)
        self._rescan_timer.setSingleShot(True)
        self._rescan_timer.setInterval(RESCAN_DELAY_MS)
        self._rescan_timer.timeout.connect(self._on_rescan_timer_timeout)
        panel.rescan_requested.connect(self._on_panel_rescan_requested)
        panel.cancel_scan_requested.connect(self._on_panel_cancel_scan_requested)
        panel.leave_out_requested.connect(self._on_panel_leave_out_requested)
        settings.holdout_changed.connect(self._on_settings_split_changed)
        settings.seed.valueChanged.connect(self._on_settings_split_changed)
        settings.put_back_requested.connect(self._on_settings_put_back_requested)

    def is_scanning(self) -> bool:
        return self._scanner.is_running()

    @property
    def _window(self) -> QWidget:
        return parent_window(self)

    def is_rescan_due(self) -> bool:
        """Whether a rescan waits for the held-out share or seed to settle."""
        return self._rescan_timer.isActive()

    def name(self) -> str:
        """The shown dataset's name in the user's words ("" when none)."""
        if self.scan is None:
            return ""
        from xlagui.core.data.demo import dataset_name

        return dataset_name(self.scan.root, self.demo)

    def open_demo(self) -> None:
        self.message.emit(
            Level.INFO, "Preparing the demo dataset (the first time takes a few seconds)…", 0)
        self.scanning.emit()
        self._panel.show_scanning("the demo dataset")

        def make(_state: TaskState) -> Path:
            from xlagui.core.compare.inputs import dataset_folder

            return dataset_folder(None)[0]

        task = BackgroundTask(make)
        task.done.connect(lambda path: self.open(path, demo=True))
        task.failed.connect(self._on_demo_failed)
        # Drawing the set cannot be interrupted (it publishes atomically when done); quitting
        # meanwhile waits for it, as the interpreter must not shut down under it.
        self._tasks.keep(task).start(thread=True)

    def open(self, path: str | os.PathLike[str], *, demo: bool = False) -> None:
        """Scan `path` in the background (cancelling a scan running) and show what it holds."""
        path = str(path)
        self._scan_path = path
        self.demo = demo
        self.scanning.emit()
        self._panel.show_scanning(path)
        self.status.emit(f"Scanning {path}…", 0)
        holdout = self._settings.holdout.value()
        seed = self._settings.seed.value()

        def scan(state: TaskState) -> DatasetScan:
            from xlagui.core.compare.inputs import open_dataset

            return open_dataset(path, holdout_percent=holdout, seed=seed, state=state)

        self._scanner.start(scan)
        self.state_changed.emit()

    def cancel(self) -> None:
        """Stop the scan running, if any, and show what was shown before it."""
        if not self._scanner.is_running():
            return
        self._scanner.cancel()
        self._panel.scan_ended()
        self._restore_panel()
        self.status.emit("Scan cancelled", 3000)
        self.state_changed.emit()

    def shutdown(self) -> None:
        """The window is closing: stop the scan and the thumbnails' decoding."""
        self._scanner.cancel()
        self._tasks.cancel_all()
        self._panel.shutdown()

    # -- scan outcomes ------------------------------------------------------------------------

    def _on_scanner_done(self, scan: DatasetScan) -> None:
        same_folder = self.scan is not None and self.scan.root == scan.root
        self.scan = scan
        log.info("scanned %s: %d usable files, %d problems, %.2f s", scan.root, len(scan.files),
                 len(scan.problems), scan.seconds)
        self._store.setValue("last_folder", str(Path(scan.root).parent))
        name = self.name()
        self._panel.show_scan(scan, name)
        # A rescan of the same folder keeps what was left out, as far as the problems remain.
        self._set_exclusions(self.exclusions.restricted_to(scan) if same_folder
                             else excl.Exclusions())
        self.status.emit(f"Scanned {scan.scanned_files:,} files in {scan.seconds:.1f} s", 5000)
        if not scan.ok:
            from xlagui.present.scan_problems import problem_text

            first = problem_text(scan.errors[0])
            self.message.emit(
                Level.ERROR, f"<b>This folder cannot be trained on.</b> {html.escape(first)}", 0)
        elif scan.warnings:
            n = len(scan.warnings)
            self.message.emit(
                Level.WARNING, f"Loaded <b>{html.escape(name)}</b> with {n} "
                f"warning{'s' if n != 1 else ''}: see Problems on the Dataset tab.", 8000)
        else:
            self.message.emit(
                Level.OK, f"Loaded <b>{html.escape(name)}</b>: "
                f"{len(scan.files):,} images in {len(scan.class_names)} classes.", 5000)
        self.loaded.emit(scan)

    def _on_scanner_failed(self, exc: BaseException, details: str) -> None:
        self._panel.scan_ended()
        if isinstance(exc, ConfigError):  # no dataset folder (`inputs.open_dataset`)
            message = str(exc)
            self.message.emit(
                Level.ERROR, f"<b>Cannot open this folder.</b> {html.escape(message)}", 0)
        else:
            message = f"{type(exc).__name__}: {exc}"
            log.error("the scan of %s failed:\n%s", self._scan_path, details)
            dialogs.show_error(self._window, "Scan failed",
                               f"The scan stopped unexpectedly: {message}",
                               "The folder was not changed. Try again, or choose another "
                               "folder.", details)
        self._restore_panel()
        self.state_changed.emit()
        self.failed.emit(message)

    def _restore_panel(self) -> None:
        if self.scan is not None:
            self._panel.show_scan(self.scan, self.name())
        else:
            self._panel.show_empty()

    def _on_demo_failed(self, exc: BaseException, details: str) -> None:
        self._panel.scan_ended()
        self._restore_panel()
        dialogs.show_error(self._window, "Demo dataset",
                           f"The demo dataset could not be made: {exc}",
                           "Check that the cache folder is writable and has free space.",
                           details)

    # -- what the panels ask for --------------------------------------------------------------

    def _on_panel_rescan_requested(self) -> None:
        self.rescan()

    def _on_panel_cancel_scan_requested(self) -> None:
        self.cancel()

    def _on_panel_leave_out_requested(self, problems: list[Problem], leave_out: bool) -> None:
        if self.scan is None:
            return
        chosen = (self.exclusions.leave_out(*problems) if leave_out
                  else self.exclusions.put_back(*problems))
        self._set_exclusions(chosen)
        left = len(chosen.files(self.scan))
        log.info("%s %d problem(s); %d file(s) left out now", "left out" if leave_out
                 else "put back", len(problems), left)
        self.status.emit(
            (left_out(left) if left else "Every file is back in the comparison")
            + "; the dataset folder is not changed", 6000)

    def _on_settings_put_back_requested(self) -> None:
        self._set_exclusions(excl.Exclusions())
        self.status.emit("Every file is back in the comparison", 5000)

    def _set_exclusions(self, exclusions: excl.Exclusions) -> None:
        """Use `exclusions` for the next comparison and show it everywhere it matters."""
        self.exclusions = exclusions
        scan = self.scan
        self._panel.set_exclusions(exclusions)
        if scan is None:
            self._settings.set_left_out(0, "")
            self.state_changed.emit()
            return
        trained = exclusions.apply(scan)
        self._settings.set_dataset(len(trained.files_for(Split.TRAIN)),
                                   auto_split=scan.layout != "split",
                                   num_classes=len(scan.class_names))
        kinds: dict[str, int] = {}
        for p in exclusions.problems(scan):
            kinds[p.kind] = kinds.get(p.kind, 0) + 1
        detail = ", ".join(f"{n} × {KIND_WORDS.get(k, k)}" for k, n in kinds.items())
        self._settings.set_left_out(len(exclusions.files(scan)), detail)
        self.state_changed.emit()

    def _on_settings_split_changed(self, _value: int) -> None:
        # Seed and held-out share choose the test files of a folder without a test folder.
        if self.scan is not None and self.scan.layout != "split":
            self._rescan_timer.start()
        self.state_changed.emit()

    def _on_rescan_timer_timeout(self) -> None:
        if self.scan is not None:
            self.rescan_due.emit()

    def rescan(self) -> None:
        """Scan the shown folder again (with the held-out share and seed set now)."""
        if self.scan is not None:
            self.open(self.scan.root, demo=self.demo)
