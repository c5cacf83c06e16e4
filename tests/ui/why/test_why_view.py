"""The "Why" tab, driven with real clicks: a comparison reopened from History shows the top
differences in words, the coverage, the attribution table (sortable by a click on its header),
the bar chart, the compile list with the partial batch's fix and the parity plot of the arm
picked; a comparison from before issue 29 says there is nothing to show."""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import choose_combo_item, click_header, click_tab, click_tree_item, column
from tests.helpers.reports import comparison_report
from tests.helpers.why import write_comparison
from tests.ui.conftest import WindowFactory
from xlagui.core.results import history
from xlagui.present.levels import Level
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.why.why_view import CHART_HEIGHT, NO_COMPILES, NO_EXPLAIN, NO_PARITY
from xlagui.ui.window.main_window import MainWindow

LEFT = Qt.MouseButton.LeftButton








def reopen(qtbot: QtBot, window: MainWindow, folder: Path) -> None:
    """Find `folder` in History and open it, as a user does."""
    panel = window.history_panel
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    click_tab(qtbot, window.tabs, "History")
    row = next(panel.tree.topLevelItem(i) for i in range(panel.tree.topLevelItemCount())
               if panel.items[i].folder == folder)
    click_tree_item(qtbot, panel.tree, row)
    assert panel.selected_folder() == folder
    with qtbot.waitSignal(window.why_panel.shown, timeout=10_000):
        qtbot.mouseClick(panel.open_button, LEFT)


def test_a_reopened_comparison_says_why(qtbot: QtBot, make_window: WindowFactory,
                                        tmp_path: Path) -> None:
    window = make_window(history_root=tmp_path / "history")
    folder = write_comparison(tmp_path / "history" / "2026-12-02T08-00-00_why")
    reopen(qtbot, window, folder)
    click_tab(qtbot, window.tabs, "Why")
    why = window.why_panel
    assert why.views.currentIndex() == 0
    words = why.explain_words.text()
    assert html.escape(
        "XLA jit_compile spends 0.88 s of its 2.50 s step in the input gradient of "
        "block_1_depthwise's depthwise convolution (lowered to base-dilated convolutions), "
        "where the baseline spends 0.04 s: 0.84 s more per step.") in words
    assert "below the 80% goal" in why.coverage_words.text()
    assert column(why.coverage_table, "coverage") == ["97%", "71%"]
    table = why.attribution_table
    assert column(table, "layer")[0] == "block_1_depthwise"
    assert column(table, "layer")[-1] == "not traced"
    assert why.chart.labels == ["block_1_depthwise · input gradient",
                                "block_1_depthwise · forward pass",
                                "block_2_depthwise · input gradient"]
    assert "XLA jit_compile" in why.chart_key.text()

    # A click on the baseline's column sorts by its seconds (numbers, not text).
    base = next(i for i in range(table.columnCount())
                if table.horizontalHeaderItem(i).text() == "baseline")
    click_header(qtbot, table, base)
    seconds = [table.item(r, base).number for r in range(table.rowCount())]  # type: ignore[attr-defined]
    assert seconds == sorted(seconds) or seconds == sorted(seconds, reverse=True)
    assert max(seconds) == 0.08

    click_tab(qtbot, why.views, "Compiles")
    assert "the last partial batch of 8" in column(why.compile_table, "reason")
    assert "drop_remainder=True" in why.compile_words.text()
    assert why.compile_table.isVisible()
    # The fix, offered as the setting it is: one click ticks it for the next comparison.
    assert not window.settings_panel.drop_remainder.isChecked()
    assert why.drop_button.isVisible()
    qtbot.mouseClick(why.drop_button, LEFT)
    assert window.settings_panel.drop_remainder.isChecked()

    click_tab(qtbot, why.views, "Same numbers?")
    assert "the same within float32 rounding" in why.parity_words.text()
    assert why.parity_plot.shown is not None and why.parity_plot.shown.arm == "jit"
    choose_combo_item(qtbot, why.parity_arm, 1)
    assert why.parity_plot.shown is not None and why.parity_plot.shown.arm == "bf16"
    assert "mixed_bfloat16" in why.parity_key.text()
    drawn = why.parity_plot.loss.getPlotItem().listDataItems()
    assert len(drawn) == 2 and len(drawn[1].getData()[1]) == 20

    # Opened again (after the click that sorted by the baseline's seconds): the rows are in
    # their order again, the largest difference first, `not traced` last.
    reopen(qtbot, window, folder)
    assert column(table, "layer")[0] == "block_1_depthwise"
    assert column(table, "layer")[-1] == "not traced"
    # The recompile of the partial batch stands out.
    compile_table = why.compile_table
    last = compile_table.rowCount() - 1
    assert compile_table.item(last, 4).text() == "the last partial batch of 8"
    assert compile_table.item(last, 4).foreground().color().name() == (
        LEVEL_COLORS[Level.WARNING])
    assert compile_table.item(0, 4).foreground().color().name() != LEVEL_COLORS[Level.WARNING]


def test_an_older_comparison_says_there_is_no_why(qtbot: QtBot, make_window: WindowFactory,
                                                  tmp_path: Path) -> None:
    window = make_window(history_root=tmp_path / "history")
    folder = tmp_path / "history" / "old"
    history.save(comparison_report(training=True), folder)
    reopen(qtbot, window, folder)
    click_tab(qtbot, window.tabs, "Why")
    why = window.why_panel
    assert NO_EXPLAIN in why.explain_words.text()
    assert why.attribution_table.rowCount() == 0 and why.chart.labels == []
    click_tab(qtbot, why.views, "Compiles")
    assert NO_COMPILES in why.compile_words.text()
    assert not why.drop_button.isVisible()  # no partial batch, no fix offered
    click_tab(qtbot, why.views, "Same numbers?")
    assert NO_PARITY in why.parity_words.text() and not why.parity_arm.isEnabled()
    assert why.parity_plot.shown is None


def test_a_finished_comparison_fills_the_tab(qtbot: QtBot, loaded_window: MainWindow) -> None:
    """The tab is filled when a comparison ends (from what it saved: this fake comparison
    recorded no why, so each page says so)."""
    window = loaded_window
    with qtbot.waitSignal(window.why_panel.shown, timeout=30_000):
        assert window.start_comparison()
    click_tab(qtbot, window.tabs, "Why")
    assert NO_EXPLAIN in window.why_panel.explain_words.text()


def test_the_charts_wait_for_the_tab(qtbot: QtBot, make_window: WindowFactory) -> None:
    """The window's first screen needs no pyqtgraph chart of the Why tab (pyqtgraph takes about
    0.2 s to import, BENCHMARKS.md "Window launch, three ways"): a new window has none built;
    a click on the tab builds them, empty, in the place kept for them."""
    window = make_window()
    why = window.why_panel
    assert why._chart is None and why._parity_plot is None
    click_tab(qtbot, window.tabs, "Why")
    assert why._chart is not None and why._parity_plot is not None
    assert why.chart.labels == [] and why.parity_plot.shown is None
    # A widget laid into a shown one is shown by Qt's next turn of the event loop.
    qtbot.waitUntil(why.chart.widget.isVisible, timeout=5_000)
    assert why.chart.widget.height() == CHART_HEIGHT
    click_tab(qtbot, why.views, "Same numbers?")
    qtbot.waitUntil(lambda: why.parity_plot.loss.isVisible() and why.parity_plot.diff.isVisible(),
                    timeout=5_000)
