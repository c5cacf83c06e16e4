"""The sweep's plot: each arm's speed-up against the swept setting with its 95% interval as a
band and a line at 1 (no difference), or, when two settings are swept, a heatmap of one arm's
speed-up with a colour bar.

It imports pyqtgraph, which takes a while: the tab builds it on first use. Its items are made
once per plan and then only fed (`setData`, `setImage`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QStackedWidget, QVBoxLayout, QWidget

from xlagui.core.sweep.flips import sorted_values
from xlagui.present import sweep_rows as rows
from xlagui.present.levels import Level
from xlagui.present.sweep import axis_noun
from xlagui.present.units import speed_words
from xlagui.ui.shared.plots import color, legend, make_plot
from xlagui.ui.shared.theme import LEVEL_COLORS

if TYPE_CHECKING:
    from collections.abc import Mapping

    from xlagui.core.sweep.cell import CellResult
    from xlagui.core.sweep.plan import SweepPlan

# Red where the arm is slower, white at no difference, green where it is faster; the colour
# scale is the speed-up's log, so 2× faster and 2× slower are equally strong.
HEAT_COLORS = pg.ColorMap(pos=[0.0, 0.5, 1.0], color=[LEVEL_COLORS[Level.ERROR], "#f7f7f7",
                                                      LEVEL_COLORS[Level.OK]])
LEAST_LOG_RANGE = math.log2(1.25)  # a sweep of near-ties is not painted in full colour


class _ArmLine:
    """One arm's curve, its interval band and the two invisible edges the band fills."""

    def __init__(self, plot: pg.PlotWidget, arm: str) -> None:
        col = color(arm)
        item = plot.getPlotItem()
        # Curves, not PlotDataItems: a PlotDataItem without a pen keeps no path to fill to.
        self.low = pg.PlotCurveItem([], [], pen=pg.mkPen(color(arm, 0)))
        self.high = pg.PlotCurveItem([], [], pen=pg.mkPen(color(arm, 0)))
        self.band = pg.FillBetweenItem(self.low, self.high, brush=pg.mkBrush(color(arm, 50)))
        item.addItem(self.band)
        self.curve = item.plot([], [], pen=pg.mkPen(col, width=2), symbol="o", symbolSize=7,
                               symbolBrush=pg.mkBrush(col), symbolPen=None, name=arm)
        # Cells measured on a busy machine: an amber ring around the point.
        self.busy = pg.PlotDataItem([], [], pen=None, symbol="o", symbolSize=15,
                                    symbolBrush=None,
                                    symbolPen=pg.mkPen(LEVEL_COLORS[Level.WARNING], width=2))
        item.addItem(self.busy)

    def show(self, series: rows.ArmSeries) -> None:
        self.low.setData(series.x, series.low)
        self.high.setData(series.x, series.high)
        self.curve.setData(series.x, series.speedup)
        self.busy.setData(series.busy_x, series.busy_speedup)


