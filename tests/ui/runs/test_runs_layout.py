"""The Runs tab's states: nothing empty takes room (no column boxes before a comparison, no
empty plot area in a speed-only one), and no placeholder contradicts what is shown."""

from __future__ import annotations

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click, click_tab
from tests.helpers.reports import comparison_report
from tests.ui.runs.test_arms import run_speed_only
from xlagui.present import format as fmt
from xlagui.ui.runs.comparison_panel import WAITING
from xlagui.ui.runs.runs_view import RunsView
from xlagui.ui.window.main_window import MainWindow


def _settled() -> None:
    for _ in range(3):  # a layout change can ask for another
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def _bottom(widget: QWidget, within: QWidget) -> int:
    return widget.mapTo(within, QPoint(0, widget.height())).y()


def _top(widget: QWidget, within: QWidget) -> int:
    return widget.mapTo(within, QPoint(0, 0)).y()


def test_no_empty_boxes_before_a_comparison(qtbot: QtBot, loaded_window: MainWindow) -> None:
    window = loaded_window
    click_tab(qtbot, window.tabs, "Runs")
    view = window.runs_view
    _settled()
    assert view.heading.isVisible() and "Run comparison" in view.subheading.text()
    assert not view.strip.isVisible() and not view.comparison.isVisible()
    assert not any(column.isVisible() for column in view.columns.values())
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        click(qtbot, window.run_button)
    assert view.strip.isVisible() and view.comparison.isVisible()
    assert all(column.isVisible() for column in view.columns.values())


def test_a_speed_only_comparison_has_no_empty_plot_area(qtbot: QtBot,
                                                        loaded_window: MainWindow) -> None:
    """The columns are as tall as their heads and figures; the speed-up plot and the summary
    below get the room (an empty area of half the window said there were no curves)."""
    window = loaded_window
    window.resize(1600, 1000)
    click_tab(qtbot, window.tabs, "Runs")
    run_speed_only(qtbot, window)
    view = window.runs_view
    _settled()
    for column in view.columns.values():
        assert column.speed_only_note.isVisible()
        assert not column.loss_plot.isVisible() and not column.waiting_note.isVisible()
        # Between the note and the figures: one caption's height and the spacing, no more.
        gap = _top(column.figures["step"], column) - _bottom(column.speed_only_note, column)
        assert gap <= 40, f"{gap} px empty above {column.variant}'s figures"
        assert column.height() - _bottom(column.figures["evidence"], column) <= 30
    assert view.strip.height() < view.comparison.height()
    # A comparison with training runs gives its columns their plots' room again.
    click(qtbot, window.speed_only)
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        click(qtbot, window.run_button)
    _settled()
    assert all(column.loss_plot.isVisible() for column in view.columns.values())
    assert view.strip.height() > view.comparison.height()


def test_no_waiting_words_above_the_figures_of_a_measurement(qtbot: QtBot) -> None:
    """While the speed is measured its figures fill the summary's rows: the words that the
    comparison appears here when both sides have finished a run are gone; the verdict comes
    in their place at the end."""
    view = RunsView()
    qtbot.addWidget(view)
    view.resize(1400, 800)
    view.show()
    report = comparison_report()
    summary = view.comparison
    view.begin(report)
    assert summary.verdict.isVisible() and summary.verdict.text() == WAITING
    view.on_measurement(report.comparison)
    assert summary.rows["Speed per training step"].text() != fmt.DASH
    assert not (summary.verdict.isVisible() and summary.verdict.text() == WAITING)
    view.finish(report)
    assert summary.verdict.isVisible() and "faster" in summary.verdict.text()
