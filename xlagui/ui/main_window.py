"""The main window: dataset, settings, the two runs side by side, history, export.

The window owns the long work but does none of it itself: scans run in a thread pool, a
comparison in a `ComparisonSupervisor` thread (whose workers are processes), and the widgets
are touched only here, on the GUI thread, from queued signals.
"""

from __future__ import annotations

import html
import importlib
import logging
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QMimeData, QObject, QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QApplication,
    QCheckBox,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from xlagui.core import exclusions as excl
from xlagui.core.events import ErrorEvent, Event
from xlagui.core.task import TaskState
from xlagui.ui import dialogs
from xlagui.ui.dataset_panel import KIND_WORDS, DatasetPanel
from xlagui.ui.dialogs import DropOverlay, MessageBar
from xlagui.ui.history_panel import HistoryPanel
from xlagui.ui.settings_panel import SettingsPanel
from xlagui.ui.tasks import BackgroundTask, TaskKeeper
from xlagui.ui.theme import VARIANT_TITLES
from xlagui.ui.xla_did_view import XlaDidPanel

# What is only needed once a dataset is opened or a run starts is imported then: the window
# must be on screen as soon as possible (Pillow, the runner and pyqtgraph all take a while).
if TYPE_CHECKING:
    from xlagui.core.compare import RunWorker
    from xlagui.core.report import ComparisonReport
    from xlagui.core.scan import DatasetScan, Problem
    from xlagui.core.stats import Comparison
    from xlagui.ui.runs_view import RunsView
    from xlagui.ui.supervisor import ComparisonSupervisor

Probe = Callable[[], list[dict[str, str]]]
# Which command starts a measuring worker for a run (tests: a fake one); None: the real worker.
MeasureCommand = Callable[[Any], "list[str] | None"]
TAB_DATASET, TAB_RUNS, TAB_HISTORY = 0, 1, 2
RESCAN_DELAY_MS = 600
DEMO_NAME = "demo elephants"  # what `compare.dataset_info` calls the demo set

log = logging.getLogger(__name__)


def classify_drop(mime: QMimeData) -> tuple[Path | None, str]:
    """What a drag carries, in words: (the folder to open, "") or (None, why not)."""
    urls = [u for u in mime.urls()] if mime.hasUrls() else []
    local = [Path(u.toLocalFile()) for u in urls if u.isLocalFile()]
    if not urls:
        return None, "Drop a folder from your file manager here."
    if len(urls) > 1:
        return None, (f"Drop one dataset folder at a time (this is {len(urls)} items). "
                      "Put the class folders inside one folder and drop that.")
    if not local:
        return None, "Only folders on this computer can be opened (this is a web link)."
    path = local[0]
    if path.is_file():
        return None, (f"“{path.name}” is a file. Drop the folder that holds the class "
                      "folders (or the train/ and test/ folders).")
    if not path.is_dir():
        return None, f"“{path}” does not exist (any more)."
    return path, ""


