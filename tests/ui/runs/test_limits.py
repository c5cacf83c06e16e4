"""How far from the limit in the window: a reopened comparison shows achieved FLOP/s, % of the
measured peak, the verdict on the gap and the roofline."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click_tree_item, item_at
from tests.helpers.limits import PEAK, known_limits, limits_report
from xlagui.core.model import flops
from xlagui.core.results import history
from xlagui.core.results.report import ComparisonReport
from xlagui.ui.window.main_window import TAB_RUNS, MainWindow


def reopen(qtbot: QtBot, window: MainWindow, report: ComparisonReport) -> None:
    """Save `report` to the history and open it as a user would: History tab, click, Open."""
    folder = history.new_folder(window.history_panel.root)
    history.save(report, folder)
    panel = window.history_panel
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    window.tabs.setCurrentWidget(panel)
    row = next(
        item_at(panel.tree, i) for i in range(panel.tree.topLevelItemCount())
        if panel.items[i].folder == folder
    )
    click_tree_item(qtbot, panel.tree, row)
    assert panel.selected_folder() == folder
    with qtbot.waitSignal(window.report_shown, timeout=10_000):
        qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert window.tabs.currentIndex() == TAB_RUNS


def test_a_reopened_comparison_shows_its_distance_from_the_peak(
        qtbot: QtBot, window: MainWindow) -> None:
    reopen(qtbot, window, limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4))
    panel = window.runs_view.comparison
    step = flops.article_cnn_count(48, 2).train_per_step(8)
    base_rate, xla_rate = step / 0.2, step / 0.4
    assert panel.limit_rows["XLA off, steady step"].text().startswith(
        f"{base_rate / 1e9:.3g} GFLOP/s, {base_rate / PEAK:.1%} of peak")
    assert panel.limit_rows["XLA jit, steady step"].text().startswith(
        f"{xla_rate / 1e9:.3g} GFLOP/s, {xla_rate / PEAK:.1%} of peak")
    # The training runs are keyed by run id, each with its own figure.
    assert "XLA jit, training run 1" in panel.limit_rows
    assert "100 GFLOP/s float32 matmul peak" in panel.limit_rows["Machine limit"].text()
    assert "mostly overhead" in panel.limits_verdict.text()
    assert panel.roofline.widget.isVisible()
    drawn = {label: gflops for label, _ai, gflops in panel.roofline.drawn}
    assert drawn == {"XLA off, steady step": base_rate / 1e9,
                     "XLA jit, steady step": xla_rate / 1e9}
    assert "estimated" in panel.roofline_note.text()


def test_without_a_measured_peak_there_is_no_roofline_only_flop_rates(
        qtbot: QtBot, window: MainWindow) -> None:
    reopen(qtbot, window, limits_report(limits=None))
    panel = window.runs_view.comparison
    assert panel.limit_rows["Machine limit"].text() == "not measured: achieved FLOP/s only"
    assert "of peak" not in panel.limit_rows["XLA jit, steady step"].text()
    assert not panel.roofline.widget.isVisible()
    assert panel.roofline.drawn == []
    assert panel.roofline_note.text().startswith(
        "No roofline: neither the machine's peak nor its memory bandwidth was measured")


def test_the_png_report_carries_the_figures_and_the_roofline(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QLabel

    from xlagui.ui.report_png import ReportFigure

    figure = ReportFigure(limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4))
    qtbot.addWidget(figure)
    texts = [label.text() for label in figure.findChildren(QLabel)]
    assert "How far from the limit" in texts
    assert any(t.startswith("Against the measured peak of 100 GFLOP/s") for t in texts)
    assert "XLA jit, steady step" in texts
    assert [label for label, _ai, _rate in figure.roofline.drawn] == [
        "XLA off, steady step", "XLA jit, steady step"]

    plain = ReportFigure(limits_report(limits=None))
    qtbot.addWidget(plain)
    assert not hasattr(plain, "roofline")
    assert any(t.startswith("No roofline") for t in
               (label.text() for label in plain.findChildren(QLabel)))
