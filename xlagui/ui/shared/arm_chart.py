"""Every arm against the baseline as bars on a log axis in words, for the PNG report."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from xlagui.core.protocol.identity import Role
from xlagui.present.arm_bars import ArmBar
from xlagui.present.levels import Level
from xlagui.ui.shared import plots
from xlagui.ui.shared.axes import speed_ticks
from xlagui.ui.shared.theme import LEVEL_COLORS

BAR_HEIGHT = 0.62
MARK_COLOR = LEVEL_COLORS[Level.ERROR]


class ArmChart:
    """The arms' speed against the baseline as horizontal bars on a log axis, fastest on top:
    right of the line at "same" faster, left of it slower, each said in words ("2.04×
    slower", never 0.49×), with their Bonferroni-adjusted 95% intervals (the arms table's) as
    whiskers; an arm that did not engage, or learns worse, is drawn pale with the reason in
    red."""

    def __init__(self, bars: list[ArmBar]) -> None:
        self.bars = bars
        self.widget = plots.make_plot("", "speed per step against the baseline (log scale)",
                                      "", font_pt=10.5, interactive=False, antialias=True)
        item = self.widget.getPlotItem()
        n = len(bars)
        ys = [float(n - i) for i in range(n)]  # the fastest at the top
        logs = [float(np.log10(b.speedup)) for b in bars]
        brushes = [pg.mkBrush(plots.color(b.variant, 70 if b.mark else 220)) for b in bars]
        pens = [pg.mkPen(MARK_COLOR, width=1.5, style=Qt.PenStyle.DashLine) if b.mark
                else pg.mkPen(plots.color(b.variant).darker(130), width=1) for b in bars]
        # From the line at "same" to the bar's speed, leftwards for a slower arm.
        self.bar_item = pg.BarGraphItem(x0=[min(0.0, x) for x in logs], y=ys,
                                        height=BAR_HEIGHT, width=[abs(x) for x in logs],
                                        brushes=brushes, pens=pens)
        item.addItem(self.bar_item)
        ends = [(float(np.log10(b.low)) if b.low else x, float(np.log10(b.high)) if b.high
                 else x) for b, x in zip(bars, logs, strict=True)]
        with_ci = [(y, x, lo, hi) for y, x, (lo, hi), b in zip(ys, logs, ends, bars, strict=True)
                   if b.low is not None and b.high is not None]
        if with_ci:
            x = np.array([c[1] for c in with_ci])
            self.whiskers = pg.ErrorBarItem(
                x=x, y=np.array([c[0] for c in with_ci]),
                left=x - np.array([c[2] for c in with_ci]),
                right=np.array([c[3] for c in with_ci]) - x,
                beam=0.22, pen=pg.mkPen("#202124", width=1.6))
            item.addItem(self.whiskers)
        self.one = pg.InfiniteLine(pos=0.0, angle=90, pen=pg.mkPen(
            "#5f6368", width=1.2, style=Qt.PenStyle.DashLine))
        item.addItem(self.one)
        low = min([0.0] + [lo for lo, _ in ends])
        high = max([0.0] + [hi for _, hi in ends])
        span = max(high - low, float(np.log10(2)))
        self.captions: list[pg.TextItem] = []
        for y, b, (_lo, hi) in zip(ys, bars, ends, strict=True):
            text = pg.TextItem(b.caption, color=MARK_COLOR if b.mark else "#202124",
                               anchor=(0, 0.5))
            text.setPos(max(hi, 0.0) + span * 0.03, y)  # right of the bar and the line
            item.addItem(text)
            self.captions.append(text)
        self.range = (low - span * 0.08, high + span * 1.1)  # room for the words on the right
        axis = item.getAxis("bottom")
        axis.setTicks([speed_ticks(*self.range)])
        left = item.getAxis("left")
        left.setTicks([[(y, b.arm + (" (XLA)" if b.variant == Role.XLA else ""))
                        for y, b in zip(ys, bars, strict=True)]])
        item.showGrid(x=True, y=False, alpha=0.15)
        item.setXRange(*self.range, padding=0)
        item.setYRange(0.4, n + 0.6, padding=0)
        self.widget.setFixedHeight(90 + 46 * n)
