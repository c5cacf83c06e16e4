"""The speed-up plot: its legend clear of every arm's curve and band, and "pairs" in its
words whatever the number of arms."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.ui.test_report_png import drawn_ticks
from xlagui.present.traces import SpeedupCurve
from xlagui.ui.shared import plots


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
