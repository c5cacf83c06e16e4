"""The sweep's table: one row per planned cell, its settings, each arm's ratio with its
interval, the cell's status and, for a cell that failed, why."""

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
        self._row_of: dict[str, int] = {}
        self._arms: list[str] = []
        self.results: dict[str, CellResult] = {}

    def show_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        """One row per cell of `plan`, waiting, with the cells already done filled in."""
        self._plan = plan
        self.results = {}
        self._arms = rows.planned_arms(plan)
        headers = [rows.axis_title(a.name) for a in rows.settings_axes(plan)]
        headers += [rows.arm_title(arm) for arm in self._arms]
        headers += [rows.STATUS_TITLE, rows.REASON_TITLE]
        self.clear()
        self.setColumnCount(len(headers))
        self.setHorizontalHeaderLabels(headers)
        self.setRowCount(len(plan.cells))
        self._row_of = {cell.key: i for i, cell in enumerate(plan.cells)}
        for i, cell in enumerate(plan.cells):
            for c, text in enumerate(rows.setting_texts(plan, cell)):
                self.setItem(i, c, QTableWidgetItem(text))
            self._set_status(i, rows.WAITING, "")
        for result in kept:
            self.show_result(result)
        self.horizontalHeader().resizeSections(QHeaderView.ResizeMode.ResizeToContents)

    def mark_started(self, cell: Cell) -> None:
        row = self._row_of.get(cell.key)
        if row is not None:
            self._set_status(row, rows.RUNNING, "")
            item = self.item(row, 0)
            if item is not None:
                self.scrollToItem(item)

    def show_result(self, result: CellResult) -> None:
        row = self._row_of.get(result.key)
        if row is None or self._plan is None:
            return
        self.results[result.key] = result
        first = len(rows.settings_axes(self._plan))
        by_arm = {a.arm: a for a in result.arms}
        for j, arm in enumerate(self._arms):
            a = by_arm.get(arm)
            item = QTableWidgetItem(rows.arm_text(a))
            if a is not None:
                item.setToolTip(rows.arm_tooltip(a))
                item.setForeground(QColor(LEVEL_COLORS[rows.verdict_level(a)]))
            item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            self.setItem(row, first + j, item)
        self._set_status(row, rows.status_text(result), rows.reason_text(result))

    def _set_status(self, row: int, status: str, reason: str) -> None:
        c = self.columnCount() - 2
        self.setItem(row, c, QTableWidgetItem(status))
        item = QTableWidgetItem(reason)
        item.setToolTip(reason)
        self.setItem(row, c + 1, item)

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
