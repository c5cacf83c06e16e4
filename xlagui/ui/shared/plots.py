"""pyqtgraph plots in the app's style, and the colours of the two sides.

This module imports pyqtgraph, which takes a while; the main window loads it after it is shown.
Plots are created once and later only fed with `setData`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QGraphicsItem, QLabel

from xlagui.core.analysis.pairs import InterleavedSummary
from xlagui.core.protocol.identity import Role, StopReason
from xlagui.present.limits import Roofline
from xlagui.present.traces import RunTrace, SpeedupCurve, summary_curve
from xlagui.ui.shared.axes import DecadeAxis, SpeedAxis
from xlagui.ui.shared.theme import VARIANT_TITLES, variant_color

# Live plots draw without antialiasing: it costs most of a repaint on a busy machine, and the
# window redraws them up to 15 times a second. The PNG report turns it on per plot.
pg.setConfigOptions(antialias=False, background="w", foreground="#3a3a3a")

AXIS_PEN = "#9a9a9a"


def color(variant: str, alpha: int = 255) -> QColor:
    """The colour of a side ("baseline", "xla") or arm ("bf16", "jit+fp16", ...)."""
    c = QColor(variant_color(variant))
    c.setAlpha(alpha)
    return c


def make_plot(
    title: str,
    x_label: str,
    y_label: str,
    *,
    font_pt: float = 9.0,
    interactive: bool = True,
    antialias: bool = False,
    axes: Mapping[str, pg.AxisItem] | None = None,
) -> pg.PlotWidget:
    """A white plot with a title, labelled axes and a faint grid (`axes`: axis items of its
    own for some sides, `DecadeAxis` for one)."""
    widget = pg.PlotWidget(background="w", axisItems=dict(axes or {}))
    widget.setAntialiasing(antialias)
    widget.antialias = antialias
    item = widget.getPlotItem()
    item.setTitle(title, size=f"{font_pt + 1:.0f}pt", color="#222222")
    tick_font = QFont()
    tick_font.setPointSizeF(font_pt - 0.5)
    label_style = {"font-size": f"{font_pt:.0f}pt", "color": "#444444"}
    for side, text in (("bottom", x_label), ("left", y_label)):
        axis = item.getAxis(side)
        axis.setPen(pg.mkPen(AXIS_PEN))
        axis.setTextPen(pg.mkPen("#444444"))
        axis.setStyle(tickFont=tick_font)
        axis.enableAutoSIPrefix(False)
        item.setLabel(side, text, **label_style)
    item.showGrid(x=True, y=True, alpha=0.15)
    item.hideButtons()
    # Axes and title keep a rendered copy: a curve changing inside the view then repaints
    # without drawing their text again (most of a repaint's cost on a busy machine).
    for side in ("bottom", "left"):
        item.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    item.titleLabel.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    item.setMenuEnabled(interactive)
    item.getViewBox().setMouseEnabled(x=interactive, y=interactive)
    widget.setMinimumSize(200, 150)
    return widget


def key_html(key: list[tuple[str, QColor, str]], size: str = "8.5pt", *,
             whole: bool = False) -> str:
    """A one-line key (glyph, colour, words) for a QLabel next to small plots: a legend
    inside them would cover their curves, and a long title would widen them. `whole`: a
    line breaks between the entries, never inside one (a key that wraps)."""
    join = "&nbsp;&nbsp; " if whole else "&nbsp;&nbsp;&nbsp;"
    return join.join(
        f"<span style='color:{col.name()}; font-size:{size}'>{glyph}</span>"
        f"<span style='color:#5f6368; font-size:{size}'>&nbsp;"
        f"{words.replace(' ', '&nbsp;') if whole else words}</span>"
        for glyph, col, words in key
    )


def loss_key(variant: str) -> list[tuple[str, QColor, str]]:
    col = color(variant)
    return [("━━", col, "loss per batch (smoothed)"),
            ("●", col.darker(140), "train loss per epoch"),
            ("▪╍", color("val"), "validation loss")]


LEGEND_OFFSETS = {"top-left": (8, 8), "top-right": (-8, 8), "bottom-left": (8, -8),
                  "bottom-right": (-8, -8)}


def place_legend(item: pg.LegendItem, corner: str) -> None:
    """Move a legend to another corner of its plot's view."""
    dx, dy = LEGEND_OFFSETS[corner]
    at = (1 if dx < 0 else 0, 1 if dy < 0 else 0)
    item.anchor(itemPos=at, parentPos=at, offset=(dx, dy))


