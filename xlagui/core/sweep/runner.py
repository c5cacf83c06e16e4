"""`run_sweep`: a sweep's cells run one comparison each, by an executor, watched by an observer.

The executor (`CellExecutor`) decides where the cells run: `LocalExecutor` runs them one at a
time here (each in fresh workers); a cluster's executor runs them on its nodes. Whichever it
is, `run_sweep` keeps the folder: the finished cells already there are kept (resume), each
cell's result is written to `sweep.json` as it arrives, and the exports are written at the end.
A stop (`state`) ends the cell in progress as `interrupted` and starts no other; the finished
cells stay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from xlagui.core.compare import Watcher
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellJob, CellResult, CellStatus, Scans, run_cell
from xlagui.core.sweep.export import write_exports
from xlagui.core.sweep.plan import Cell, SweepPlan
from xlagui.core.sweep.result import SweepResult
from xlagui.core.sweep.store import kept_cells, write_sweep

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport

OnRound = Callable[[Cell, "ComparisonReport"], None]


class CellExecutor(Protocol):
    """Runs cells and says when each starts and ends (on any thread, one call at a time:
    `run_sweep` writes the folder in `on_done`). It returns once every cell has ended or, after
    a stop (`state`), once the cells in progress have ended (`interrupted`); cells not started
    are not reported. `on_round` (optional): a round of a cell's measurement ended, with its
    report so far (an executor that cannot watch inside a cell never calls it)."""

    def run(self, cells: Sequence[Cell], job: CellJob, state: TaskState,
            on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
            on_round: OnRound | None = None) -> None: ...


class LocalExecutor:
    """One cell at a time, on this computer (or a cell's SSH host), each in fresh workers."""

    def run(self, cells: Sequence[Cell], job: CellJob, state: TaskState,
            on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
            on_round: OnRound | None = None) -> None:
        scans: Scans = {}  # the folder scanned once for every cell
        for cell in cells:
            if state.is_interruption_requested():
                return
            on_started(cell)
            on_done(run_cell(cell, job, state, _RoundWatcher(cell, on_round), scans))


class _RoundWatcher(Watcher):
    """Relays the end of each measuring round of one cell's comparison."""

    def __init__(self, cell: Cell, on_round: OnRound | None) -> None:
        self.cell, self.relay = cell, on_round

    def on_round(self, report: ComparisonReport) -> None:
        if self.relay is not None:
            self.relay(self.cell, report)


class SweepObserver(Protocol):
    """What a watcher of `run_sweep` is told, in order.

    on_plan(plan, kept): the sweep starts; `kept` are the cells the folder had finished already.
    on_cell_started(cell): a cell starts.
    on_cell_event(cell, report): a round of that cell's measurement ended (progress within it).
    on_cell_done(result, done, total, eta_seconds): a cell ended; `done` of `total` cells are
    finished (the kept ones counted); `eta_seconds`: the time the missing ones should take, from
    the cells done so far (None before there is one to learn from).
    """

    def on_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None: ...
    def on_cell_started(self, cell: Cell) -> None: ...
    def on_cell_event(self, cell: Cell, report: ComparisonReport) -> None: ...
    def on_cell_done(self, result: CellResult, done: int, total: int,
                     eta_seconds: float | None) -> None: ...


class SweepWatcher:
    """A `SweepObserver` that does nothing: subclass it and keep what you show."""

    def on_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        pass

    def on_cell_started(self, cell: Cell) -> None:
        pass

    def on_cell_event(self, cell: Cell, report: ComparisonReport) -> None:
        pass

    def on_cell_done(self, result: CellResult, done: int, total: int,
                     eta_seconds: float | None) -> None:
        pass


@dataclass(frozen=True)
class SweepRequest:
    """One sweep: its plan and what its cells share (`job`: the dataset, the folder).
    `markdown` words the finished sweep for `sweep.md` (`xlagui.present.sweep.sweep_markdown`:
    the core writes no sentences); None writes no `sweep.md`."""

    plan: SweepPlan
    job: CellJob
    markdown: Callable[[SweepResult], str] | None = None


def run_sweep(request: SweepRequest, observer: SweepObserver, state: TaskState,
              executor: CellExecutor | None = None) -> SweepResult:
    """Run the cells of `request.plan` its folder has not finished, one comparison each, with
    `executor` (here, one at a time, by default), telling `observer`; `sweep.json` is written
    after each cell and the exports at the end. ConfigError (`SweepMismatch`) when the folder
    holds another sweep; a cell that fails is a row, never an exception."""
    plan, folder = request.plan, request.job.folder
    kept = kept_cells(folder, plan)
    progress = _Progress(plan, kept)
    write_sweep(folder, plan, progress.results())
    observer.on_plan(plan, list(kept))
    missing = [c for c in plan.cells if c.key not in progress.by_key]

    def on_done(result: CellResult) -> None:
        progress.add(result)
        write_sweep(folder, plan, progress.results())
        observer.on_cell_done(result, progress.finished, len(plan.cells), progress.eta())

    (executor or LocalExecutor()).run(missing, request.job, state, observer.on_cell_started,
                                      on_done, observer.on_cell_event)
    result = SweepResult(plan=plan, cells=progress.results(), ran=progress.ran,
                         stopped=state.is_interruption_requested())
    write_exports(folder, result, request.markdown)
    return result


class _Progress:
    """The results so far, and the ETA: the missing cells that can run, times the mean wall
    time of the cells done now (the kept ones' when none is yet; unknown before either)."""

    def __init__(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        self.plan = plan
        self.by_key = {c.key: c for c in kept}
        self.kept_walls = [c.wall_seconds for c in kept if c.wall_seconds > 0]
        self.walls: list[float] = []
        self.ran = 0

    def add(self, result: CellResult) -> None:
        self.by_key[result.key] = result
        self.ran += 1
        if result.status == CellStatus.DONE:  # a failed cell's time says little of the next
            self.walls.append(result.wall_seconds)

    def results(self) -> list[CellResult]:
        return [self.by_key[c.key] for c in self.plan.cells if c.key in self.by_key]

    @property
    def finished(self) -> int:
        return sum(1 for c in self.by_key.values() if c.status != CellStatus.INTERRUPTED)

    def eta(self) -> float | None:
        walls = self.walls or self.kept_walls
        if not walls:
            return None
        # A cell planned with its problem ends at once: it costs nothing to wait for.
        missing = sum(1 for c in self.plan.cells if not c.problem and (
            c.key not in self.by_key or self.by_key[c.key].status == CellStatus.INTERRUPTED))
        return missing * sum(walls) / len(walls)
