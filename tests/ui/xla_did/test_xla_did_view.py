"""The "What XLA did" tab, driven with real clicks: a finished comparison's XLA run shows its
modules, fusions by kind and largest fusions (sortable), opens a module's HLO highlighted,
copies the TensorBoard command, and diffs against a comparison from History."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QTableWidget
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click, click_header, click_tab, column, wait_until
from tests.ui.conftest import WindowFactory, fake_worker
from xlagui.core.protocol.events import FinishedEvent
from xlagui.core.xla import hlo
from xlagui.ui.window.main_window import MainWindow

DUMP = Path(__file__).resolve().parents[2] / "helpers" / "hlo_dump"
LEFT = Qt.MouseButton.LeftButton








def test_the_xla_run_shows_what_xla_did(qtbot: QtBot, make_window: WindowFactory,
                                        dataset: Path) -> None:
    worker = fake_worker()
    did = hlo.read_dump(DUMP, DUMP / "worker.log")
    finished = next(e for e in worker.streams["xla"] if isinstance(e, FinishedEvent))
    finished.summary = dataclasses.replace(finished.summary, xla_did=did)
    window: MainWindow = make_window(worker=worker)
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    window.settings_panel.batch_size.setValue(4)
    window.settings_panel.image_size.setValue(48)

    # An earlier comparison in History, whose XLA run fused one op less.
    earlier = copy.deepcopy(did)
    earlier.modules[0].fusions_by_kind = {"kLoop": 14}
    earlier.modules[0].fusions = 14
    finished.summary = dataclasses.replace(finished.summary, xla_did=earlier)
    with qtbot.waitSignal(window.comparison_finished, timeout=30_000):
        assert window.start_comparison()
    finished.summary = dataclasses.replace(finished.summary, xla_did=did)
    with qtbot.waitSignal(window.comparison_finished, timeout=30_000):
        assert window.start_comparison()

    window.resize(1280, 800)
    click_tab(qtbot, window.tabs, "What XLA did")
    panel = window.xla_did_panel
    # What XLA did is said once (not in the run's name too), and in the user's words: the
    # arm and the run, what the module compiles; TensorFlow's name only in the tooltip.
    assert panel.summary.text() == "XLA did: 1 module, 15 fusions (15 loop)"
    assert panel.run_combo.currentText() == "XLA jit_compile, training run 1"
    shown = [panel.run_combo.currentText(),
             *(label.text() for label in panel.findChildren(QLabel) if label.isVisible())]
    assert sum(text.count("XLA did") for text in shown) == 1, shown
    assert column(panel.modules_table, "what it compiles") == ["the evaluation step"]
    assert "a_inference_one_step_on_data" in panel.modules_table.item(0, 1).toolTip()
    assert not any("a_inference" in text or "inference" in text for text in shown)
    assert column(panel.modules_table, "instructions before") == ["217"]
    assert column(panel.modules_table, "fusions") == ["15"]
    # A one-row table takes one row's room, not the pane's.
    one_row = _content_height(panel.modules_table)
    assert one_row <= panel.modules_table.height() <= one_row + 8, (
        panel.modules_table.height(), one_row)

    click_tab(qtbot, panel.views, "Largest fusions")
    table = panel.fusions_table
    assert table.rowCount() == 15
    wait_until(qtbot, lambda: table.height() > one_row + 5 * table.rowHeight(0),
               "a longer table grows into the room there is")
    assert "maximum_dot_fusion" in column(table, "fusion")
    ops = column(table, "ops inside")
    assert any("dot" in o for o in ops)
    bytes_col = next(i for i in range(table.columnCount())
                     if table.horizontalHeaderItem(i).text() == "bytes")
    click_header(qtbot, table, bytes_col)
    first = table.item(0, bytes_col).text()
    click_header(qtbot, table, bytes_col)
    assert table.item(0, bytes_col).text() != first  # sorted one way, then the other

    click(qtbot, panel.open_hlo_button)
    dialog = panel.hlo_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.text.toPlainText().startswith("HloModule a_inference_one_step_on_data_2829")
    block = dialog.text.document().findBlockByLineNumber(0)
    assert block.layout().formats()  # highlighted
    dialog.close()

    click(qtbot, panel.tensorboard_button)
    # The comparison just run: History selects it once its (threaded) listing is done. Two
    # comparisons a second apart cannot be told apart by their order in the list.
    history = window.history_panel
    wait_until(qtbot, lambda: len(history.items) == 2 and history.selected_folder() is not None,
               "History lists both comparisons and selects the one just run", timeout=30_000)
    out_dir = history.selected_folder()
    assert out_dir is not None
    expected = f"tensorboard --logdir {out_dir / 'tensorboard'}"
    assert QApplication.clipboard().text() == expected
    assert expected in panel.tensorboard_label.text()

    click_tab(qtbot, panel.views, "Difference")
    assert panel.diff_a.count() == 1  # the shown comparison's only XLA run with a dump
    click(qtbot, panel.history_button)
    assert panel.diff_b.count() == 2 and panel.diff_b.currentIndex() == 1
    rows = {panel.diff_table.item(r, 0).text(): [panel.diff_table.item(r, c).text()
                                                 for c in range(1, 4)]
            for r in range(panel.diff_table.rowCount())}
    assert rows["fusions"] == ["15", "14", "-1"]
    assert rows["modules"] == ["1", "1", "0"]
    assert panel.diff_b.currentText().endswith(": XLA jit_compile, training run 1")


def _content_height(table: QTableWidget) -> int:
    """A table's header, rows, frame and (when it scrolls sideways) scroll bar: the height
    that shows all of it."""
    bar = table.horizontalScrollBar()
    return (table.horizontalHeader().height() + table.verticalHeader().length()
            + 2 * table.frameWidth() + (bar.height() if bar.isVisible() else 0))