def legend(widget: pg.PlotWidget, font_pt: float = 8.0, corner: str = "top-right"
           ) -> pg.LegendItem:
    """A legend in the corner the curves leave free: top left for times rising from the
    origin, bottom left for losses falling from the top left."""
    item = widget.getPlotItem().addLegend(offset=LEGEND_OFFSETS[corner],
                                          labelTextSize=f"{font_pt:.0f}pt", verSpacing=-6)
    item.setBrush(pg.mkBrush(255, 255, 255, 200))
    item.setPen(pg.mkPen("#d0d0d0"))
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    return item


def line(widget: pg.PlotWidget, col: QColor, *, width: float = 2.0, dashed: bool = False,
         symbol: str | None = None, name: str | None = None) -> pg.PlotDataItem:
    style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
    pen = pg.mkPen(col, width=width, style=style)
    kwargs: dict[str, object] = {"pen": pen, "name": name,
                                 "antialias": getattr(widget, "antialias", False)}
    if symbol:
        kwargs.update(symbol=symbol, symbolSize=6, symbolBrush=pg.mkBrush(col), symbolPen=None)
    item = widget.getPlotItem().plot([], [], **kwargs)
    return item


def dots(widget: pg.PlotWidget, col: QColor, *, symbol: str = "o", size: float = 7,
         name: str | None = None) -> pg.PlotDataItem:
    return widget.getPlotItem().plot(
        [], [], pen=None, symbol=symbol, symbolSize=size, symbolBrush=pg.mkBrush(col),
        symbolPen=pg.mkPen("w", width=1), name=name,
        antialias=getattr(widget, "antialias", False),
    )


def set_xy(item: pg.PlotDataItem, x: Sequence[float], y: Sequence[float]) -> None:
    """Feed a curve; NaN values leave gaps instead of breaking the line."""
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    n = min(len(xs), len(ys))
    item.setData(xs[:n], ys[:n], connect="finite")


def set_cumulative(item: pg.PlotDataItem, trace: RunTrace) -> None:
    """Cumulative wall time per epoch, starting from (0, 0): training begins at no time."""
    if trace.epoch_x:
        set_xy(item, [0.0, *trace.epoch_x], [0.0, *trace.cumulative])
    else:
        item.setData([], [])


class StickyYRange:
    """Keeps a plot's y range still while the data stays inside it.

    Autoranging on every update moves the axis, which then lays out and draws its labels
    again: the costliest part of a repaint. This range changes only when the data (or what it
    is expected to reach) leaves it, or fills less than a third of it; then it takes some
    headroom so that the next change is a while away.
    """

    def __init__(self, widget: pg.PlotWidget, headroom: float = 0.15) -> None:
        self.widget = widget
        self.headroom = headroom
        self.range: tuple[float, float] | None = None
        widget.getPlotItem().enableAutoRange(y=False)

    def reset(self) -> None:
        self.range = None

    def update(self, low: float, high: float) -> bool:
        """Make sure [low, high] is in view; True if the range had to change."""
        if not (low == low and high == high):  # NaN
            return False
        # At least a tenth of the values' size: a flat loss stays flat instead of having its
        # noise blown up to the full height.
        least = max(abs(low), abs(high)) * 0.1 or 1e-9
        if high - low < least:
            middle = (high + low) / 2
            low, high = (max(0.0, middle - least / 2) if low >= 0 else middle - least / 2,
                         middle + least / 2)
        if self.range is not None:
            r_low, r_high = self.range
            if r_low <= low and high <= r_high and (high - low) >= (r_high - r_low) / 3:
                return False
        pad = (high - low) * self.headroom
        self.range = (low if low == 0 else low - pad, high + pad)
        self.widget.getPlotItem().setYRange(*self.range, padding=0)
        return True


