"""What a sweep run gives back: every cell's result in the plan's order."""

from __future__ import annotations

from dataclasses import dataclass, field

from xlagui.core.sweep.cell import CellResult, CellStatus
from xlagui.core.sweep.plan import SweepPlan


@dataclass
class SweepResult:
    """Every cell of the plan that has a result (kept and run now) in the plan's order;
    `ran`: how many ran this time; `stopped`: a stop ended it before every cell ran."""

    plan: SweepPlan
    cells: list[CellResult] = field(default_factory=list)
    ran: int = 0
    stopped: bool = False

    def result(self, key: str) -> CellResult | None:
        return next((c for c in self.cells if c.key == key), None)

    @property
    def finished(self) -> list[CellResult]:
        return [c for c in self.cells if c.status != CellStatus.INTERRUPTED]

    @property
    def complete(self) -> bool:
        return len(self.finished) == len(self.plan.cells)
