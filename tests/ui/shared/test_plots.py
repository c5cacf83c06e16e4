"""The speed-up plot: its axis fits its data (the line of no difference in view only when it
is near the curves, and said to be beyond the edge when it is not), its legend clear of every
arm's curve and band, and "pairs" in its words whatever the number of arms."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.ui.test_report_png import drawn_ticks
from xlagui.core.protocol.identity import Role
from xlagui.present.traces import SpeedupCurve
from xlagui.ui.shared import plots


def _curve(*speedups: float, band: float = 0.0) -> SpeedupCurve:
    x = [float(n) for n in range(1, len(speedups) + 1)]
    return SpeedupCurve(x=x, speedup=list(speedups), band_x=x if band else [],
                        upper=[s + band for s in speedups] if band else [],
                        lower=[s - band for s in speedups] if band else [])


def _y_range(qtbot: QtBot, curve: SpeedupCurve) -> tuple[plots.SpeedupPlot, float, float]:
    plot = plots.SpeedupPlot()
    qtbot.addWidget(plot.widget)
    plot.show_summary(None, {Role.XLA: curve})
    low, high = plot.widget.getPlotItem().viewRange()[1]
    return plot, low, high


def test_a_flat_curve_far_below_one_fills_the_axis(qtbot: QtBot) -> None:
    """A flat 0.45 was drawn on an axis from 0.45 to 1.0: a line along the bottom."""
    plot, low, high = _y_range(qtbot, _curve(0.45, 0.45, 0.46, 0.45, band=0.01))
    assert 0.40 < low < 0.44 and 0.47 < high < 0.55
    assert plot.one_label.toPlainText() == plots.NO_CHANGE_ABOVE


def test_a_curve_far_above_one_says_the_line_is_below(qtbot: QtBot) -> None:
    plot, low, high = _y_range(qtbot, _curve(2.0, 2.1, 2.05))
    assert low > 1.8 and high < 2.2
    assert plot.one_label.toPlainText() == plots.NO_CHANGE_BELOW


@pytest.mark.parametrize("speedups", [(0.9, 1.2, 1.1), (1.05, 1.2, 1.15), (0.8, 0.85, 0.9)])
def test_the_line_of_no_difference_is_in_view_when_near(qtbot: QtBot,
                                                         speedups: tuple[float, ...]) -> None:
    plot, low, high = _y_range(qtbot, _curve(*speedups))
    assert low < min(speedups) and max(speedups) < high
    assert low < 1.0 < high
    assert plot.one_label.toPlainText() == ""


def flat(speedup: float, rounds: int, width: float) -> SpeedupCurve:
    xs = [float(n) for n in range(1, rounds + 1)]
    return SpeedupCurve(x=xs, speedup=[speedup] * rounds, band_x=xs[5:],
                        upper=[speedup * (1 + width)] * (rounds - 5),
                        lower=[speedup * (1 - width)] * (rounds - 5))


@pytest.mark.parametrize("speedups", [(0.69, 0.14), (2.0, 2.5), (1.4, 0.7, 0.15)])
def test_the_legend_covers_no_curve(qtbot: QtBot, speedups: tuple[float, ...]) -> None:
    """The real comparison: jit 1.46× slower, bf16 7× slower. The legend was put in the
    corner the XLA curve left free, the bottom left, right over bf16's curve."""
    plot = plots.SpeedupPlot()
    qtbot.addWidget(plot.widget)
    plot.widget.resize(520, 300)
    plot.widget.show()
    qtbot.waitExposed(plot.widget)
    names = ["xla", "bf16", "fp16"]
    curves = {names[i]: flat(v, 47, 0.06) for i, v in enumerate(speedups)}
    plot.show_summary(None, curves)
    QApplication.processEvents()
    plot.show_summary(None, curves)  # as the window does, with its size known
    QApplication.processEvents()
    assert plot.legend.isVisible()
    item = plot.widget.getPlotItem()
    view = item.getViewBox()
    box = plot.legend.sceneBoundingRect()
    covered = []
    for name, curve in curves.items():
        for xs, ys in ((curve.x, curve.speedup), (curve.band_x, curve.upper),
                       (curve.band_x, curve.lower)):
            for x, y in zip(xs, ys, strict=True):
                if box.contains(view.mapViewToScene(QPointF(x, y))):
                    covered.append((name, x, y))
    covered += [("the line at 1", x, 1.0) for x in range(1, 48)
                if box.contains(view.mapViewToScene(QPointF(x, 1.0)))]
    assert covered == []
    assert item.titleLabel.text == "Speed-up as pairs arrive"
    # Its axis says speed-ups as every table does: never 0.5 for "2× slower".
    words = [text for _rect, text in drawn_ticks(item.getAxis("left"))]
    assert len(words) >= 2
    assert all(re.fullmatch(r"same|[\d.]+× (slower|faster)", w) for w in words), words


def test_a_legend_over_curves_far_from_one_leaves_the_range_alone(qtbot: QtBot) -> None:
    """Two arms, both far from 1 (the line out of view) and starting late: nothing lies under
    the legend's reach, and the plot still draws (it once raised on an empty sequence)."""
    plot = plots.SpeedupPlot()
    qtbot.addWidget(plot.widget)
    curve = SpeedupCurve(x=[40.0, 41.0], speedup=[0.14, 0.14], band_x=[40.0, 41.0],
                         upper=[0.15, 0.15], lower=[0.13, 0.13])
    plot.show_summary(None, {Role.XLA: curve, "bf16": curve})
    assert plot.one_label.toPlainText() == plots.NO_CHANGE_ABOVE


def test_the_speed_axis_ticks_round_words_on_both_sides() -> None:
    """Ticks are round in the words said: "1.25× slower", "2× slower", not "1.11× slower" and
    "1.43× slower" (linear ticks at 0.9 and 0.7)."""
    from xlagui.ui.shared.axes import SpeedAxis, round_speedups, speed_label

    ticks = round_speedups(0.45, 1.25, 8)
    words = [speed_label(v) for v in ticks]
    assert "same" in words and "2× slower" in words and "1.25× slower" in words
    assert all(w == "same" or float(w.split("×")[0]) in (1.1, 1.25, 1.5, 1.75, 2.0, 2.5)
               for w in words), words
    assert len(round_speedups(0.45, 1.25, 3)) <= 3
    axis = SpeedAxis("left")
    assert axis.tickValues(0.6, 1.0, 400)[0][1] == round_speedups(0.6, 1.0, 8)