class SweepPlot(QWidget):
    """The sweep's plot (a line per arm, or a heatmap), fed the plan and its results.

    Signals: none.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.arm_choice = QComboBox()
        self.arm_choice.setToolTip("The arm whose speed-up the heatmap shows")
        self.arm_choice.currentTextChanged.connect(self._on_arm_choice_changed)
        layout.addWidget(self.arm_choice)
        self.pages = QStackedWidget()
        layout.addWidget(self.pages, 1)
        self.note = QLabel(rows.NO_CELLS_YET)
        self.note.setObjectName("Placeholder")
        self.note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.note.setWordWrap(True)
        self.lines = make_plot("Speed-up per arm", "", rows.SPEEDUP_AXIS)
        self.lines.getPlotItem().addItem(pg.InfiniteLine(
            pos=1.0, angle=0, pen=pg.mkPen("#777777", width=1, style=Qt.PenStyle.DashLine)))
        self._legend = legend(self.lines)
        self.heat = make_plot("Speed-up", "", "")
        self.image = pg.ImageItem()
        self.heat.getPlotItem().addItem(self.image)
        self.colour_bar = pg.ColorBarItem(colorMap=HEAT_COLORS, interactive=False,
                                          label="log₂ speed-up")
        self.colour_bar.setImageItem(self.image, insert_in=self.heat.getPlotItem())
        self._labels: list[pg.TextItem] = []
        for page in (self.note, self.lines, self.heat):
            self.pages.addWidget(page)
        self._plan: SweepPlan | None = None
        self._arm_lines: dict[str, _ArmLine] = {}
        self._results: Mapping[str, CellResult] = {}
        self.arm_choice.hide()

    @property
    def kind(self) -> str:
        """What it shows now: "note", "lines" or "heatmap" (for tests and the PNG)."""
        return ("note", "lines", "heatmap")[self.pages.currentIndex()]

    def show_plan(self, plan: SweepPlan) -> None:
        """Make the plot's items for `plan` (its arms, its swept axes); nothing is drawn yet."""
        self._plan = plan
        self._results = {}
        for line in self._arm_lines.values():
            for item in (line.band, line.curve):
                self.lines.getPlotItem().removeItem(item)
        self._legend.clear()
        self._arm_lines = {arm: _ArmLine(self.lines, arm) for arm in rows.planned_arms(plan)}
        swept = rows.swept_axes(plan)
        x_axis = swept[0] if swept else None
        bottom = self.lines.getPlotItem().getAxis("bottom")
        if x_axis is not None:
            bottom.setTicks([[(float(i), rows.tick_text(x_axis.name, v))
                              for i, v in enumerate(sorted_values(x_axis))]])
            self.lines.getPlotItem().setLabel("bottom", axis_noun(x_axis.name))
        blocked = self.arm_choice.blockSignals(True)
        self.arm_choice.clear()
        self.arm_choice.addItems(rows.planned_arms(plan))
        self.arm_choice.blockSignals(blocked)
        self.arm_choice.setVisible(len(swept) == rows.PLOT_AXES_MAX
                                   and self.arm_choice.count() > 1)
        self.note.setText(rows.TOO_MANY_AXES.format(n=len(swept))
                          if len(swept) > rows.PLOT_AXES_MAX else rows.NO_CELLS_YET)
        self.pages.setCurrentWidget(self.note)

    def show_results(self, results: Mapping[str, CellResult]) -> None:
        """Draw what `results` (by cell key) say: every finished cell so far."""
        self._results = results
        plan = self._plan
        if plan is None:
            return
        swept = len(rows.swept_axes(plan))
        if swept > rows.PLOT_AXES_MAX or not any(r.arms for r in results.values()):
            self.pages.setCurrentWidget(self.note)
            return
        if swept == rows.PLOT_AXES_MAX:
            self._draw_heat(rows.heat_grid(plan, results, self.arm_choice.currentText()))
            self.pages.setCurrentWidget(self.heat)
            return
        for series in rows.line_series(plan, results):
            self._arm_lines[series.arm].show(series)
        self.pages.setCurrentWidget(self.lines)

    def _draw_heat(self, grid: rows.HeatGrid) -> None:
        values = np.asarray(grid.values, dtype=float)  # rows: y, columns: x
        with np.errstate(divide="ignore", invalid="ignore"):
            logs = np.log2(values)
        finite = logs[np.isfinite(logs)]
        reach = max(float(np.abs(finite).max()) if finite.size else 0.0, LEAST_LOG_RANGE)
        # ImageItem's first index is x: the transpose puts the first swept axis across.
        self.image.setImage(logs.T, autoLevels=False)
        self.colour_bar.setLevels((-reach, reach))
        item = self.heat.getPlotItem()
        item.setTitle(f"{grid.arm} speed-up")
        item.setLabel("bottom", grid.x_title)
        item.setLabel("left", grid.y_title)
        item.getAxis("bottom").setTicks([[(i + 0.5, v) for i, v in enumerate(grid.x_values)]])
        item.getAxis("left").setTicks([[(i + 0.5, v) for i, v in enumerate(grid.y_values)]])
        for label in self._labels:
            item.removeItem(label)
        self._labels = []
        for r, row in enumerate(grid.values):
            for c, value in enumerate(row):
                if value == value:  # not NaN
                    label = pg.TextItem(speed_words(value), color="#222222", anchor=(0.5, 0.5))
                    label.setPos(c + 0.5, r + 0.5)
                    item.addItem(label)
                    self._labels.append(label)
        item.setRange(xRange=(0, len(grid.x_values)), yRange=(0, len(grid.y_values)),
                      padding=0.02)

    def _on_arm_choice_changed(self, _arm: str) -> None:
        self.show_results(self._results)