def finite_max(*series: Sequence[float]) -> float:
    values = [v for s in series for v in s if v == v]
    return max(values) if values else float("nan")


def finite_min(*series: Sequence[float]) -> float:
    values = [v for s in series for v in s if v == v]
    return min(values) if values else float("nan")


class _ArmCurves:
    """One arm's running estimate and its band on the speed-up plot."""

    def __init__(self, plot: pg.PlotItem, variant: str, antialias: bool) -> None:
        band_pen = pg.mkPen(color(variant, 90), width=1)
        self.upper = pg.PlotDataItem([], [], pen=band_pen, antialias=antialias)
        self.lower = pg.PlotDataItem([], [], pen=band_pen, antialias=antialias)
        self.band = pg.FillBetweenItem(self.lower, self.upper,
                                       brush=pg.mkBrush(color(variant, 40)))
        self.estimate = pg.PlotDataItem([], [], pen=pg.mkPen(color(variant), width=2),
                                        antialias=antialias)
        # Rounds something else disturbed (set aside): dark crosses, clear on every arm's colour.
        self.disturbed = pg.PlotDataItem([], [], pen=None, symbol="x", symbolSize=11,
                                         symbolPen=pg.mkPen(DISTURBED_COLOR, width=2))
        for it in (self.band, self.upper, self.lower, self.estimate, self.disturbed):
            plot.addItem(it)

    def show(self, curve: SpeedupCurve | None) -> None:
        if curve is None:
            for it in (self.estimate, self.upper, self.lower, self.disturbed):
                it.setData([], [])
            return
        self.estimate.setData(curve.x, curve.speedup)
        self.upper.setData(curve.band_x, curve.upper)
        self.lower.setData(curve.band_x, curve.lower)
        self.disturbed.setData(curve.disturbed_x, curve.disturbed_y)


def arm_title(variant: str) -> str:
    return VARIANT_TITLES.get(variant, variant)


LEGEND_ROW_PX = 19  # a legend's row at the plot's font
LEGEND_FRAME_PX = 26  # its frame, its offset from the view's edge and a little air


