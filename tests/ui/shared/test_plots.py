"""The speed-up plot's axis fits its data: the line of no difference in view only when it is
near the curves, and said to be beyond the edge when it is not."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

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
