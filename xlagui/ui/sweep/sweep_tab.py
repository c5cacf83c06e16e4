"""The Sweep tab: the form, the progress, the sentences, the table and the plot of a sweep, and
starting, watching, stopping and reopening one.

A sweep runs in a `SweepSupervisor` thread (each cell's workers are processes); its queued
signals arrive here, on the GUI thread. One run at a time: the tab starts no sweep while a
comparison runs (`busy`), and the window starts no comparison while a sweep runs.
"""

from __future__ import annotations

import html
import logging
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QLabel,
    QProgressBar,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.files.paths import data_dir
from xlagui.core.protocol.config import ConfigError
from xlagui.core.sweep.cell import CellJob, CellResult, CellStatus
from xlagui.core.sweep.runner import SweepRequest
from xlagui.core.sweep.store import SWEEP_JSON, kept_cells, open_sweep
from xlagui.present import sweep as sweep_words
from xlagui.present import sweep_form as words
from xlagui.present.levels import Level
from xlagui.ui.shared import dialogs
from xlagui.ui.sweep.sweep_form import SweepForm
from xlagui.ui.sweep.sweep_supervisor import SweepSupervisor
from xlagui.ui.sweep.sweep_table import SweepTable

if TYPE_CHECKING:
    from xlagui.core.protocol.config import RunConfig
    from xlagui.core.protocol.spec import RunSpec
    from xlagui.core.results.report import ComparisonReport
    from xlagui.core.sweep.plan import Cell, SweepPlan
    from xlagui.ui.dataset.dataset_controller import DatasetController
    from xlagui.ui.sweep.sweep_plot import SweepPlot

# What the tab needs from the window: the settings every cell starts from (the sidebar's;
# None while they cannot run), and whether a comparison runs (then no sweep starts).
BaseSettings = Callable[[], "RunConfig | None"]
Busy = Callable[[], bool]
WorkerCommand = Callable[["RunSpec"], "Sequence[str] | None"]
FOLDER_KEY = "sweep/folder"

log = logging.getLogger(__name__)


