"""The PNG report's "Why" panel: present for a comparison with a why (its words, its chart,
its parity plot, its colours in the picture), absent for one from before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image
from pytestqt.qtbot import QtBot

from tests.helpers.reports import comparison_report
from tests.helpers.why import comparison_dict, write_comparison
from xlagui.present.why_data import WhyData, why_of
from xlagui.ui.report_png import ReportFigure, render_report_png
from xlagui.ui.shared import plots


def coloured(image: Image.Image, hex_colour: str, tolerance: int = 12) -> int:
    """How many pixels are `hex_colour` (within `tolerance` on each channel)."""
    target = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    pixels = np.asarray(image.convert("RGB"), dtype=int)
    return int((np.abs(pixels - target).max(axis=2) <= tolerance).sum())


def why() -> WhyData:
    return WhyData.from_dict(comparison_dict())


def test_the_png_has_a_why_panel(qtbot: QtBot) -> None:
    figure = ReportFigure(comparison_report(training=True), why=why())
    qtbot.addWidget(figure)
    panel = figure.why_panel
    assert panel is not None
    assert panel.lines[0].startswith("XLA jit_compile spends 0.88 s of its 2.50 s step")
    assert any("the last partial batch of 8" in line for line in panel.lines)
    assert any("drop_remainder=True" in line for line in panel.lines)
    assert any(line.startswith("XLA jit_compile is the same within float32 rounding")
               for line in panel.lines)
    assert panel.chart is not None and len(panel.chart.labels) == 3
    assert panel.parity_plot is not None and panel.parity_plot.shown is not None
    assert panel.parity_plot.shown.arm == "jit"


def test_a_comparison_without_a_why_has_no_panel(qtbot: QtBot) -> None:
    figure = ReportFigure(comparison_report(training=True))
    qtbot.addWidget(figure)
    assert figure.why_panel is None


def test_the_png_draws_the_why(tmp_path: Path) -> None:
    folder = write_comparison(tmp_path / "c")
    report = comparison_report(training=True)
    plain = render_report_png(report, tmp_path / "plain.png")
    with_why = render_report_png(report, tmp_path / "why.png", why_of(report, folder))
    with Image.open(plain) as a, Image.open(with_why) as b:
        assert b.width == a.width and b.height > a.height + 700  # the panel, below the rest
        # The arm's bars and loss curve are drawn in its colour: many more of its pixels.
        assert coloured(b, plots.color("jit").name()) > coloured(a, plots.color("jit").name()) \
            + 1000
