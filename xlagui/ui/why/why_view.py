"""The "Why" tab: where each step's time goes (the top differences in words, the coverage, the
attribution table sorted by difference from the baseline, a bar chart of the top differences),
every compile and recompile per run, and whether the numbers stay the same (the parity kinds and
the loss per step on both sides).

Thin: the figures come from `xlagui.present.why_data`, the words and rows from
`present/explain.py`, `present/compiles.py` and `present/parity.py`.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from xlagui.present import compiles, explain, parity
from xlagui.present.levels import Level
from xlagui.present.why_data import WhyData, why_of
from xlagui.ui.shared.theme import LEVEL_COLORS

if TYPE_CHECKING:
    from PySide6.QtGui import QShowEvent

    from xlagui.core.results.report import ComparisonReport
    from xlagui.ui.why.why_plots import DifferenceChart, ParityPlot

CHART_HEIGHT = 270
COMPILE_ROWS_SHOWN = 16
NO_EXPLAIN = ("No profile in this comparison: it was recorded before xlagui profiled the arms, "
              "the profiling was skipped (--no-explain), or it was stopped before it.")
NO_COMPILES = ("No compilations recorded: the comparison was recorded before xlagui counted "
               "them, or it had no run that recorded them.")
NO_PARITY = ("No parity check in this comparison: it was recorded before xlagui checked "
             "whether the numbers stay the same, or it was skipped.")


class _Item(QTableWidgetItem):
    """A cell that sorts by its number when it has one, by its text otherwise."""

    def __init__(self, text: str, number: float | None = None) -> None:
        super().__init__(text)
        self.number = number
        self.setFlags(self.flags() & ~Qt.ItemFlag.ItemIsEditable)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Item) and self.number is not None and other.number is not None:
            return self.number < other.number
        return self.text() < other.text()


def _table(name: str) -> QTableWidget:
    t = QTableWidget()
    t.setObjectName(name)
    t.setAlternatingRowColors(True)
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.verticalHeader().setVisible(False)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 8)
    t.horizontalHeader().setStretchLastSection(True)
    return t


def fill(table: QTableWidget, columns: Sequence[str], rows: Sequence[Sequence[str]],
         numbers: Sequence[dict[int, float]] | None = None,
         flagged: Sequence[bool] = ()) -> None:
    """Rows of text into `table` in their order, sortable by a click (by number where
    `numbers` gives one); the `flagged` rows in the warning colour."""
    table.setSortingEnabled(False)
    table.clear()
    table.setColumnCount(len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setRowCount(len(rows))
    warn = QColor(LEVEL_COLORS[Level.WARNING])
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = _Item(text, numbers[r].get(c) if numbers else None)
            if r < len(flagged) and flagged[r]:
                item.setForeground(warn)
            table.setItem(r, c, item)
    table.resizeColumnsToContents()
    # No sort column: the rows keep the order given (an earlier click's column would re-sort).
    table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    table.setSortingEnabled(True)


def _words(lines: Sequence[str]) -> QLabel:
    label = QLabel()
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    _say(label, lines)
    return label


def _say(label: QLabel, lines: Sequence[str], colour: str = "") -> None:
    style = f" style='color:{colour}'" if colour else ""
    label.setText("".join(f"<p{style}>{html.escape(line)}</p>" for line in lines))


def _scrolled(page: QWidget) -> QScrollArea:
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setWidget(page)
    return area


class WhyPanel(QWidget):
    """The "Why" tab.

    Signals:
        shown(): a comparison's why was shown (or its absence said).
        drop_remainder_asked(): the user asked for the partial batch's fix as a setting.
    """

    shown = Signal()
    drop_remainder_asked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.why = WhyData()
        layout = QVBoxLayout(self)
        self.views = QTabWidget()
        # Each page scrolls: the window's smallest height is the other tabs', not the chart's.
        self.views.addTab(_scrolled(self._build_time_page()), "Where the time goes")
        self.views.addTab(_scrolled(self._build_compiles_page()), "Compiles")
        self.views.addTab(_scrolled(self._build_parity_page()), "Same numbers?")
        layout.addWidget(self.views, 1)
        self.show_why(WhyData())

    def _build_time_page(self) -> QWidget:
        """The words and the coverage beside the chart, the attribution table below them."""
        page = QWidget()
        v = QVBoxLayout(page)
        top = QHBoxLayout()
        left = QVBoxLayout()
        self.explain_words = _words([NO_EXPLAIN])
        self.explain_words.setObjectName("WhyExplainWords")
        left.addWidget(self.explain_words)
        self.coverage_table = _table("WhyCoverage")
        left.addWidget(self.coverage_table)
        self.coverage_words = _words([])
        self.coverage_words.setObjectName("WhyCoverageWords")
        left.addWidget(self.coverage_words)
        left.addStretch(1)
        top.addLayout(left, 3)
        right = QVBoxLayout()
        self.chart_key = QLabel()
        self.chart_key.setTextFormat(Qt.TextFormat.RichText)
        self.chart_key.setWordWrap(True)
        right.addWidget(self.chart_key)
        # The charts need pyqtgraph (about 0.2 s to import): built when the tab is first shown
        # or has something to draw, not on the window's way to its first show. A place of the
        # chart's size holds its room meanwhile, so the window's layout is the same.
        self._chart: DifferenceChart | None = None
        self._chart_box = QVBoxLayout()
        self._chart_place = QWidget()
        self._chart_place.setMinimumWidth(400)
        self._chart_place.setFixedHeight(CHART_HEIGHT)
        self._chart_box.addWidget(self._chart_place)
        right.addLayout(self._chart_box)
        right.addStretch(1)
        top.addLayout(right, 2)
        v.addLayout(top)
        self.attribution_table = _table("WhyAttribution")
        v.addWidget(self.attribution_table, 1)
        self.notes = _words([])
        self.notes.setStyleSheet(f"color: {LEVEL_COLORS[Level.INFO]};")
        v.addWidget(self.notes)
        return page

    def _build_compiles_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        self.compile_words = _words([NO_COMPILES])
        self.compile_words.setObjectName("WhyCompileWords")
        v.addWidget(self.compile_words)
        self.drop_button = QPushButton("Drop the last partial batch next time")
        self.drop_button.setToolTip(
            "Ticks the setting “Drop the last partial batch” (drop_remainder=True) for the next "
            "comparison: no batch of another shape, no recompile. Its images are not evaluated.")
        self.drop_button.clicked.connect(self.drop_remainder_asked)
        self.drop_button.setVisible(False)
        v.addWidget(self.drop_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.compile_table = _table("WhyCompiles")
        v.addWidget(self.compile_table)
        v.addStretch(1)
        return page

    def _build_parity_page(self) -> QWidget:
        page = QWidget()
        v = QVBoxLayout(page)
        self.parity_words = _words([NO_PARITY])
        self.parity_words.setObjectName("WhyParityWords")
        v.addWidget(self.parity_words)
        self.parity_table = _table("WhyParity")
        v.addWidget(self.parity_table)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("Plot the arm:"))
        self.parity_arm = QComboBox()
        self.parity_arm.currentIndexChanged.connect(self._on_parity_arm_changed)
        pick.addWidget(self.parity_arm, 1)
        v.addLayout(pick)
        self.parity_key = QLabel()
        self.parity_key.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.parity_key)
        self._parity_plot: ParityPlot | None = None
        self._plots_row = QHBoxLayout()
        v.addLayout(self._plots_row, 1)
        return page

    @property
    def chart(self) -> DifferenceChart:
        """The difference chart, built on first use."""
        if self._chart is None:
            from xlagui.ui.why.why_plots import DifferenceChart

            self._chart = DifferenceChart()
            self._chart.widget.setMinimumWidth(400)
            self._chart.widget.setFixedHeight(CHART_HEIGHT)
            self._chart_box.replaceWidget(self._chart_place, self._chart.widget)
            self._chart_place.deleteLater()
        return self._chart

    @property
    def parity_plot(self) -> ParityPlot:
        """The parity plots, built on first use."""
        if self._parity_plot is None:
            from xlagui.ui.why.why_plots import ParityPlot

            self._parity_plot = ParityPlot()
            self._plots_row.addWidget(self._parity_plot.loss, 1)
            self._plots_row.addWidget(self._parity_plot.diff, 1)
        return self._parity_plot

    def showEvent(self, event: QShowEvent) -> None:
        """The charts, empty or not, once the tab is seen."""
        if self._chart is None or self._parity_plot is None:
            self._draw_chart(build=True)
            self._draw_parity(build=True)
        super().showEvent(event)

    # -- what it shows --------------------------------------------------------------------------

    def show_report(self, report: ComparisonReport, folder: Path | None) -> None:
        """Show the why of a `ComparisonReport` kept in `folder` (None: not on disk)."""
        self.show_why(why_of(report, folder))

    def show_why(self, why: WhyData) -> None:
        self.why = why
        self._show_explain()
        self._show_compiles()
        self._show_parity()
        self.shown.emit()

    def _show_explain(self) -> None:
        ex = self.why.explain
        if ex is None:
            _say(self.explain_words, [NO_EXPLAIN])
            for label in (self.coverage_words, self.notes):
                label.clear()
            fill(self.coverage_table, (), [])
            fill(self.attribution_table, (), [])
        else:
            _say(self.explain_words, explain.difference_lines(ex))
            _say(self.coverage_words, explain.coverage_lines(ex), LEVEL_COLORS[Level.INFO])
            _say(self.notes, [explain.THREADS_NOTE, explain.NOT_TRACED_NOTE])
            fill(self.coverage_table, explain.COVERAGE_COLUMNS, explain.coverage_rows(ex))
            table = explain.attribution_table(ex)
            fill(self.attribution_table, table.columns, table.rows, table.numbers)
        self._fit_height(self.coverage_table)
        self._draw_chart()

    def _draw_chart(self, build: bool = False) -> None:
        """The difference chart of what is shown: where it is built, has something to draw,
        or `build` asks for it."""
        if build or self._chart is not None or self.why.explain is not None:
            self.chart.show(self.why.explain)
            self.chart_key.setText(self.chart.key_html())

    def _show_compiles(self) -> None:
        runs = self.why.compilations
        _say(self.compile_words, compiles.compile_lines(runs) if runs else [NO_COMPILES])
        self.drop_button.setVisible(compiles.partial_batch_advice(runs) is not None)
        fill(self.compile_table, compiles.COMPILE_COLUMNS if runs else (),
             compiles.compile_rows(runs),
             flagged=[c.reason.partial_batch for run in runs for c in run.compilations])
        self._fit_height(self.compile_table, COMPILE_ROWS_SHOWN)

    def _show_parity(self) -> None:
        found = self.why.parity
        if found:
            self.parity_words.setText("".join(
                f"<p style='color:{LEVEL_COLORS[parity.kind_level(p.kind)]}'>"
                f"{html.escape(parity.parity_sentence(p))}</p>" for p in found.values())
                + f"<p>{html.escape(parity.HOW)}</p>")
        else:
            _say(self.parity_words, [NO_PARITY])
        fill(self.parity_table, parity.PARITY_COLUMNS if found else (),
             parity.parity_rows(found))
        self._fit_height(self.parity_table)
        self.parity_arm.blockSignals(True)
        self.parity_arm.clear()
        for arm in found:
            self.parity_arm.addItem(explain.arm_short(arm), arm)
        self.parity_arm.blockSignals(False)
        self.parity_arm.setEnabled(len(found) > 1)
        self._on_parity_arm_changed(0)

    @staticmethod
    def _fit_height(table: QTableWidget, most: int | None = None) -> None:
        """A short table as tall as its rows (`most` of them at most: then it scrolls)."""
        shown = range(min(table.rowCount(), most) if most is not None else table.rowCount())
        rows = sum(table.rowHeight(r) for r in shown)
        table.setFixedHeight(table.horizontalHeader().height() + rows + 2 * table.frameWidth()
                             + 2)

    # -- slots ----------------------------------------------------------------------------------

    def _on_parity_arm_changed(self, _index: int) -> None:
        self._draw_parity()

    def _draw_parity(self, build: bool = False) -> None:
        """The parity plots of the arm picked: where built, with something to draw, or asked."""
        arm = self.parity_arm.currentData()
        shown = self.why.parity.get(arm) if isinstance(arm, str) else None
        if build or self._parity_plot is not None or shown is not None:
            self.parity_plot.show(shown)
            self.parity_key.setText(self.parity_plot.key_html())
