"""The main window: actions, menus, layout, drops and its saved settings.

The long work belongs to two controllers: `DatasetController` (scans, exclusions) and
`ComparisonController` (the comparison's supervisor, results, reopening, export). The window
lays out their panels, routes the user's intent to them and shows what they report.
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QDesktopServices,
    QDragEnterEvent,
    QDragLeaveEvent,
    QDragMoveEvent,
    QDropEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QMainWindow,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.protocol.identity import Role
from xlagui.present.levels import Level
from xlagui.present.sweep_form import CLOSE_QUESTION, SWEEP_RUNNING
from xlagui.ui.dataset.dataset_controller import DatasetController
from xlagui.ui.dataset.dataset_panel import DatasetPanel
from xlagui.ui.history.history_panel import HistoryPanel
from xlagui.ui.runs.comparison_controller import ComparisonController, MeasureCommand
from xlagui.ui.runs.run_sidebar import RunSidebar
from xlagui.ui.runs.runs_tab import RunsTab
from xlagui.ui.settings.machine_panel import HostChecker
from xlagui.ui.settings.model_panel import ModelChecker
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.dialogs import DropOverlay, MessageBar
from xlagui.ui.shared.tasks import BackgroundTask, TaskKeeper
from xlagui.ui.sweep.sweep_tab import SweepTab
from xlagui.ui.why.why_view import WhyPanel
from xlagui.ui.window import session
from xlagui.ui.window.actions import Commands, WindowActions
from xlagui.ui.window.drops import FolderDrops
from xlagui.ui.xla_did.xla_did_view import XlaDidPanel

# What is only needed once a dataset is opened or a run starts is imported then: the window
# must be on screen as soon as possible (Pillow, the runner and pyqtgraph all take a while).
if TYPE_CHECKING:
    from xlagui.core.compare import RunWorker
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.measure.transports import TransportOptions
    from xlagui.core.results.report import ComparisonReport
    from xlagui.ui.runs.runs_view import RunsView

Probe = Callable[[], list[dict[str, str]]]
TAB_DATASET, TAB_RUNS, TAB_HISTORY = 0, 1, 2

log = logging.getLogger(__name__)


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
        model_checker: ModelChecker | None = None,
        transport_options: TransportOptions = (),
        host_checker: HostChecker | None = None,
        sweep_root: Path | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = settings if settings is not None else QSettings()
        self.history_root = history_root
        self.log_folder = log_folder  # None: the user data folder's (core.paths.log_dir)
        self.devices: list[dict[str, str]] | None = None
        self._tasks = TaskKeeper()
        self._close_after_run = False
        self._ask_before_closing = True
        self._shown_once = False
        self._preload_plots = preload_plots
        self._probe = probe
        self._model_checker = model_checker
        # The transports' own settings (an ssh configuration file): the Machine group's hosts
        self._transport_options = transport_options
        self._host_checker = host_checker

        self.setWindowTitle("xlagui")
        self.setAcceptDrops(True)
        # A closed window is freed with everything in it (its plots, columns, controllers):
        # without this, its widgets and Python wrappers stayed alive after it closed.
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.resize(1440, 900)
        self._build_actions()
        self._build_ui()
        self._build_menus()
        self._build_drops()
        self.datasets = DatasetController(self, self.dataset_panel, self.settings_panel,
                                          self.store)
        self.comparisons = ComparisonController(
            self, self.datasets, self.settings_panel, self.runs_tab,
            self.xla_did_panel, self.history_panel, self.store, worker=worker,
            measure_command=measure_command, history_root=history_root, why=self.why_panel)
        self.sweep_tab = SweepTab(self.settings_panel.config, self.datasets,
                                  self.comparisons.is_running, self.store,
                                  worker_command=measure_command, sweep_root=sweep_root)
        self.tabs.addTab(self.sweep_tab, "Sweep")
        self._connect_controllers()
        session.restore(self)
        self.drops.watch(self)
        self._update_actions()
        if probe is None:
            self._on_probe_done([{"id": "cpu", "name": "CPU", "kind": "CPU"}])
        self.history_panel.refresh()

    # -- construction -------------------------------------------------------------------------

    def _build_actions(self) -> None:
        """The actions (`window/actions.py`); their menus and toolbar come after the panels."""
        self.window_actions = WindowActions(self, Commands(
            browse=self.browse_dataset, demo=self.open_demo, export=self.export_report,
            copy_markdown=self.copy_markdown, quit=self.close, run=self.start_comparison,
            run_one=self.start_one_side, stop=self.stop_run, show_tab=self._on_view_tab_chosen,
            show_logs=self._on_show_logs_triggered, about=self._on_about_triggered))
        # What tests reach directly.
        actions = self.window_actions
        self.open_action, self.demo_action = actions.open, actions.demo
        self.export_action, self.copy_markdown_action = actions.export, actions.copy_markdown
        self.quit_action, self.run_action = actions.quit, actions.run
        self.run_one_action, self.stop_action = actions.run_one, actions.stop

    def _build_drops(self) -> None:
        self.drop_overlay = DropOverlay(self._central)
        self.drops = FolderDrops(self, self.drop_overlay)
        self.drops.folder_dropped.connect(self._on_drops_folder_dropped)
        self.drops.model_file_dropped.connect(self._on_drops_model_file_dropped)
        self.drops.refused.connect(self._on_drops_refused)
        self.runs_tab.built.connect(self.drops.watch)
        self.runs_tab.built.connect(self._on_runs_tab_built)

    def _build_menus(self) -> None:
        self.window_actions.add_menus(self)
        self.show_logs_action = self.window_actions.show_logs

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

        self.sidebar = RunSidebar(self._model_checker, transport_options=self._transport_options,
                                  host_checker=self._host_checker)
        self.sidebar.run_requested.connect(self._on_sidebar_run_requested)
        self.sidebar.run_one_requested.connect(self._on_sidebar_run_one_requested)
        self.sidebar.stop_requested.connect(self._on_sidebar_stop_requested)
        self.sidebar.speed_only_toggled.connect(self._on_sidebar_speed_only_toggled)
        # What tests and the menus reach directly.
        self.settings_panel = self.sidebar.settings_panel
        self.run_button, self.run_one_button = self.sidebar.run_button, self.sidebar.run_one_button
        self.stop_button, self.speed_only = self.sidebar.stop_button, self.sidebar.speed_only
        self.run_hint, self.one_side_choice = self.sidebar.run_hint, self.sidebar.one_side_choice
        self.splitter.addWidget(self.sidebar)

        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.dataset_panel = DatasetPanel()
        self.dataset_panel.browse_requested.connect(self.browse_dataset)
        self.dataset_panel.demo_requested.connect(self.open_demo)
        self.tabs.addTab(self.dataset_panel, "Dataset")
        self.runs_tab = RunsTab()
        self.tabs.addTab(self.runs_tab, "Runs")
        self.history_panel = HistoryPanel(self.history_root)
        self.tabs.addTab(self.history_panel, "History")
        self.xla_did_panel, self.why_panel = XlaDidPanel(history_root=self.history_root), WhyPanel()
        self.tabs.addTab(self.xla_did_panel, "What XLA did")
        self.tabs.addTab(self.why_panel, "Why")
        self.tabs.currentChanged.connect(self._on_tabs_current_changed)
        self.splitter.addWidget(self.tabs)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([330, 1100])
        self.setCentralWidget(central)

        self.settings_panel.changed.connect(self._on_settings_changed)
        self.sidebar.one_side_changed.connect(self._on_settings_changed)

        self.device_label = QLabel("Devices: looking…")
        self.device_label.setObjectName("Caption")
        self.statusBar().addPermanentWidget(self.device_label)

    @property
    def runs_view(self) -> RunsView:
        """The Runs tab's content, built on first use (it needs pyqtgraph)."""
        return self.runs_tab.view

    def _connect_controllers(self) -> None:
        self.sweep_tab.finished.connect(self._on_runs_ended)
        for c in (self.datasets, self.comparisons, self.sweep_tab):
            c.state_changed.connect(self._update_actions)
            c.message.connect(self.message_bar.show_message)
            c.status.connect(self.statusBar().showMessage)
        self.datasets.scanning.connect(self._on_datasets_scanning)
        self.datasets.loaded.connect(self._on_datasets_loaded)
        self.datasets.failed.connect(self.dataset_failed)
        self.comparisons.started.connect(self._on_comparisons_started)
        self.comparisons.finished.connect(self._on_comparisons_finished)
        self.comparisons.report_shown.connect(self._on_comparisons_report_shown)
        self.comparisons.exported.connect(self.exported)

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
            # Bound slots, not a lambda: a lambda holding the window, held by the task's
            # connection, kept every closed window alive.
            task.done.connect(self._on_probe_done)
            task.failed.connect(self._on_probe_failed)
            # The probe waits seconds for TensorFlow to start in a helper process and cannot
            # be interrupted: a daemon thread, so quitting never waits for it.
            self._tasks.keep(task).start(thread=True, daemon=True)
        self.settings_panel.model_panel.start_checks()
        if self._preload_plots:
            self.runs_tab.preload()  # while the user looks at the window

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.is_running():
            event.ignore()
            if self._close_after_run:
                return
            title, text = CLOSE_QUESTION if self.sweep_tab.is_running() else (
                "Stop the comparison?", "A comparison is running. Closing xlagui stops "
                "it; what it has done stays in the history: the runs that finished, and the "
                "epochs of the run in progress, marked interrupted.")
            if self._ask_before_closing and not dialogs.ask(
                    self, title, text, "Stop and close", "Keep running"):
                return
            self._close_after_run = True
            self.comparisons.stop(closing=True)
            self.sweep_tab.stop()
            self.statusBar().showMessage("Stopping the run before closing…")
            log.info("closing: stopping the running comparison first")
            return
        log.info("window closed")
        session.save(self)
        self.datasets.shutdown()
        self.settings_panel.model_panel.shutdown()
        self.settings_panel.machine_panel.shutdown()
        self._tasks.cancel_all()
        event.accept()

    def close_without_asking(self) -> None:
        """Close as Quit does, but stop a running comparison without asking first (Ctrl+C in
        the terminal that started the window, SIGTERM): the window closes once its workers
        ended and the comparison was saved, its run in progress as interrupted."""
        self._ask_before_closing = False
        self.close()

    def is_running(self) -> bool:
        return self.comparisons.is_running() or self.sweep_tab.is_running()

    # -- dataset ----------------------------------------------------------------------------

    def browse_dataset(self) -> None:
        start = str(self.store.value("last_folder", "") or Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Choose a dataset folder", start)
        if folder:
            self.open_dataset(folder)

    def open_demo(self) -> None:
        self.datasets.open_demo()

    def open_dataset(self, path: str | os.PathLike[str], *, demo: bool = False) -> None:
        """Scan `path` in the background and show what it holds."""
        self.datasets.open(path, demo=demo)

    def is_scanning(self) -> bool:
        return self.datasets.is_scanning()

    def _on_datasets_scanning(self) -> None:
        self.tabs.setCurrentIndex(TAB_DATASET)

    def _on_datasets_loaded(self, scan: DatasetScan) -> None:
        self.setWindowTitle(f"xlagui — {self.datasets.name()}")
        self._update_actions()
        self.dataset_loaded.emit(scan)

    # -- drag and drop --------------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        self.drops.enter(event)

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        event.acceptProposedAction()

    def dragLeaveEvent(self, event: QDragLeaveEvent) -> None:
        self.drops.leave()

    def dropEvent(self, event: QDropEvent) -> None:
        self.drops.drop(event)

    def _on_drops_folder_dropped(self, folder: Path) -> None:
        self.open_dataset(folder)

    def _on_runs_tab_built(self, view: RunsView) -> None:
        view.reuse_requested.connect(self._on_runs_view_reuse_requested)

    def _on_runs_view_reuse_requested(self, report: ComparisonReport) -> None:
        """"Use these settings": the settings panel takes the reopened comparison's."""
        problems = self.settings_panel.apply(report.config)
        self.speed_only.setChecked(report.config.quick)
        if problems:
            self.message_bar.show_message(Level.WARNING, html.escape(" ".join(problems)))
        else:
            from xlagui.present.report import comparison_title

            self.statusBar().showMessage(f"Settings of “{comparison_title(report)}” set", 5000)

    def _on_drops_model_file_dropped(self, path: Path) -> None:
        why = self.settings_panel.model_panel.choose_file(path)
        if why:
            self.message_bar.show_message(Level.ERROR, html.escape(why))
        else:
            self.statusBar().showMessage(f"Model: {path.name}", 5000)

    def _on_drops_refused(self, why: str) -> None:
        self.message_bar.show_message(Level.ERROR, html.escape(why))

    # -- running, history and export ---------------------------------------------------------

    def cannot_run_reason(self) -> str:
        """Why a comparison cannot start now, in words; "" when it can."""
        return self.sweep_tab.running_reason() or self.comparisons.cannot_run_reason()

    def start_one_side(self) -> bool:
        return self.start_comparison(only={self.sidebar.one_side})

    def start_comparison(self, *, only: set[Role] | None = None) -> bool:
        """Start a comparison (or one side of it); False, with the reason shown, if it can't.

        `only` is keyword-only so that no signal's argument can ever land in it."""
        if self.sweep_tab.is_running():
            self.message_bar.show_message(Level.WARNING, SWEEP_RUNNING, 6000)
            return False
        return self.comparisons.start(only=only, quick=self.speed_only.isChecked())

    def stop_run(self) -> None:
        self.comparisons.stop()

    def open_history_item(self, folder: Path) -> bool:
        return self.comparisons.open_history_item(folder)

    def export_report(self, folder: Path | None = None) -> list[Path] | None:
        """Write the shown comparison as PNG, CSV and JSON into `folder` (asked if None)."""
        return self.comparisons.export_report(folder)

    def copy_markdown(self) -> str | None:
        """Put the shown comparison on the clipboard as Markdown; the text (None: none shown)."""
        return self.comparisons.copy_markdown()

    def _on_comparisons_started(self, report: ComparisonReport) -> None:
        self.tabs.setCurrentIndex(TAB_RUNS)
        # The status bar, not the message bar, says what runs: a bar going away mid-run would
        # lay out (and repaint) every plot again.
        self.message_bar.hide()
        self._update_actions()
        self.comparison_started.emit(report)

    def _on_comparisons_finished(self, report: ComparisonReport) -> None:
        self.comparison_finished.emit(report)
        self._on_runs_ended()

    def _on_runs_ended(self, *_result: object) -> None:
        self._update_actions()
        if self._close_after_run and not self.is_running():
            self._close_after_run = False
            QTimer.singleShot(0, self.close)

    def _on_comparisons_report_shown(self, report: ComparisonReport) -> None:
        self.tabs.setCurrentIndex(TAB_RUNS)
        self._update_actions()
        self.report_shown.emit(report)

    def _on_sidebar_speed_only_toggled(self, on: bool) -> None:
        self.store.setValue("run/speed_only", on)
        self._update_actions()

    # -- state of the controls ----------------------------------------------------------------

    def _update_actions(self) -> None:
        running = self.is_running()
        reason = self.cannot_run_reason()
        stopping = self.comparisons.is_stopping()
        self.sidebar.show_state(reason, running, stopping)
        self.sweep_tab.form.refresh()
        self.sweep_tab.show_state()
        self.window_actions.show_state(reason=reason, running=running, stopping=stopping,
                                       one_side=self.sidebar.one_side_text(),
                                       report_shown=self.comparisons.report is not None)

    def _on_sidebar_run_requested(self) -> None:
        self.start_comparison()

    def _on_sidebar_run_one_requested(self) -> None:
        self.start_one_side()

    def _on_sidebar_stop_requested(self) -> None:
        self.stop_run()

    def _on_settings_changed(self, *_args: object) -> None:
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

    def _on_probe_failed(self, _exc: BaseException, _details: str) -> None:
        self._on_probe_done(None)

    def _on_tabs_current_changed(self, index: int) -> None:
        if index == TAB_RUNS:
            self.runs_tab.view  # noqa: B018 (builds the plots if the preload has not yet)

    def _on_message_link_activated(self, link: str) -> None:
        QDesktopServices.openUrl(QUrl(link))

    def _on_view_tab_chosen(self, index: int) -> None:
        self.tabs.setCurrentIndex(index)

    def _on_show_logs_triggered(self) -> None:
        said = dialogs.open_log_folder(self.log_folder)
        if said is not None:
            self.message_bar.show_message(*said)

    def _on_about_triggered(self) -> None:
        dialogs.show_about(self)