class SweepTab(QWidget):
    """The Sweep tab.

    Signals:
        started(object SweepPlan): a sweep began.
        finished(object): it ended (`SweepResult`, None if it crashed or stopped before its
            plan); the finished cells are in its folder.
        state_changed(): running or stopping changed.
        message(str level, str html, int timeout_ms): for the window's message bar.
        status(str text, int timeout_ms): for the window's status bar.
    """

    started = Signal(object)
    finished = Signal(object)
    state_changed = Signal()
    message = Signal(str, str, int)
    status = Signal(str, int)

    def __init__(self, base: BaseSettings, datasets: DatasetController, busy: Busy,
                 store: QSettings,
                 *, worker_command: WorkerCommand | None = None, sweep_root: Path | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._datasets, self._comparing, self._store = datasets, busy, store
        self.worker_command = worker_command  # tests: a fake measuring worker
        self.sweep_root = sweep_root  # None: the app's data folder
        self.supervisor: SweepSupervisor | None = None
        self.plan: SweepPlan | None = None
        self.folder: Path | None = None
        self._plot: SweepPlot | None = None
        self._cell_started = 0.0
        self._build(base)
        self.form.set_folder(self._remembered_folder())
        self.show_state()

    def _build(self, base: BaseSettings) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        layout.addWidget(splitter)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        self.form = SweepForm(base)
        scroll.setWidget(self.form)
        splitter.addWidget(scroll)
        self.form.run_requested.connect(self._on_form_run_requested)
        self.form.stop_requested.connect(self._on_form_stop_requested)
        self.form.open_requested.connect(self._on_form_open_requested)
        self.form.browse_requested.connect(self._on_form_browse_requested)
        self.form.changed.connect(self.show_state)
        right = QWidget()
        column = QVBoxLayout(right)
        column.setContentsMargins(0, 0, 0, 0)
        self.overall = QProgressBar()
        self.overall.setFormat("%v of %m cells")
        self.overall_line = QLabel()
        self.cell_bar = QProgressBar()
        self.cell_bar.setTextVisible(False)
        self.cell_bar.hide()  # while a cell runs
        self.cell_line = QLabel()
        self.sentences = QLabel()
        self.sentences.setObjectName("SweepSentences")
        self.sentences.setWordWrap(True)
        self.sentences.setTextFormat(Qt.TextFormat.PlainText)
        self.sentences.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        for w in (self.overall, self.overall_line, self.cell_bar, self.cell_line,
                  self.sentences):
            column.addWidget(w)
        self.results = QSplitter(Qt.Orientation.Vertical)
        self.table = SweepTable()
        self.results.addWidget(self.table)
        column.addWidget(self.results, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([380, 900])

    @property
    def plot(self) -> SweepPlot:
        """The plot, built on first use (it needs pyqtgraph)."""
        if self._plot is None:
            from xlagui.ui.sweep.sweep_plot import SweepPlot

            self._plot = SweepPlot()
            self.results.addWidget(self._plot)
        return self._plot

    # -- state --------------------------------------------------------------------------------

    def is_running(self) -> bool:
        return self.supervisor is not None and not self.supervisor.isFinished()

    def is_stopping(self) -> bool:
        return self.is_running() and self.supervisor is not None \
            and self.supervisor.stop_requested

    def running_reason(self) -> str:
        """Why a comparison cannot start now because of the sweep ("" when it can)."""
        return words.SWEEP_RUNNING if self.is_running() else ""

    def show_state(self) -> None:
        running = self.is_running()
        self.form.show_state(running, self.is_stopping())
        busy = "" if running else self._busy() or (
            "" if self._dataset() is not None else words.NO_DATASET)
        if busy:
            self.form.run_button.setEnabled(False)
            self.form.run_button.setToolTip(busy)

    def _busy(self) -> str:
        return words.RUNNING_ELSEWHERE if self._comparing() else ""

    def _dataset(self) -> tuple[str, bool] | None:
        """The dataset's folder and whether it is the demo set; None while none can run."""
        scan = self._datasets.scan
        return (str(scan.root), self._datasets.demo) if scan is not None and scan.ok else None

    def _remembered_folder(self) -> Path:
        saved = str(self._store.value(FOLDER_KEY, "") or "")
        return Path(saved) if saved else self._new_folder()

    def _new_folder(self) -> Path:
        root = self.sweep_root or data_dir() / "sweeps"
        return root / time.strftime("sweep-%Y%m%d-%H%M%S")

    # -- running ------------------------------------------------------------------------------

    def start(self) -> bool:
        """Run the sweep the form describes into its folder (resuming what the folder holds);
        False, with the reason said, if it cannot start."""
        plan, folder, dataset = self.form.plan(), self.form.chosen_folder(), self._dataset()
        reason = self._busy() or self.form.problem()
        if not reason and dataset is None:
            reason = words.NO_DATASET
        if reason or plan is None or folder is None or dataset is None:
            self.message.emit(Level.WARNING, html.escape(reason or words.FOLDER_HINT), 6000)
            return False
        try:  # a folder holding another sweep is refused before anything starts
            kept_cells(folder, plan)
        except ConfigError as exc:
            dialogs.show_error(self, words.CANNOT_START, str(exc), words.FOLDER_HINT)
            return False
        job = CellJob(dataset=dataset[0], folder=folder, demo=dataset[1],
                      worker_command=self.worker_command,
                      left_out=self._datasets.exclusions.portable(dataset[0]),
                      words=sweep_words.CELL_WORDS)
        request = SweepRequest(plan=plan, job=job, markdown=sweep_words.sweep_markdown)
        self.plan, self.folder = plan, folder
        self._store.setValue(FOLDER_KEY, str(folder))
        supervisor = self.supervisor = SweepSupervisor(request, parent=self)
        supervisor.planned.connect(self._on_supervisor_planned)
        supervisor.cell_started.connect(self._on_supervisor_cell_started)
        supervisor.cell_progress.connect(self._on_supervisor_cell_progress)
        supervisor.cell_done.connect(self._on_supervisor_cell_done)
        supervisor.crashed.connect(self._on_supervisor_crashed)
        supervisor.finished.connect(self._on_supervisor_finished)
        supervisor.start()
        log.info("sweep started in %s: %d cells", folder, len(plan.cells))
        self.status.emit(f"Sweeping: {sweep_words.eta_words(0, len(plan.cells), None)}", 0)
        self.show_state()
        self.state_changed.emit()
        self.started.emit(plan)
        return True

    def stop(self) -> None:
        """Stop the sweep: the cell in progress ends interrupted, the finished ones stay."""
        if self.supervisor is not None and self.is_running() \
                and not self.supervisor.stop_requested:
            log.info("sweep stop requested")
            self.supervisor.request_stop()
            self.status.emit("Stopping the sweep…", 0)
            self.show_state()
            self.state_changed.emit()

    def _on_form_run_requested(self) -> None:
        self.start()

    def _on_form_stop_requested(self) -> None:
        self.stop()

    def _on_form_browse_requested(self) -> None:
        start = str(self.form.chosen_folder() or Path.home())
        chosen = QFileDialog.getExistingDirectory(self, "Keep the sweep in", start)
        if chosen:
            self.form.set_folder(Path(chosen))

    def _on_form_open_requested(self) -> None:
        start = str(self.form.chosen_folder() or Path.home())
        chosen = QFileDialog.getExistingDirectory(self, "Open a sweep", start)
        if chosen:
            self.open_folder(Path(chosen))

    # -- the supervisor's signals -------------------------------------------------------------

    def _on_supervisor_planned(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        self.table.show_plan(plan, kept)
        self.plot.show_plan(plan)
        self.plot.show_results(self.table.results)
        done = sum(1 for r in kept if r.status != CellStatus.INTERRUPTED)
        self.overall.setRange(0, len(plan.cells))
        self.overall.setValue(done)
        self.overall_line.setText(sweep_words.eta_words(done, len(plan.cells), None))
        self._show_sentences()

    def _on_supervisor_cell_started(self, cell: Cell) -> None:
        self.table.mark_started(cell)
        self._cell_started = time.monotonic()
        self.cell_bar.show()
        self.cell_bar.setRange(0, max(1, cell.config.budget_seconds))
        self.cell_bar.setValue(0)
        self.cell_line.setText(words.cell_progress(sweep_words.cell_title(cell),
                                                   None, None))

    def _on_supervisor_cell_progress(self, cell: Cell, report: ComparisonReport) -> None:
        c = report.comparison
        i = c.interleaved if c is not None else None
        measured = i.measuring_seconds if i is not None else None
        budget = (i.rounds_budget_seconds or i.budget_seconds if i is not None else None) or \
            cell.config.budget_seconds
        if measured is not None:
            self.cell_bar.setRange(0, max(1, round(budget)))
            self.cell_bar.setValue(min(round(measured), round(budget)))
        self.cell_line.setText(words.cell_progress(sweep_words.cell_title(cell),
                                                   measured, budget))

    def _on_supervisor_cell_done(self, result: CellResult, done: int, total: int,
                                 eta: float | None) -> None:
        self.table.show_result(result)
        self.plot.show_results(self.table.results)
        self.overall.setRange(0, total)
        self.overall.setValue(done)
        line = sweep_words.eta_words(done, total, eta)
        self.overall_line.setText(line)
        self.status.emit(f"Sweeping: {line}", 0)
        self._show_sentences()
        log.info("sweep cell %s: %s %s", result.key, result.status, result.reason)

    def _on_supervisor_crashed(self, message: str, details: str) -> None:
        log.error("the sweep's supervision failed: %s\n%s", message, details)
        dialogs.show_error(self, "The sweep stopped unexpectedly", message,
                           "The cells that finished before it are kept in its folder.",
                           details)

    def _on_supervisor_finished(self) -> None:
        supervisor = self.supervisor
        if supervisor is None:
            return
        self.supervisor = None
        supervisor.deleteLater()
        result = supervisor.result
        self.cell_line.setText("")
        self.cell_bar.hide()
        folder = html.escape(str(self.folder))
        if supervisor.stop_requested:
            self.message.emit(Level.WARNING, words.STOPPED.format(folder=folder), 10000)
        elif result is not None:
            failed = sum(1 for c in result.cells if c.status == CellStatus.FAILED)
            done = sum(1 for c in result.cells if c.status == CellStatus.DONE)
            self.message.emit(Level.OK if not failed else Level.WARNING, words.FINISHED.format(
                done=done, total=len(result.plan.cells), failed=failed, folder=folder), 15000)
        self.status.emit("Sweep saved", 5000)
        self.show_state()
        self.state_changed.emit()
        self.finished.emit(result)

    # -- reopening ----------------------------------------------------------------------------

    def open_folder(self, folder: Path) -> bool:
        """Show the sweep saved in `folder` (its table, plot and sentences) and fill the form
        with its settings, so that Run resumes it; False, with why, if it cannot be read."""
        if self.is_running():
            return False
        try:
            opened = open_sweep(folder)
            if opened is None:
                raise ConfigError(words.NOT_A_SWEEP.format(path=Path(folder) / SWEEP_JSON))
        except ConfigError as exc:
            log.warning("cannot open the sweep in %s: %s", folder, exc)
            dialogs.show_error(self, words.CANNOT_OPEN, str(exc), words.FOLDER_HINT,
                               traceback.format_exc())
            return False
        plan, cells = opened.plan, opened.cells
        self.plan, self.folder = plan, Path(folder)
        self.form.set_folder(Path(folder))
        self.form.show_axes(plan)
        self.table.show_plan(plan, cells)
        self.plot.show_plan(plan)
        self.plot.show_results(self.table.results)
        done = sum(1 for r in cells if r.status != CellStatus.INTERRUPTED)
        self.overall.setRange(0, len(plan.cells))
        self.overall.setValue(done)
        self.overall_line.setText(sweep_words.eta_words(done, len(plan.cells), None))
        self._show_sentences()
        self.show_state()
        return True

    def _show_sentences(self) -> None:
        if self.plan is None:
            return
        said = sweep_words.sentences(self.plan, list(self.table.results.values()))
        self.sentences.setText("\n".join(said))
