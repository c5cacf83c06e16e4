"""The PNG report's "Why" panel: the top differences, the coverage, the compiles and the parity
in words beside the bar chart of the top differences; the attribution's rows that differ most;
the parity plots. Styled by the report figure's sheet (`ui/report_png.py`: the object
names `Box`, `Section`, `Key`); drawn with the "Why" tab's plots (`why_plots.py`)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from xlagui.present import compiles, explain, parity
from xlagui.present.levels import Level
from xlagui.present.why_data import WhyData
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.why.why_plots import DifferenceChart, ParityPlot

PNG_ROWS = 8  # the attribution's rows that differ most (the window has all)
PLOT_HEIGHT = 280


def _label(text: str, name: str = "", *, rich: bool = False) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    if name:
        label.setObjectName(name)
    return label


def _bullets(lines: Sequence[str], colour: str = "") -> QLabel:
    style = f" style='color:{colour}'" if colour else ""
    return _label("".join(f"<div{style}>• {html.escape(line)}</div>" for line in lines),
                  rich=True)


def _grid(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> QGridLayout:
    grid = QGridLayout()
    grid.setHorizontalSpacing(14)
    grid.setVerticalSpacing(3)
    for c, text in enumerate(columns):
        grid.addWidget(_label(text, "Key"), 0, c)
    for r, row in enumerate(rows, start=1):
        for c, text in enumerate(row):
            grid.addWidget(_label(text), r, c, Qt.AlignmentFlag.AlignTop)
    return grid


class WhyFigurePanel(QFrame):
    """The "Why" panel of the PNG report, for a comparison that has a why
    (`WhyData.empty` is False).

    Signals: none.
    """

    def __init__(self, why: WhyData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Box")
        v = QVBoxLayout(self)
        v.setContentsMargins(16, 12, 16, 12)
        v.setSpacing(10)
        v.addWidget(_label("Why: where the time goes, the compiles, the same numbers?",
                           "Section"))
        self.lines: list[str] = []  # every sentence the panel says, in order (for a test)
        top = QHBoxLayout()
        top.setSpacing(16)
        top.addLayout(self._words(why), 6)
        self.chart: DifferenceChart | None = None
        if why.explain is not None:
            self.chart = DifferenceChart(font_pt=10.5, interactive=False, antialias=True)
            self.chart.show(why.explain)
            self.chart.widget.setFixedHeight(PLOT_HEIGHT)
            right = QVBoxLayout()
            right.addWidget(_label(self.chart.key_html("11pt"), rich=True))
            right.addWidget(self.chart.widget)
            right.addStretch(1)
            top.addLayout(right, 5)
        v.addLayout(top)
        self._add_bottom(v, why)

    def _words(self, why: WhyData) -> QVBoxLayout:
        words = QVBoxLayout()
        if why.explain is not None:
            self._say(words, explain.difference_lines(why.explain))
            self._say(words, [*explain.coverage_lines(why.explain), explain.THREADS_NOTE],
                      LEVEL_COLORS[Level.INFO])
        if why.compilations:
            self._say(words, compiles.compile_lines(why.compilations))
        for p in why.parity.values():
            self._say(words, [parity.parity_sentence(p)],
                      LEVEL_COLORS[parity.kind_level(p.kind)])
        words.addStretch(1)
        return words

    def _say(self, layout: QVBoxLayout, lines: Sequence[str], colour: str = "") -> None:
        self.lines += lines
        layout.addWidget(_bullets(lines, colour))

    def _add_bottom(self, v: QVBoxLayout, why: WhyData) -> None:
        """The attribution's rows that differ most, then the parity plots of the first arm
        with its losses, across the panel."""
        if why.explain is not None:
            table = explain.attribution_table(why.explain, limit=PNG_ROWS)
            v.addLayout(_grid(table.columns, table.rows))
        self.parity_plot: ParityPlot | None = None
        shown = next((p for p in why.parity.values() if p.losses and p.baseline_losses), None)
        if shown is None:
            return
        self.parity_plot = ParityPlot(font_pt=10.5, interactive=False, antialias=True)
        self.parity_plot.show(shown)
        v.addWidget(_label(self.parity_plot.key_html("11pt"), rich=True))
        row = QHBoxLayout()
        row.setSpacing(16)
        for w in (self.parity_plot.loss, self.parity_plot.diff):
            w.setFixedHeight(PLOT_HEIGHT)
            row.addWidget(w, 1)
        v.addLayout(row)
