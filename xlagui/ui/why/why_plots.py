"""The "why"'s two plots, for the window's "Why" tab and the PNG alike: the rows that differ most
from the baseline as paired bars (the baseline's and the arm's thread-time per step), and the
parity plot (the loss per step on both sides, and their relative difference against the
rounding reference's). Created once; `show` feeds them again."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pyqtgraph as pg

from xlagui.present import explain as words
from xlagui.present.why_data import BASELINE, Explain, ParityView
from xlagui.ui.shared import plots

BAR = 0.38  # each of a pair's bars, in rows


def _short(layer: str, pass_: str) -> str:
    """A bar's label: "block_1_depthwise · input gradient"."""
    return layer if pass_ == "other" else f"{layer} · {words.pass_words(pass_)}"


class DifferenceChart:
    """The top differences as pairs of horizontal bars (the baseline's, the arm's), the largest
    on top, each with its figures at its end."""

    def __init__(self, *, font_pt: float = 9.0, interactive: bool = True,
                 antialias: bool = False) -> None:
        self.widget = plots.make_plot("", "thread-time per step (s)", "", font_pt=font_pt,
                                      interactive=interactive, antialias=antialias)
        self.item = self.widget.getPlotItem()
        self.item.showGrid(x=True, y=False, alpha=0.15)
        self.labels: list[str] = []  # the rows' labels, top first (what a reader or test sees)
        self.key: list[tuple[str, str]] = []  # (arm, its words) of each colour

    def key_html(self, size: str = "9pt") -> str:
        """What the chart shows and its colours' key, for a label above it (a title inside it
        would widen the plot past its view)."""
        if not self.key:
            return "No differences to show."
        return (f"<span style='font-size:{size}'>Where the arms differ most, thread-time per "
                "step:</span>&nbsp;&nbsp;"
                + plots.key_html([("■", plots.color(a), w) for a, w in self.key], size=size))

    def show(self, explain: Explain | None, n: int = 6) -> None:
        self.item.clear()
        self.labels, self.key = [], []
        found = words.differences(explain, n) if explain is not None else []
        if not found:
            return
        count = len(found)
        ys = [float(count - i) for i in range(count)]
        top = max(max(d.arm_seconds, d.baseline_seconds) for d in found) or 1.0
        for side, offset in ((BASELINE, BAR / 2), ("arm", -BAR / 2)):
            widths = [d.baseline_seconds if side == BASELINE else d.arm_seconds for d in found]
            brushes = [pg.mkBrush(plots.color(BASELINE if side == BASELINE else d.arm, 220))
                       for d in found]
            self.item.addItem(pg.BarGraphItem(x0=[0.0] * count, y=[y + offset for y in ys],
                                              height=BAR, width=widths, brushes=brushes,
                                              pens=[pg.mkPen("#5f6368", width=0.6)] * count))
            for y, w in zip(ys, widths, strict=True):
                text = pg.TextItem(words.step_time(w), color="#202124", anchor=(0, 0.5))
                text.setPos(w + top * 0.015, y + offset)
                self.item.addItem(text)
        self.labels = [_short(d.layer, d.pass_) for d in found]
        self.item.getAxis("left").setTicks([[(y, label)
                                             for y, label in zip(ys, self.labels, strict=True)]])
        self.item.setXRange(0, top * 1.45, padding=0)
        arms = list(dict.fromkeys(d.arm for d in found))
        self.key = [(BASELINE, words.arm_short(BASELINE)),
                    *((arm, words.arm_short(arm)) for arm in arms)]
        self.item.setTitle(None)  # a long title widens the plot past its view: the key says it
        self.item.setYRange(0.4, count + 0.6, padding=0)


def _relative(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """|a − b| / |b| per step; NaN (a gap in the log plot) where either is missing, b is 0, or
    they are equal (a difference of 0 has no place on a log axis)."""
    out = []
    for x, y in zip(a, b, strict=False):
        ok = math.isfinite(x) and math.isfinite(y) and y != 0 and x != y
        out.append(abs(x - y) / abs(y) if ok else math.nan)
    return out


class ParityPlot:
    """The loss per step of the baseline and an arm over the same first batches, and their
    relative difference per step beside the nudged baseline's (what rounding alone does)."""

    def __init__(self, *, font_pt: float = 9.0, interactive: bool = True,
                 antialias: bool = False) -> None:
        self.loss = plots.make_plot("Loss per step, same seed and batches", "step", "loss",
                                    font_pt=font_pt, interactive=interactive,
                                    antialias=antialias)
        self.diff = plots.make_plot("Relative loss difference from the baseline", "step",
                                    "|arm − baseline| ÷ baseline", font_pt=font_pt,
                                    interactive=interactive, antialias=antialias)
        self.diff.getPlotItem().setLogMode(x=False, y=True)
        self.shown: ParityView | None = None

    def key_html(self, size: str = "9pt") -> str:
        """The curves' key, for a label above the plots (a legend inside would cover them)."""
        p = self.shown
        if p is None or not p.losses:
            return ""
        key = [("━━", plots.color(BASELINE), "baseline"),
               ("╍●╍", plots.color(p.arm), words.arm_short(p.arm))]
        if p.reference_losses:
            key.append(("╍╍", plots.color("val"), "baseline nudged by one float32 ulp "
                        "(what rounding alone does)"))
        return plots.key_html(key, size=size)

    def show(self, parity: ParityView | None) -> None:
        for w in (self.loss, self.diff):
            w.getPlotItem().clear()
        self.shown = parity
        if parity is None or not parity.losses or not parity.baseline_losses:
            self.loss.getPlotItem().setTitle("The losses per step were not recorded")
            return
        self.loss.getPlotItem().setTitle("Loss per step, same seed and batches")
        count = max(len(parity.losses), len(parity.baseline_losses))
        steps = [float(i) for i in range(1, count + 1)]
        arm_col, base_col = plots.color(parity.arm), plots.color(BASELINE)
        plots.set_xy(plots.line(self.loss, base_col, width=2.5, name="baseline"), steps,
                     parity.baseline_losses)
        plots.set_xy(plots.line(self.loss, arm_col, width=1.5, dashed=True, symbol="o",
                                name=words.arm_short(parity.arm)), steps, parity.losses)
        plots.set_xy(plots.line(self.diff, arm_col, width=2, symbol="o",
                                name=words.arm_short(parity.arm)),
                     steps, _relative(parity.losses, parity.baseline_losses))
        if parity.reference_losses:
            plots.set_xy(plots.line(self.diff, plots.color("val"), width=1.5, dashed=True,
                                    name="baseline nudged by 1 ulp"),
                         steps, _relative(parity.reference_losses, parity.baseline_losses))