class SpeedupPlot:
    """The interleaved measurement converging: each arm's speed-up estimate after each round,
    in the arm's colour, its 95% band narrowing, the line of no difference, and a marker where
    the measurement stopped. `widget` is created once; `show_summary` only feeds it new data.
    `estimate`, `upper` and `lower` are the XLA side's curves."""

    def __init__(self, font_pt: float = 9.0, interactive: bool = True,
                 antialias: bool = False) -> None:
        self.widget = make_plot(
            TITLE_XLA,
            "pairs of blocks",
            "speed per step",
            font_pt=font_pt,
            interactive=interactive,
            antialias=antialias,
            axes={"left": SpeedAxis("left")},
        )
        self._antialias = antialias
        item = self.widget.getPlotItem()
        self.one = pg.InfiniteLine(
            pos=1.0, angle=0, pen=pg.mkPen("#777777", style=Qt.PenStyle.DashLine)
        )
        item.addItem(self.one)
        self.arms: dict[str, _ArmCurves] = {}
        xla = self._curves(Role.XLA)
        self.estimate, self.upper, self.lower, self.band = (
            xla.estimate, xla.upper, xla.lower, xla.band)
        # Where the line of no difference is, when the data are far from it and it is out of
        # view (`show_summary` fits the axis to the data).
        self.one_label = pg.TextItem("", color="#6b6f76", anchor=(0.5, 0))
        item.addItem(self.one_label, ignoreBounds=True)
        self.stop = pg.InfiniteLine(angle=90, pen=pg.mkPen("#222222", width=1.5))
        self.stop_label = pg.TextItem("", color="#222222", anchor=(1.05, 0))
        item.addItem(self.stop)
        item.addItem(self.stop_label)
        self.stop.hide()
        self.legend = legend(self.widget, font_pt=font_pt - 1, corner="top-right")
        self.legend_corner = "top-right"
        self.rounds = 0  # the most rounds any arm's curve has
        self._in_legend: list[str] = []
        self.widget.setToolTip("Speed-up = the baseline's step time ÷ the arm's, estimated "
                               "after each pair of blocks; the band is its 95% interval; a "
                               "cross marks a round other programs disturbed (set aside)")
        self.widget.setMinimumSize(240, 150)

    def _room_for_legend(self, curves: Mapping[str, SpeedupCurve], low: float, high: float,
                         rounds: int, *, visible: bool, one: bool = True
                         ) -> tuple[float, float]:
        """The y range, with the legend's corner on the left clear of every curve and band and
        of the line of no difference:
        the corner they leave free, else the one they crowd less with the range stretched
        until they clear it. The stop marker's words are on the right where the curves end;
        a legend placed for the XLA curve alone once covered bf16's."""
        if not visible:
            return low, high
        view_px = max(float(self.widget.getPlotItem().getViewBox().height()), 120.0)
        share = min((len(curves) * LEGEND_ROW_PX + LEGEND_FRAME_PX) / view_px, 0.6)
        # The legend's width, generously, as a share of the rounds: its longest name and key.
        names = max(len(arm_title(v)) for v in curves)
        view_w = max(float(self.widget.getPlotItem().getViewBox().width()), 160.0)
        reach = 0.5 + rounds * min((names * 8 + 60) / view_w, 1.0)
        left = [1.0] * one + [v for c in curves.values()  # the line of no difference too
                for xs, ys in ((c.x, c.speedup), (c.band_x, c.upper), (c.band_x, c.lower))
                for x, v in zip(xs, ys, strict=False) if x <= reach]
        if not left:  # nothing under the legend's reach: any corner is clear
            return low, high
        span = high - low
        margin = 0.02 * span
        # Each corner's view: as it is where the curves leave it free, else stretched (up for
        # the top, down for the bottom) until they clear it; the least stretched one wins.
        views = {
            "bottom-left": (low, high) if min(left) > low + share * span else
            ((min(left) - margin - share * high) / (1 - share), high),
            "top-left": (low, high) if max(left) < high - share * span else
            (low, (max(left) + margin - share * low) / (1 - share)),
        }
        corner = min(views, key=lambda k: (views[k][1] - views[k][0], k != "bottom-left"))
        if corner != self.legend_corner:
            place_legend(self.legend, corner)
            self.legend_corner = corner
        return views[corner]

    def _curves(self, variant: str) -> _ArmCurves:
        curves = self.arms.get(variant)
        if curves is None:
            curves = self.arms[variant] = _ArmCurves(self.widget.getPlotItem(), variant,
                                                     self._antialias)
        return curves

    def _fit_y(self, curves: Mapping[str, SpeedupCurve], rounds: int, *, legend: bool
               ) -> tuple[float, float]:
        """Explicit ranges, fitted to the curves and their bands: the line of no difference
        too when it is within or near them (a span of theirs, or a tenth of their level),
        else words at the edge say it is beyond (a flat curve at 0.45 on an axis up to 1.0
        showed no detail of its own); then stretched where the legend needs a corner clear of
        them (`_room_for_legend`). Returns the view's low and high."""
        values = [v for c in curves.values() for v in c.values()]
        low, high = min(values), max(values)
        near = max(high - low, 0.1 * abs(high))
        one_in_view = low - near <= 1.0 <= high + near
        if one_in_view:
            low, high = min(low, 1.0), max(high, 1.0)
        pad = (high - low) * 0.08 or 0.05
        top, bottom = high + pad, low - pad
        words = "" if one_in_view else NO_CHANGE_ABOVE if high < 1.0 else NO_CHANGE_BELOW
        if words:
            # Room for the words at that edge, off the curves.
            room = max(high - low, 0.05) * 0.15
            top, bottom = (top + room, bottom) if high < 1.0 else (top, bottom - room)
        bottom, top = self._room_for_legend(curves, bottom, top, rounds, visible=legend,
                                            one=one_in_view)
        self.widget.getPlotItem().setXRange(0.5, rounds + 0.5, padding=0)
        self.widget.getPlotItem().setYRange(bottom, top, padding=0)
        self.one_label.setText(words)
        self.one_label.setAnchor((0.5, 0 if high < 1.0 else 1))
        self.one_label.setPos((rounds + 1) / 2, top if high < 1.0 else bottom)
        return bottom, top

    def shown(self) -> list[str]:
        """The arms whose curve has data, in the legend's order."""
        return list(self._in_legend)

    def show_summary(self, summary: InterleavedSummary | None,
                     curves: Mapping[str, SpeedupCurve] | None = None) -> None:
        """Draw every arm's running estimate: from `curves` (computed from the measuring
        workers' blocks, see `xlagui.present.traces.SpeedupTraces`) or, where none are given,
        the XLA side's from the summary's per-pair ratios (a replayed comparison draws exactly
        what the live one did)."""
        curve = summary_curve(summary) if summary is not None and not curves else None
        curves = {Role.XLA: curve} if curve is not None else curves or {}
        for variant, arm in self.arms.items():
            arm.show(curves.get(variant))
        for variant, curve in curves.items():
            self._curves(variant).show(curve)
        order = list(curves)
        if order != self._in_legend:
            self.legend.clear()
            for variant in order:
                self.legend.addItem(self.arms[variant].estimate, arm_title(variant))
            self._in_legend = order
        self.legend.setVisible(len(order) > 1)
        item = self.widget.getPlotItem()
        item.setTitle(TITLE_XLA if len(order) <= 1 else TITLE_ARMS)
        self.rounds = max((len(c.x) for c in curves.values()), default=0)
        if not curves:
            self.stop.hide()
            self.stop_label.setText("")
            self.one_label.setText("")
            return
        rounds = max(len(c.x) for c in curves.values())
        low, high = self._fit_y(curves, rounds, legend=len(order) > 1)
        stopped = summary.stopped_by if summary is not None else ""
        lead = curves.get(Role.XLA) or next(iter(curves.values()))
        upper = lead.speedup[-1] > (low + high) / 2
        # The words hang below the curve's end in the upper half, stand on it in the lower:
        # toward the middle of the view, never past its edge.
        self.stop_label.setAnchor((1.05, 0 if upper else 1))
        if stopped:
            self.stop.setPos(float(rounds))
            self.stop.show()
            self.stop_label.setText(STOP_WORDS.get(stopped, stopped))
            self.stop_label.setPos(float(rounds), lead.speedup[-1])
        else:
            self.stop.hide()
            self.stop_label.setText("")