class MainWindow(QMainWindow):
    """xlagui's window.

    Signals:
        dataset_loaded(object DatasetScan): a scan finished and is shown.
        dataset_failed(str message): a folder could not be scanned at all.
        devices_ready(object list): the device probe answered (list of device dicts).
        comparison_started(object ComparisonReport): a comparison began.
        comparison_finished(object ComparisonReport): it ended (finished, stopped or failed);
            the report holds every run that finished.
        report_shown(object ComparisonReport): a saved comparison was reopened.
        exported(object list): report files written (list of Paths).
        first_shown(): the window is on screen for the first time.
    """

    dataset_loaded = Signal(object)
    dataset_failed = Signal(str)
    devices_ready = Signal(object)
    comparison_started = Signal(object)
    comparison_finished = Signal(object)
    report_shown = Signal(object)
    exported = Signal(object)
    first_shown = Signal()

    def __init__(
        self,
        *,
        settings: QSettings | None = None,
        worker: RunWorker | None = None,
        probe: Probe | None = None,
        history_root: Path | None = None,
        preload_plots: bool = True,
        log_folder: Path | None = None,
        measure_command: MeasureCommand | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = settings if settings is not None else QSettings()
        self.worker = worker
        self.measure_command = measure_command  # tests: a fake measuring worker
        self.history_root = history_root
        self.log_folder = log_folder  # None: the user data folder's (core.paths.log_dir)
        self.scan: DatasetScan | None = None
        # The problems whose files the next comparison leaves out (the folder is not changed).
        self.exclusions = excl.Exclusions()
        self.demo = False
        self.report: ComparisonReport | None = None  # what the Runs tab shows, when final
        self.report_folder: Path | None = None
        self.supervisor: ComparisonSupervisor | None = None
        self.devices: list[dict[str, str]] | None = None
        self._scan_task: BackgroundTask | None = None
        self._scan_path: str | None = None
        self._tasks = TaskKeeper()
        self._run_errors: dict[str, ErrorEvent] = {}
        self._close_after_run = False
        self._ask_before_closing = True
        self._shown_once = False
        self._preload_plots = preload_plots
        self._runs_view: RunsView | None = None
        self._probe = probe

        self.setWindowTitle("xlagui")
        self.setAcceptDrops(True)
        self.resize(1440, 900)
        self._build_actions()
        self._build_ui()
        self._build_menus()
        self.drop_overlay = DropOverlay(self._central)
        self._rescan_timer = QTimer(self)
        self._rescan_timer.setSingleShot(True)
        self._rescan_timer.setInterval(RESCAN_DELAY_MS)
        self._rescan_timer.timeout.connect(self._on_rescan_timer_timeout)
        self._restore()
        self._watch_drops(self)
        self._update_actions()
        if probe is None:
            self._on_probe_done([{"id": "cpu", "name": "CPU", "kind": "CPU"}])
        self.history_panel.refresh()

    # -- construction -------------------------------------------------------------------------

    def _icon(self, pixmap: QStyle.StandardPixmap) -> Any:
        return self.style().standardIcon(pixmap)

    def _build_actions(self) -> None:
        sp = QStyle.StandardPixmap

        def action(text: str, slot: Callable[[], Any], keys: list[QKeySequence] | None = None,
                   tip: str = "", icon: Any = None) -> QAction:
            a = QAction(text, self)
            if icon is not None:
                a.setIcon(icon)
            if keys:
                a.setShortcuts(keys)
            if tip:
                a.setStatusTip(tip)
                a.setToolTip(tip + (f" ({keys[0].toString(QKeySequence.SequenceFormat.NativeText)})"
                                    if keys else ""))
            a.triggered.connect(lambda _checked=False: slot())
            self.addAction(a)
            return a

        self.open_action = action("&Open dataset…", self.browse_dataset,
                                  [QKeySequence(QKeySequence.StandardKey.Open)],
                                  "Choose a folder of images", self._icon(sp.SP_DirOpenIcon))
        self.demo_action = action("Open the &demo dataset", self.open_demo, None,
                                  "Drawn African and Asian elephants, made on first use")
        self.export_action = action("&Export report…", self.export_report,
                                    [QKeySequence("Ctrl+E")],
                                    "Write the comparison as PNG, CSV and JSON to a folder",
                                    self._icon(sp.SP_DialogSaveButton))
        quit_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Quit)
        if QKeySequence("Ctrl+Q") not in quit_keys:
            quit_keys.append(QKeySequence("Ctrl+Q"))
        self.quit_action = action("&Quit", self.close, quit_keys, "Close xlagui")
        self.run_action = action("&Run comparison", self.start_comparison,
                                 [QKeySequence("Ctrl+R")],
                                 "Train the baseline and the XLA model, then compare",
                                 self._icon(sp.SP_MediaPlay))
        self.run_one_action = action("Run XLA only", self.start_one_side, None,
                                     "Train only the side the XLA switch selects")
        self.stop_action = action("&Stop", self.stop_run,
                                  [QKeySequence(Qt.Key.Key_Escape), QKeySequence("Ctrl+.")],
                                  "Stop the running comparison", self._icon(sp.SP_MediaStop))
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.demo_action)
        file_menu.addSeparator()
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = bar.addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.run_one_action)
        run_menu.addAction(self.stop_action)
        view_menu = bar.addMenu("&View")
        for i, name in enumerate(("&Dataset", "R&uns", "&History")):
            a = QAction(name, self)
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            a.triggered.connect(lambda _checked=False, i=i: self.tabs.setCurrentIndex(i))
            view_menu.addAction(a)
        help_menu = bar.addMenu("&Help")
        self.show_logs_action = QAction("Show &log folder", self)
        self.show_logs_action.setStatusTip("Open the folder with xlagui's log files and crash log "
                                           "(attach them to a bug report)")
        self.show_logs_action.triggered.connect(self._on_show_logs_triggered)
        help_menu.addAction(self.show_logs_action)
        help_menu.addSeparator()
        about = QAction("&About xlagui", self)
        about.triggered.connect(self._on_about_triggered)
        help_menu.addAction(about)

        tools = self.addToolBar("Main")
        tools.setObjectName("MainToolBar")
        tools.setMovable(False)
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tools.addAction(self.open_action)
        tools.addSeparator()
        tools.addAction(self.run_action)
        tools.addAction(self.stop_action)
        tools.addSeparator()
        tools.addAction(self.export_action)

    def _build_ui(self) -> None:
        central = self._central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(8, 6, 8, 4)
        outer.setSpacing(6)
        self.message_bar = MessageBar()
        self.message_bar.link_activated.connect(self._on_message_link_activated)
        outer.addWidget(self.message_bar)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        outer.addWidget(self.splitter, 1)

        # The sidebar: settings (scrollable) above the run buttons (always visible).
        side = QWidget()
        sv = QVBoxLayout(side)
        sv.setContentsMargins(0, 0, 4, 0)
        sv.setSpacing(8)
        self.settings_panel = SettingsPanel()
        scroll = QScrollArea()
        scroll.setWidget(self.settings_panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        sv.addWidget(scroll, 1)
        self.run_button = QPushButton("Run comparison")
        self.run_button.setObjectName("Primary")
        self.run_button.setIcon(self._icon(QStyle.StandardPixmap.SP_MediaPlay))
        self.run_button.setToolTip("Baseline and XLA, one after the other (Ctrl+R)")
        # Buttons get slots with no parameter `clicked(bool)` could fill: passing it on once
        # reached start_comparison's `only` as False and crashed the main button.
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.run_one_button = QPushButton("Run XLA only")
        self.run_one_button.clicked.connect(self._on_run_one_button_clicked)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setIcon(self._icon(QStyle.StandardPixmap.SP_MediaStop))
        self.stop_button.setToolTip("Stop the running comparison (Esc)")
        self.stop_button.clicked.connect(self._on_stop_button_clicked)
        self.run_hint = QLabel()
        self.run_hint.setObjectName("Caption")
        self.run_hint.setWordWrap(True)
        self.speed_only = QCheckBox("Measure speed only")
        self.speed_only.setToolTip(
            "Only the interleaved speed measurement (a few minutes), without the training runs "
            "that give total wall time, accuracy and the loss curves"
        )
        self.speed_only.toggled.connect(self._on_speed_only_toggled)
        for w in (self.run_button, self.speed_only, self.run_one_button, self.stop_button,
                  self.run_hint):
            sv.addWidget(w)
        side.setMinimumWidth(300)
        side.setMaximumWidth(460)
        self.splitter.addWidget(side)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.dataset_panel = DatasetPanel()
        self.dataset_panel.browse_requested.connect(self.browse_dataset)
        self.dataset_panel.demo_requested.connect(self.open_demo)
        self.dataset_panel.rescan_requested.connect(self._on_dataset_rescan_requested)
        self.dataset_panel.cancel_scan_requested.connect(self._on_dataset_cancel_requested)
        self.dataset_panel.leave_out_requested.connect(self._on_dataset_leave_out_requested)
        self.tabs.addTab(self.dataset_panel, "Dataset")
        self._runs_stack = QStackedWidget()
        waiting = QLabel("Preparing the plots…")
        waiting.setObjectName("Placeholder")
        waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._runs_stack.addWidget(waiting)
        self.tabs.addTab(self._runs_stack, "Runs")
        self.history_panel = HistoryPanel(self.history_root)
        self.history_panel.open_requested.connect(self.open_history_item)
        self.tabs.addTab(self.history_panel, "History")
        self.xla_did_panel = XlaDidPanel(history_root=self.history_root)
        self.tabs.addTab(self.xla_did_panel, "What XLA did")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 1100])
        self.setCentralWidget(central)

        self.settings_panel.changed.connect(self._on_settings_changed)
        self.settings_panel.xla_toggled.connect(self._on_settings_xla_toggled)
        self.settings_panel.holdout_changed.connect(self._on_settings_split_changed)
        self.settings_panel.seed.valueChanged.connect(self._on_settings_split_changed)
        self.settings_panel.put_back_requested.connect(self._on_settings_put_back_requested)

        self.device_label = QLabel("Devices: looking…")
        self.device_label.setObjectName("Caption")
        self.statusBar().addPermanentWidget(self.device_label)

    @property
    def runs_view(self) -> RunsView:
        """The Runs tab's content, built on first use (it needs pyqtgraph)."""
        if self._runs_view is None:
            from xlagui.ui.runs_view import RunsView

            self._runs_view = RunsView()
            self._runs_stack.addWidget(self._runs_view)
            self._runs_stack.setCurrentWidget(self._runs_view)
            self._watch_drops(self._runs_view)
        return self._runs_view

    def _watch_drops(self, root: QWidget) -> None:
        """A folder can be dropped anywhere: children that take drops themselves (a spin box
        takes text, a plot takes anything) hand folder drags to the window."""
        for child in root.findChildren(QWidget):
            if child.acceptDrops() and child is not self:
                child.installEventFilter(self)
                if isinstance(child, QAbstractScrollArea):
                    child.viewport().installEventFilter(self)

    # -- showing and closing --------------------------------------------------------------

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._shown_once:
            return
        self._shown_once = True
        self.first_shown.emit()
        if self._probe is not None:
            probe = self._probe
            task = BackgroundTask(lambda _state: probe())
            task.done.connect(self._on_probe_done)
            task.failed.connect(lambda *_: self._on_probe_done(None))
            # The probe waits seconds for TensorFlow to start in a helper process and cannot
            # be interrupted: a daemon thread, so quitting never waits for it.
            self._tasks.keep(task).start(thread=True, daemon=True)
        if self._preload_plots and self._runs_view is None:
            # Import pyqtgraph off the GUI thread while the user looks at the window. Not a
            # daemon: an interpreter shutting down under an import crashes.
            task = BackgroundTask(lambda _state: importlib.import_module("xlagui.ui.runs_view"))
            task.done.connect(lambda _module: self.runs_view)
            task.failed.connect(lambda *_: self.runs_view)
            self._tasks.keep(task).start(thread=True)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.is_running():
            event.ignore()
            if self._close_after_run:
                return
            if self._ask_before_closing and not dialogs.ask(
                self,
                "Stop the comparison?",
                "A comparison is running. Closing xlagui stops it; the runs that already "
                "finished stay in the history.",
                "Stop and close",
                "Keep running",
            ):
                return
            self._close_after_run = True
            self.stop_run()
            self.statusBar().showMessage("Stopping the run before closing…")
            log.info("closing: stopping the running comparison first")
            return
        log.info("window closed")
        self._save()
        if self._scan_task is not None:
            self._scan_task.cancel()
        self._tasks.cancel_all()
        self.dataset_panel.shutdown()
        event.accept()

    def close_without_asking(self) -> None:
        """Close as Quit does, but stop a running comparison without asking first (Ctrl+C in
        the terminal that started the window): the window closes once its workers ended."""
        self._ask_before_closing = False
        self.close()

    def is_running(self) -> bool:
        return self.supervisor is not None and not self.supervisor.isFinished()

    def _save(self) -> None:
        s = self.store
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        s.setValue("window/splitter", self.splitter.saveState())
        s.setValue("window/tab", self.tabs.currentIndex())
        self.settings_panel.save(s)
        s.sync()

    def _restore(self) -> None:
        s = self.store
        geometry = s.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        state = s.value("window/state")
        if state is not None:
            self.restoreState(state)
        splitter = s.value("window/splitter")
        if splitter is not None:
            self.splitter.restoreState(splitter)
        self.settings_panel.restore(s)
        self.speed_only.setChecked(str(s.value("run/speed_only", "false")).lower() == "true")
        if self.settings_panel.restore_problems:
            self.message_bar.show_message(
                "warning", html.escape(" ".join(self.settings_panel.restore_problems))
            )

    # -- dataset ----------------------------------------------------------------------------

    def browse_dataset(self) -> None:
        start = str(self.store.value("last_folder", "") or Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Choose a dataset folder", start)
        if folder:
            self.open_dataset(folder)

    def open_demo(self) -> None:
        self.message_bar.show_message(
            "info", "Preparing the demo dataset (the first time takes a few seconds)…")
        self.tabs.setCurrentIndex(TAB_DATASET)
        self.dataset_panel.show_scanning("the demo dataset")

        def make(_state: TaskState) -> Path:
            from xlagui.core.demo import ensure_demo_dataset

            return ensure_demo_dataset(seed=0)

        task = BackgroundTask(make)
        task.done.connect(lambda path: self.open_dataset(path, demo=True))
        task.failed.connect(self._on_demo_failed)
        # Drawing the set cannot be interrupted (it publishes atomically when done); quitting
        # meanwhile waits for it, as the interpreter must not shut down under it.
        self._tasks.keep(task).start(thread=True)

    def open_dataset(self, path: str | os.PathLike[str], *, demo: bool = False) -> None:
        """Scan `path` in the background and show what it holds."""
        path = str(path)
        if self._scan_task is not None:
            self._scan_task.cancel()
        self._scan_path = path
        self.demo = demo
        self.tabs.setCurrentIndex(TAB_DATASET)
        self.dataset_panel.show_scanning(path)
        self.statusBar().showMessage(f"Scanning {path}…")
        holdout = self.settings_panel.holdout.value()
        seed = self.settings_panel.seed.value()

        def scan(state: TaskState) -> DatasetScan:
            from xlagui.core.scan import scan_dataset

            return scan_dataset(path, holdout_percent=holdout, seed=seed, state=state)

        task = BackgroundTask(scan)
        task.progress.connect(lambda f, t=task: self._on_scan_progress(t, f))
        task.done.connect(lambda scan, t=task: self._on_scan_done(t, scan))
        task.failed.connect(lambda exc, tb, t=task: self._on_scan_failed(t, exc, tb))
        task.cancelled.connect(lambda t=task: self._on_scan_cancelled(t))
        self._scan_task = task
        self._tasks.keep(task).start()
        self._update_actions()

    def is_scanning(self) -> bool:
        return self._scan_task is not None

    def dataset_name(self) -> str:
        if self.scan is None:
            return ""
        return DEMO_NAME if self.demo else Path(self.scan.root).name

    def _on_scan_progress(self, task: BackgroundTask, fraction: float) -> None:
        if task is self._scan_task:
            self.dataset_panel.set_progress(fraction)

    def _on_scan_done(self, task: BackgroundTask, scan: DatasetScan) -> None:
        if task is not self._scan_task:
            return
        self._scan_task = None
        same_folder = self.scan is not None and self.scan.root == scan.root
        self.scan = scan
        log.info("scanned %s: %d usable files, %d problems, %.2f s", scan.root, len(scan.files),
                 len(scan.problems), scan.seconds)
        self.store.setValue("last_folder", str(Path(scan.root).parent))
        self.dataset_panel.show_scan(scan, self.dataset_name())
        # A rescan of the same folder keeps what was left out, as far as the problems remain.
        self._set_exclusions(self.exclusions.restricted_to(scan) if same_folder
                             else excl.Exclusions())
        self.setWindowTitle(f"xlagui — {self.dataset_name()}")
        self.statusBar().showMessage(
            f"Scanned {scan.scanned_files:,} files in {scan.seconds:.1f} s", 5000)
        if not scan.ok:
            first = scan.errors[0].message
            self.message_bar.show_message(
                "error", f"<b>This folder cannot be trained on.</b> {html.escape(first)}")
        elif scan.warnings:
            n = len(scan.warnings)
            self.message_bar.show_message(
                "warning", f"Loaded <b>{html.escape(self.dataset_name())}</b> with {n} "
                f"warning{'s' if n != 1 else ''}: see Problems on the Dataset tab.", 8000)
        else:
            self.message_bar.show_message(
                "ok", f"Loaded <b>{html.escape(self.dataset_name())}</b>: "
                f"{len(scan.files):,} images in {len(scan.class_names)} classes.", 5000)
        self._update_actions()
        self.dataset_loaded.emit(scan)

    def _on_scan_failed(self, task: BackgroundTask, exc: BaseException, details: str) -> None:
        if task is not self._scan_task:
            return
        self._scan_task = None
        self.dataset_panel.scan_ended()
        from xlagui.core.scan import DatasetError

        if isinstance(exc, DatasetError):
            message = str(exc)
            self.message_bar.show_message("error", f"<b>Cannot open this folder.</b> "
                                                   f"{html.escape(message)}")
        else:
            message = f"{type(exc).__name__}: {exc}"
            log.error("the scan of %s failed:\n%s", self._scan_path, details)
            dialogs.show_error(self, "Scan failed", f"The scan stopped unexpectedly: {message}",
                               "The folder was not changed. Try again, or choose another "
                               "folder.", details)
        self._restore_dataset_header()
        self._update_actions()
        self.dataset_failed.emit(message)

    def _on_scan_cancelled(self, task: BackgroundTask) -> None:
        if task is self._scan_task:
            self._scan_task = None
            self.dataset_panel.scan_ended()
            self._restore_dataset_header()
            self.statusBar().showMessage("Scan cancelled", 3000)
            self._update_actions()

    def _restore_dataset_header(self) -> None:
        if self.scan is not None:
            self.dataset_panel.show_scan(self.scan, self.dataset_name())
        else:
            self.dataset_panel.show_empty()

    def _on_demo_failed(self, exc: BaseException, details: str) -> None:
        self.dataset_panel.scan_ended()
        self._restore_dataset_header()
        dialogs.show_error(self, "Demo dataset", f"The demo dataset could not be made: {exc}",
                           "Check that the cache folder is writable and has free space.",
                           details)

    def _on_dataset_rescan_requested(self) -> None:
        if self.scan is not None:
            self.open_dataset(self.scan.root, demo=self.demo)

    def _on_dataset_cancel_requested(self) -> None:
        if self._scan_task is not None:
            self._scan_task.cancel()

    def _on_dataset_leave_out_requested(self, problems: list[Problem], leave_out: bool) -> None:
        if self.scan is None:
            return
        chosen = (self.exclusions.leave_out(*problems) if leave_out
                  else self.exclusions.put_back(*problems))
        self._set_exclusions(chosen)
        left = len(chosen.files(self.scan))
        log.info("%s %d problem(s); %d file(s) left out now", "left out" if leave_out
                 else "put back", len(problems), left)
        self.statusBar().showMessage(
            (excl.describe(left) if left else "Every file is back in the comparison")
            + "; the dataset folder is not changed", 6000)

    def _on_settings_put_back_requested(self) -> None:
        self._set_exclusions(excl.Exclusions())
        self.statusBar().showMessage("Every file is back in the comparison", 5000)

    def _set_exclusions(self, exclusions: excl.Exclusions) -> None:
        """Use `exclusions` for the next comparison and show it everywhere it matters."""
        self.exclusions = exclusions
        scan = self.scan
        self.dataset_panel.set_exclusions(exclusions)
        if scan is None:
            self.settings_panel.set_left_out(0, "")
            self._update_actions()
            return
        trained = exclusions.apply(scan)
        self.settings_panel.set_dataset(len(trained.files_for("train")),
                                        auto_split=scan.layout != "split")
        kinds: dict[str, int] = {}
        for p in exclusions.problems(scan):
            kinds[p.kind] = kinds.get(p.kind, 0) + 1
        detail = ", ".join(f"{n} × {KIND_WORDS.get(k, k)}" for k, n in kinds.items())
        self.settings_panel.set_left_out(len(exclusions.files(scan)), detail)
        self._update_actions()

    def _on_settings_split_changed(self, _value: int) -> None:
        # Seed and held-out share choose the test files of a folder without a test folder.
        if self.scan is not None and self.scan.layout != "split":
            self._rescan_timer.start()
        self._update_actions()

    def _on_rescan_timer_timeout(self) -> None:
        if self.scan is not None and not self.is_running():
            self.open_dataset(self.scan.root, demo=self.demo)

    # -- drag and drop --------------------------------------------------------------------------

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop,
                    QEvent.Type.DragLeave) and obj is not self and isinstance(obj, QWidget) \
                and (kind == QEvent.Type.DragLeave
                     or event.mimeData().hasUrls()):  # type: ignore[attr-defined]
            if kind == QEvent.Type.DragEnter:
                self.dragEnterEvent(event)  # type: ignore[arg-type]
            elif kind == QEvent.Type.DragMove:
                event.acceptProposedAction()  # type: ignore[attr-defined]
            elif kind == QEvent.Type.Drop:
                self.dropEvent(event)  # type: ignore[arg-type]
            else:
                self.drop_overlay.hide()
            return True
        return super().eventFilter(obj, event)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        mime = event.mimeData()
        if not mime.hasUrls():
            event.ignore()
            return
        folder, why = classify_drop(mime)
        if folder is not None:
            self.drop_overlay.show_for(True, f"Drop to open “{folder.name}”")
        else:
            self.drop_overlay.show_for(False, why)
        event.acceptProposedAction()

    def dragMoveEvent(self, event: Any) -> None:
        event.acceptProposedAction()

    def dragLeaveEvent(self, event: Any) -> None:
        self.drop_overlay.hide()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drop_overlay.hide()
        folder, why = classify_drop(event.mimeData())
        event.acceptProposedAction()
        if folder is None:
            self.message_bar.show_message("error", html.escape(why))
            return
        self.open_dataset(folder)

    # -- running ------------------------------------------------------------------------------

    def cannot_run_reason(self) -> str:
        """Why a comparison cannot start now, in words; "" when it can."""
        if self.is_running():
            return "A comparison is running."
        if self.scan is None:
            return "Load a dataset first: drop a folder here, or use Browse…"
        if self._scan_task is not None or self._rescan_timer.isActive():
            return "Scanning the dataset…"
        if not self.scan.ok:
            return "The dataset has errors (see Problems)."
        if self.exclusions:
            why = excl.empty_after(self.exclusions.apply(self.scan))
            if why:
                return why[0].upper() + why[1:] + ": put some back (Dataset tab)."
        errors = self.settings_panel.errors()
        if errors:
            return errors[0]
        config = self.settings_panel.config()
        if config is None:
            return "Check the settings marked in red."
        if self.scan.layout != "split" and (
            self.scan.holdout_percent != config.holdout_percent or self.scan.seed != config.seed
        ):
            return "Scanning the dataset…"
        return ""

    def start_one_side(self) -> bool:
        side = "xla" if self.settings_panel.xla.isChecked() else "baseline"
        return self.start_comparison(only={side})

    def start_comparison(self, *, only: set[str] | None = None) -> bool:
        """Start a comparison (or one side of it); False, with the reason shown, if it can't.

        `only` is keyword-only so that no signal's argument can ever land in it."""
        reason = self.cannot_run_reason()
        config = self.settings_panel.config()
        if reason or config is None or self.scan is None:
            self.message_bar.show_message("warning", html.escape(reason or "Cannot run now."),
                                          6000)
            return False
        from xlagui.core import history
        from xlagui.core.compare import new_report
        from xlagui.ui.supervisor import ComparisonSupervisor

        if only is None:
            config = config.replace(quick=self.speed_only.isChecked())
        report = new_report(self.scan, config, demo=self.demo, exclusions=self.exclusions)
        try:
            folder = history.new_folder(self.history_root)
        except OSError as exc:
            log.error("cannot make a history folder: %s", exc)
            dialogs.show_error(self, "Cannot start", f"There is no room for the results: {exc}",
                               "xlagui saves every comparison in its data folder; check that "
                               "it is writable and has free space.", traceback.format_exc())
            return False
        self._run_errors = {}
        view = self.runs_view
        view.begin(report, only=only, folder=folder)
        supervisor = ComparisonSupervisor(report, self.scan, folder, only=only,
                                          worker=self.worker,
                                          measure_command=self.measure_command, parent=self)
        supervisor.measurement_updated.connect(self._on_supervisor_measurement_updated)
        supervisor.run_started.connect(self._on_supervisor_run_started)
        supervisor.event_received.connect(self._on_supervisor_event_received)
        supervisor.run_done.connect(self._on_supervisor_run_done)
        supervisor.crashed.connect(self._on_supervisor_crashed)
        supervisor.finished.connect(self._on_supervisor_finished)
        self.supervisor = supervisor
        self.report = None
        self.report_folder = folder
        supervisor.start()
        self.tabs.setCurrentIndex(TAB_RUNS)
        # The status bar, not the message bar: a bar appearing or going away mid-run would lay
        # out (and repaint) every plot again.
        self.message_bar.hide()
        what = "comparison" if only is None else f"{VARIANT_TITLES[next(iter(only))]} run"
        self.statusBar().showMessage(f"Running the {what}… each run is saved as it finishes")
        log.info("started the %s on %s in %s (%s)", what, self.scan.root, folder,
                 config.to_dict())
        self._update_actions()
        self.comparison_started.emit(report)
        return True

    def stop_run(self) -> None:
        if not self.is_running() or self.supervisor is None:
            return
        if not self.supervisor.stop_requested:
            log.info("stop requested")
            self.supervisor.request_stop()
            self.runs_view.mark_stopping()
            self.statusBar().showMessage("Stopping…")
        self._update_actions()

    def _on_supervisor_run_started(self, run_id: str, variant: str, repeat: int) -> None:
        self.runs_view.on_run_started(run_id, variant, repeat)

    def _on_supervisor_measurement_updated(self, comparison: Comparison | None) -> None:
        self.runs_view.on_measurement(comparison)

    def _on_speed_only_toggled(self, on: bool) -> None:
        self.store.setValue("run/speed_only", on)
        self._update_actions()

    def _on_supervisor_event_received(self, run_id: str, event: Event) -> None:
        if isinstance(event, ErrorEvent):
            self._run_errors[run_id] = event
        self.runs_view.on_event(run_id, event)

    def _on_supervisor_run_done(self, run_id: str, status: str,
                                comparison: Comparison | None) -> None:
        self.runs_view.on_run_done(run_id, status, comparison)
        log.info("run %s ended: %s", run_id, status)
        if status == "error":
            report = self.supervisor.report if self.supervisor is not None else None
            entry = report.entry(run_id) if report is not None else None
            variant = {"baseline": "baseline", "xla": "XLA"}.get(
                entry.variant if entry is not None else "xla",
                entry.variant if entry is not None else "XLA",
            )
            err = self._run_errors.get(run_id)
            if err is not None:
                log.error("run %s failed: %s\n%s", run_id, err.message, err.details)
                dialogs.show_error(self, f"The {variant} run failed", err.message, err.hint,
                                   err.details)
            else:
                dialogs.show_error(self, f"The {variant} run failed",
                                   "the run ended without saying why", "See its worker.log.")

    def _on_supervisor_crashed(self, message: str, details: str) -> None:
        log.error("the comparison's supervision failed: %s\n%s", message, details)
        dialogs.show_error(self, "The comparison stopped unexpectedly", message,
                           "Runs that finished before this are kept in the history.", details)

    def _on_supervisor_finished(self) -> None:
        supervisor = self.supervisor
        if supervisor is None:
            return
        report = supervisor.report
        stopped = supervisor.stop_requested
        self.supervisor = None
        supervisor.deleteLater()
        self.report = report
        self.runs_view.finish(report)
        self.xla_did_panel.show_report(report, supervisor.out_dir)
        self.history_panel.refresh(select=supervisor.out_dir)
        c = report.comparison
        if stopped:
            self.message_bar.show_message("warning", "Stopped. Runs that finished before the "
                                                     "stop are saved in the history.", 8000)
        elif c is not None and (
            c.interleaved is not None
            or (c.runs_compared.get("baseline") and c.runs_compared.get("xla"))
        ):
            first = c.verdict.split(". ")[0].rstrip(".") + "."
            self.message_bar.show_message(
                "ok" if c.valid else "error",
                f"<b>Comparison finished.</b> {html.escape(first)} The details are below.",
                15000)
        else:
            done = sum(1 for r in report.runs if r.status == "finished")
            self.message_bar.show_message("info", f"Done: {done} run{'s' if done != 1 else ''} "
                                                  "finished.", 6000)
        self.statusBar().showMessage("Comparison saved in the history", 5000)
        log.info("comparison ended (%s), saved in %s", "stopped" if stopped else "done",
                 supervisor.out_dir)
        self._update_actions()
        self.comparison_finished.emit(report)
        if self._close_after_run:
            self._close_after_run = False
            QTimer.singleShot(0, self.close)

    # -- history and export ---------------------------------------------------------------------

    def open_history_item(self, folder: Path) -> bool:
        if self.is_running():
            self.message_bar.show_message(
                "warning", "A comparison is running: reopen saved ones when it has finished.",
                6000)
            return False
        from xlagui.core import history

        try:
            report = history.load(Path(folder))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("cannot reopen %s: %s", folder, exc)
            dialogs.show_error(self, "Cannot reopen", f"This comparison cannot be read: {exc}",
                               "The file may come from another version of xlagui or be "
                               "damaged.", traceback.format_exc())
            return False
        self.runs_view.show_report(report, Path(folder))
        self.xla_did_panel.show_report(report, Path(folder))
        self.report = report
        self.report_folder = Path(folder)
        self.tabs.setCurrentIndex(TAB_RUNS)
        self._update_actions()
        self.report_shown.emit(report)
        return True

    def export_report(self, folder: Path | None = None) -> list[Path] | None:
        """Write the shown comparison as PNG, CSV and JSON into `folder` (asked if None).

        All or nothing: if one file cannot be written, the others of this export are removed
        and the reason is shown.
        """
        report = self.report
        if report is None:
            self.message_bar.show_message("warning", "Nothing to export yet: run a comparison "
                                                     "or reopen one from the history.", 6000)
            return None
        if folder is None:
            start = str(self.store.value("export_folder", "") or Path.home())
            chosen = QFileDialog.getExistingDirectory(self, "Export the report to", start)
            if not chosen:
                return None
            folder = Path(chosen)
        from xlagui.core import export
        from xlagui.ui.report_png import render_report_png

        stem = export_stem(report, folder)
        targets = [folder / f"{stem}.png", folder / f"{stem}.csv", folder / f"{stem}.json"]
        written: list[Path] = []
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            written.append(render_report_png(report, targets[0]))
            written.append(export.write_csv(report, targets[1]))
            written.append(export.write_json(report, targets[2]))
        except OSError as exc:
            for path in written:
                path.unlink(missing_ok=True)
            reason = exc.strerror or str(exc)
            log.warning("export to %s failed: %s", folder, reason)
            dialogs.show_error(
                self, "Export failed", f"The report could not be written to {folder}: {reason}",
                "Nothing was left behind. Choose a folder you can write to, with free space.",
                traceback.format_exc())
            return None
        finally:
            QApplication.restoreOverrideCursor()
        self.store.setValue("export_folder", str(folder))
        log.info("exported %s", ", ".join(str(p) for p in written))
        url = QUrl.fromLocalFile(str(folder)).toString()
        self.message_bar.show_message(
            "ok", f"Exported {html.escape(stem)}.png, .csv and .json to "
            f"<a href='{url}'>{html.escape(str(folder))}</a>", 10000)
        self.exported.emit(written)
        return written

    # -- state of the controls ----------------------------------------------------------------

    def _update_actions(self) -> None:
        running = self.is_running()
        reason = self.cannot_run_reason()
        can_run = not reason
        self.run_action.setEnabled(can_run)
        self.run_one_action.setEnabled(can_run)
        self.run_button.setEnabled(can_run)
        self.run_one_button.setEnabled(can_run)
        stopping = running and self.supervisor is not None and self.supervisor.stop_requested
        self.stop_action.setEnabled(running and not stopping)
        self.stop_button.setEnabled(running and not stopping)
        self.stop_button.setText("Stopping…" if stopping else "Stop")
        self.export_action.setEnabled(self.report is not None and not running)
        self.open_action.setEnabled(True)
        side = "XLA" if self.settings_panel.xla.isChecked() else "baseline"
        self.run_one_button.setText(f"Run {side} only")
        self.run_one_action.setText(f"Run {side} only")
        self.run_hint.setText(reason if not running else
                              ("Stopping…" if stopping else "Running — Esc stops it."))

    def _on_run_button_clicked(self) -> None:
        self.start_comparison()

    def _on_run_one_button_clicked(self) -> None:
        self.start_one_side()

    def _on_stop_button_clicked(self) -> None:
        self.stop_run()

    def _on_settings_changed(self) -> None:
        self._update_actions()

    def _on_settings_xla_toggled(self, _on: bool) -> None:
        self._update_actions()

    def _on_probe_done(self, devices: list[dict[str, str]] | None) -> None:
        found = devices or [{"id": "cpu", "name": "CPU", "kind": "CPU"}]
        self.devices = found
        self.settings_panel.set_devices(found)
        gpus = [d for d in found if d.get("kind") == "GPU" and d.get("id") != "all"]
        self.device_label.setText("Devices: CPU" + (f" + {len(gpus)} GPU" if gpus
                                                    else " (no GPU found)"))
        self._update_actions()
        self.devices_ready.emit(found)

    def _on_tabs_current_changed(self, index: int) -> None:
        if index == TAB_RUNS:
            self.runs_view  # noqa: B018 (builds the plots if the preload has not yet)

    def _on_message_link_activated(self, link: str) -> None:
        QDesktopServices.openUrl(QUrl(link))

    def _on_show_logs_triggered(self) -> None:
        from xlagui.core import paths

        folder = self.log_folder or paths.log_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.message_bar.show_message(
                "error", html.escape(f"The log folder {folder} cannot be made: {exc}"), 8000)
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.message_bar.show_message(
                "info", f"The log files are in {html.escape(str(folder))}", 10000)

    def _on_about_triggered(self) -> None:
        from xlagui import __version__

        QMessageBox.about(
            self, "About xlagui",
            f"<b>xlagui {__version__}</b><p>Does XLA make my TensorFlow model train faster, "
            "by how much, and at what cost? xlagui trains the same CNN with and without XLA "
            "on your images and compares them.</p>")


def export_stem(report: ComparisonReport, folder: Path) -> str:
    """A file name stem for an export that names nothing already in `folder`."""
    name = str(report.dataset.get("name") or "dataset")
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name).strip("-")
    stamp = report.created[:19].replace(":", "").replace("-", "").replace("T", "-")
    stem = f"xlagui-{safe or 'dataset'}-{stamp}"
    candidate, n = stem, 2
    while any((folder / f"{candidate}{ext}").exists() for ext in (".png", ".csv", ".json")):
        candidate = f"{stem}-{n}"
        n += 1
    return candidate
