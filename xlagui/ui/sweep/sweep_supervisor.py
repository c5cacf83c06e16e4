"""The QThread that hosts one sweep off the GUI thread: the one sweep workflow
(`xlagui.core.sweep.runner.run_sweep`, the CLI's too), watched, its callbacks relayed as queued
signals.

The thread decides nothing: the runner plans the grid, keeps the cells a folder already holds,
runs the missing ones (each a comparison in fresh workers) and writes the sweep's files after
each cell; this only turns what it is told into signals, in the order it happened.
"""

from __future__ import annotations

import traceback
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QThread, Signal

from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.sweep.runner import run_sweep

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport
    from xlagui.core.sweep.cell import CellResult
    from xlagui.core.sweep.plan import Cell, SweepPlan
    from xlagui.core.sweep.result import SweepResult
    from xlagui.core.sweep.runner import CellExecutor, SweepRequest


class SweepSupervisor(QThread):
    """Runs the sweep of `request`, watching it.

    Signals:
        planned(object SweepPlan, object list): the plan, and the cells of it the folder
            already held (`CellResult`s, kept: they are not run again).
        cell_started(object Cell): a cell's comparison is about to start its workers.
        cell_progress(object Cell, object ComparisonReport): a round of that cell's speed
            measurement ended; the report holds the estimate so far.
        cell_done(object CellResult, int done, int total, object eta): a cell ended (done,
            failed or interrupted); `done` of `total` cells are over; `eta` the seconds the
            rest should take (float), None before a cell has run.
        crashed(str message, str details): the supervision itself failed unexpectedly; the
            cells finished before it are kept in the sweep's folder.
        finished(): (QThread's) the sweep is over; `result` holds its outcome (None if it
            crashed or was stopped before it planned).
    """

    planned = Signal(object, object)
    cell_started = Signal(object)
    cell_progress = Signal(object, object)
    cell_done = Signal(object, int, int, object)
    crashed = Signal(str, str)

    def __init__(self, request: SweepRequest, executor: CellExecutor | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.executor = executor
        self.state = TaskState()
        self.result: SweepResult | None = None
        self.setObjectName("xlagui-sweep")

    def request_stop(self) -> None:
        """Ask the sweep to stop: the cell in progress is cancelled (kept as interrupted, not
        done) and no other starts; finished cells stay in the folder. Safe from any thread."""
        self.state.request_interruption()

    @property
    def stop_requested(self) -> bool:
        return self.state.is_interruption_requested()

    def run(self) -> None:
        try:
            self.result = run_sweep(self.request, self, self.state, self.executor)
        except Cancelled:
            pass  # stopped before a cell ran: nothing to keep
        except Exception as exc:  # the supervision must never take the app down
            self.crashed.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())

    # -- the runner's callbacks (`core.sweep.runner.SweepObserver`), on this thread --------------

    def on_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        self.planned.emit(plan, list(kept))

    def on_cell_started(self, cell: Cell) -> None:
        self.cell_started.emit(cell)

    def on_cell_event(self, cell: Cell, report: ComparisonReport) -> None:
        self.cell_progress.emit(cell, report)

    def on_cell_done(self, result: CellResult, done: int, total: int,
                     eta_seconds: float | None) -> None:
        self.cell_done.emit(result, done, total, eta_seconds)
