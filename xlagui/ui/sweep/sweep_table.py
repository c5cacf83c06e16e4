"""The sweep's table: one row per planned cell, its settings, each arm's speed-up with its
interval, the cell's status and, for a cell that failed, why (`present.sweep.table`, the rows
`sweep.md` holds too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from xlagui.present import sweep as sweep_words
from xlagui.present import sweep_rows as rows
from xlagui.ui.shared.theme import LEVEL_COLORS

if TYPE_CHECKING:
    from xlagui.core.sweep.cell import CellResult
    from xlagui.core.sweep.plan import Cell, SweepPlan


class SweepTable(QTableWidget):
    """The table of a sweep's cells, in the plan's order; filled as cells end.

    Signals: none (the tab feeds it: `show_plan`, `mark_started`, `show_result`).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 0, parent)
        self.setObjectName("SweepTable")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setAlternatingRowColors(True)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setStretchLastSection(True)
        self._plan: SweepPlan | None = None
        self._running: str | None = None
        self.results: dict[str, CellResult] = {}

    def show_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        """One row per cell of `plan`, the cells already in its folder filled in."""
        self._plan, self._running = plan, None
        self.results = {r.key: r for r in kept}
        self._render()

    def mark_started(self, cell: Cell) -> None:
        self._running = cell.key
        self._render()

    def show_result(self, result: CellResult) -> None:
        self.results[result.key] = result
        if self._running == result.key:
            self._running = None
        self._render()

    def _render(self) -> None:
        plan = self._plan
        if plan is None:
            return
        ordered = [self.results[c.key] for c in plan.cells if c.key in self.results]
        header, table = sweep_words.table(plan, ordered)
        arms = sweep_words.arms_of(ordered)
        first = len(plan.axes)
        self.setColumnCount(len(header))
        self.setHorizontalHeaderLabels(header)
        self.setRowCount(len(table))
        for r, (cell, texts) in enumerate(zip(plan.cells, table, strict=True)):
            if cell.key == self._running:
                texts[-2] = rows.RUNNING
            result = self.results.get(cell.key)
            for c, text in enumerate(texts):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                arm_at = c - first
                if result is not None and 0 <= arm_at < len(arms):
                    found = result.arm(arms[arm_at])
                    if found is not None:
                        item.setToolTip(rows.arm_tooltip(found))
                    item.setForeground(QColor(LEVEL_COLORS[rows.verdict_level(result,
                                                                               arms[arm_at])]))
                    item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                self.setItem(r, c, item)
            if cell.key == self._running:
                self.scrollToItem(self.item(r, 0) or QTableWidgetItem())
        self.horizontalHeader().resizeSections(QHeaderView.ResizeMode.ResizeToContents)

    def texts(self, column: str) -> list[str]:
        """The texts of the column headed `column`, top to bottom (for tests and the PNG);
        [] while no plan is shown."""
        headers = [self.horizontalHeaderItem(i) for i in range(self.columnCount())]
        c = next((i for i, h in enumerate(headers) if h is not None and h.text() == column),
                 None)
        if c is None:
            return []
        items = [self.item(r, c) for r in range(self.rowCount())]
        return [item.text() if item is not None else "" for item in items]