DISTURBED_COLOR = "#202124"  # a round or an epoch other programs disturbed (issue 37)
# Said at the plot's edge when the line of no difference is out of view, beyond it.
NO_CHANGE_ABOVE = "▲ 1.0× (no change) is above"
NO_CHANGE_BELOW = "▼ 1.0× (no change) is below"

SYMBOL_GLYPHS = {"o": "●", "s": "■", "t": "▼", "d": "◆", "star": "★"}

# Short: the plot is a third of the window wide at 1280 px, and neither a title nor an axis
# label wraps (a long y label was cut off in a short plot).
TITLE_XLA = "Speed-up as pairs arrive"
TITLE_ARMS = TITLE_XLA  # "pairs" everywhere: the axis counts pairs of blocks

STOP_WORDS: dict[str, str] = {StopReason.TARGET: "precision reached",
                              StopReason.BUDGET: "budget spent", StopReason.STOPPED: "stopped",
                              StopReason.ERROR: "a worker failed"}


class RooflinePlot:
    """Log-log roofline: arithmetic intensity (FLOP/byte) against GFLOP/s, with the measured
    bandwidth slope and peak, the model's layer ceiling (dashed) and a dot per arm.

    Created once; `show_roofline` replaces what it draws (a handful of items)."""

    SYMBOLS = ("o", "s", "t", "d", "star")

    def __init__(self, font_pt: float = 9.0, interactive: bool = True,
                 antialias: bool = False) -> None:
        self.widget = make_plot("Roofline (log-log)", "FLOP per byte (estimated)", "GFLOP/s",
                                font_pt=font_pt, interactive=interactive, antialias=antialias,
                                axes={"bottom": DecadeAxis("bottom"),
                                      "left": DecadeAxis("left")})
        self.item = self.widget.getPlotItem()
        self.item.setLogMode(x=True, y=True)
        # The key is a label beside the plot, not a legend in it: every corner of a roofline
        # holds data (the bandwidth slope rises from the bottom left, the peak runs along the
        # top), and a legend there covered it.
        self.key_label = QLabel()
        self.key_label.setTextFormat(Qt.TextFormat.RichText)
        self.key_label.setWordWrap(True)
        self._key_size = f"{font_pt:.1f}pt"
        self.key: list[tuple[str, QColor, str]] = []
        self.roof = line(self.widget, QColor("#3a3a3a"), width=2)
        self.ceiling = line(self.widget, QColor("#8a6d00"), width=1.5, dashed=True)
        self.arms: list[pg.PlotDataItem] = []
        self.drawn: list[tuple[str, float, float]] = []  # label, FLOP/byte, GFLOP/s
        self.peaks: dict[str, pg.PlotDataItem] = {}  # a ceiling per other compute dtype

    def show_roofline(self, roof: Roofline | None) -> None:
        for item in [*self.arms, *self.peaks.values()]:
            self.item.removeItem(item)
        self.arms = []
        self.peaks = {}
        self.drawn = []
        self.key = []
        self.key_label.setText("")
        if roof is None:
            set_xy(self.roof, [], [])
            set_xy(self.ceiling, [], [])
            return
        low, high = roof.x_range
        xs = [low, roof.ridge, high]
        set_xy(self.roof, xs, [roof.roof(x) / 1e9 for x in xs])
        self.key.append(("━━", QColor("#3a3a3a"), "peak and bandwidth"))
        if roof.ceiling is not None:
            set_xy(self.ceiling, [low, high], [roof.ceiling / 1e9] * 2)
            self.key.append(("╍╍", QColor("#8a6d00"), "largest layers alone"))
        else:
            set_xy(self.ceiling, [], [])
        for dtype, peak in roof.other_peaks.items():
            # The same bandwidth slope, up to this dtype's own peak.
            ridge = peak / roof.bandwidth
            item = line(self.widget, QColor("#6b6f76"), width=1.5, dashed=True)
            xs = sorted({low, min(max(ridge, low), high), high})
            set_xy(item, xs, [min(peak, roof.bandwidth * x) / 1e9 for x in xs])
            self.peaks[dtype] = item
            self.key.append(("╍╍", QColor("#6b6f76"), f"{dtype} peak and bandwidth"))
        for i, p in enumerate(roof.points):
            symbol = self.SYMBOLS[i % 5]
            item = dots(self.widget, color(p.variant), symbol=symbol, size=11)
            set_xy(item, [p.intensity], [p.flops_per_second / 1e9])
            self.arms.append(item)
            self.drawn.append((p.label, p.intensity, p.flops_per_second / 1e9))
            self.key.append((SYMBOL_GLYPHS[symbol], color(p.variant), p.label))
        self.key_label.setText(key_html(self.key, size=self._key_size, whole=True))
        lowest = min([p.flops_per_second for p in roof.points] + [roof.roof(low)]) / 1e9
        self.item.setXRange(np.log10(low), np.log10(high), padding=0.02)
        # Every dot in view, even one above the measured peak (a probe that under-measured).
        top = max([roof.peak, *roof.other_peaks.values(),
                   *(p.flops_per_second for p in roof.points)])
        self.item.setYRange(np.log10(lowest / 3), np.log10(top / 1e9 * 2), padding=0)
