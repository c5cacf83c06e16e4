"""The report PNG legible at 100%: the roofline's axes say their decades alone, with no words
over each other, and its key is outside the plotted area."""

from __future__ import annotations

import itertools
import re

from PySide6.QtCore import QPoint, QRectF
from PySide6.QtGui import QImage, QPainter
from pytestqt.qtbot import QtBot

from tests.helpers.limits import known_limits, limits_report
from xlagui.ui.report_png import ReportFigure
from xlagui.ui.shared.axes import DecadeAxis, decade_label

DECADE = re.compile(r"^(0\.0*1|10*|10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)$")


def drawn_ticks(axis: object) -> list[tuple[QRectF, str]]:
    """The words an axis draws, where it draws them (pyqtgraph's own draw specs)."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)  # type: ignore[attr-defined]
    finally:
        painter.end()
    return [(rect, text) for rect, _flags, text in texts if text]


def test_decades_in_words() -> None:
    assert [decade_label(e) for e in (-2, 0, 1, 3, 5, -3)] == [
        "0.01", "1", "10", "1000", "10⁵", "10⁻³"]


def test_the_roofline_says_decades_alone_and_its_key_covers_nothing(qtbot: QtBot) -> None:
    figure = ReportFigure(limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4))
    qtbot.addWidget(figure)
    figure.render_pixmap()
    plot = figure.roofline.widget.getPlotItem()
    for side in ("bottom", "left"):
        axis = plot.getAxis(side)
        assert isinstance(axis, DecadeAxis)
        ticks = drawn_ticks(axis)
        words = [text for _rect, text in ticks]
        assert len(words) >= 2, f"{side}: {words}"
        assert all(DECADE.match(w) for w in words), f"{side}: {words}"
        rects = sorted((rect for rect, _text in ticks), key=lambda r: (r.left(), r.top()))
        for a, b in itertools.pairwise(rects):
            assert not a.intersects(b), f"{side}: words over each other"
    # No legend over the data: the key is a label below the plot, outside its view.
    assert plot.legend is None
    key = figure.roofline.key_label
    assert not key.isHidden()
    assert [words for _glyph, _colour, words in figure.roofline.key] == [
        "peak and bandwidth", "largest layers alone", "XLA off, steady step",
        "XLA jit, steady step"]
    assert "XLA&nbsp;off,&nbsp;steady&nbsp;step" in key.text()  # never broken inside
    plot_widget = figure.roofline.widget
    top_left = plot_widget.mapTo(figure, QPoint(0, 0))
    key_top = key.mapTo(figure, QPoint(0, 0)).y()
    assert key_top >= top_left.y() + plot_widget.height()


def test_the_arms_chart_says_slower_as_every_table_does(qtbot: QtBot) -> None:
    """One convention for "slower": the chart "Every arm against the baseline" plotted jit at
    0.49 on a "speed-up per step ×" axis while the text said "2.04× slower". Now its axis is
    logarithmic and worded, and each bar says what the arms table says."""
    from tests.helpers.reports import comparison_report
    from xlagui.present import format as fmt
    from xlagui.ui.shared.axes import speed_ticks

    # XLA 2× faster, bf16 2.5× slower.
    report = comparison_report(arms=("bf16",), steps={"bf16": 0.5})
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    chart = figure.arm_chart
    assert chart is not None
    words = [text for _x, text in speed_ticks(*chart.range)]
    assert "same" in words and "2× slower" in words and "2× faster" in words
    assert all(w == "same" or re.fullmatch(r"\d+× (slower|faster)", w) for w in words)
    captions = [c.toPlainText() for c in chart.captions]
    table = {row[1].rstrip(" ★"): row[2] for row in fmt.arm_table(report.comparison)}
    assert captions[0].startswith("2.00× faster") and table["jit"].startswith("2.00× faster")
    assert captions[1].startswith("2.50× slower") and table["bf16"].startswith("2.50× slower")
    assert not any(re.search(r"\b0\.\d+×", c) for c in captions)
    # The slower arm's bar runs left of "same" (0 on the log axis), the faster one's right.
    x0 = chart.bar_item.opts["x0"]
    assert x0[1] < 0 and x0[0] == 0


def test_every_roofline_dot_is_in_view(qtbot: QtBot) -> None:
    """A step measured faster than the probed peak (the probe under-measured) is drawn, not
    left above the plot's top edge."""
    import math

    from xlagui.core.model import flops

    step = flops.article_cnn_count(48, 2).train_per_step(8)
    figure = ReportFigure(limits_report(limits=known_limits(), base_step=step / 300e9,
                                        xla_step=0.4))
    qtbot.addWidget(figure)
    (x_low, x_high), (y_low, y_high) = figure.roofline.item.viewRange()
    for label, intensity, gflops in figure.roofline.drawn:
        assert x_low <= math.log10(intensity) <= x_high, label
        assert y_low <= math.log10(gflops) <= y_high, label


def test_the_heading_names_the_xla_side_once(qtbot: QtBot) -> None:
    """`--arms jit,bf16` lists the XLA side's own arm: the heading said "… vs XLA
    (jit_compile=True) and jit, bf16"."""
    import dataclasses

    from PySide6.QtWidgets import QLabel

    from tests.helpers.reports import comparison_report

    report = comparison_report(arms=("bf16",))
    report.config = dataclasses.replace(report.config, arms=("jit", "bf16"))
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    sub = next(label.text() for label in figure.findChildren(QLabel)
               if label.text().startswith("Baseline (XLA off) vs XLA"))
    assert " and bf16 · " in sub and "jit," not in sub
