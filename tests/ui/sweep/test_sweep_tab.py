"""The Sweep tab, driven as a user drives it: fields typed, Run and Stop clicked, a folder
reopened; the cells run with the fake measuring workers (no TensorFlow)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, click_tab, watching
from tests.ui.conftest import FAKE_MEASURE, WindowFactory, is_closed, load_small
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.sweep.cell import CellStatus
from xlagui.ui.sweep.sweep_tab import SweepTab
from xlagui.ui.window.main_window import MainWindow

SWEEP_S = 60_000  # the longest a fake sweep of a few cells may take (ms)


def slow_measure_command(spec: RunSpec) -> list[str]:
    """The fake measuring worker, its blocks really taking a share of their time: a cell
    lasts long enough for a Stop to land in it."""
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json"),
            json.dumps({"sleep": 0.05})]


def type_into(qtbot: QtBot, edit: QLineEdit, text: str) -> None:
    """Click the field, select what it holds and type `text` over it."""
    click(qtbot, edit)
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


def open_sweep_tab(qtbot: QtBot, window: MainWindow, folder: Path) -> SweepTab:
    click_tab(qtbot, window.tabs, "Sweep")
    tab = window.sweep_tab
    type_into(qtbot, tab.form.folder, str(folder))
    return tab


def run_sweep(qtbot: QtBot, tab: SweepTab) -> None:
    assert tab.form.run_button.isEnabled(), tab.form.run_button.toolTip()
    with qtbot.waitSignal(tab.finished, timeout=SWEEP_S):
        click(qtbot, tab.form.run_button)


def test_a_two_cell_sweep_set_up_with_clicks_fills_the_table_and_the_plot(
        qtbot: QtBot, loaded_window: MainWindow, tmp_path: Path) -> None:
    window, folder = loaded_window, tmp_path / "sweep"
    with watching(window, ModalAnswerer()):
        tab = open_sweep_tab(qtbot, window, folder)
        type_into(qtbot, tab.form.fields["batch_size"], "4, 8")
        assert tab.form.plan_line.text().startswith("2 cells, ")
        run_sweep(qtbot, tab)
    table = tab.table
    assert table.rowCount() == 2
    assert table.texts("batch size") == ["4", "8"]
    assert table.texts("status") == ["done", "done"]
    # The fake XLA side takes half the baseline's step time: 2× faster, with an interval.
    assert all(t.startswith("2.00× faster (") for t in table.texts("jit speed-up"))
    assert tab.plot.kind == "lines"
    line = tab.plot._arm_lines["jit"]
    xs, ys = line.curve.getData()
    band_low, band_high = line.low.getData()[1], line.high.getData()[1]
    assert all(lo <= y <= hi for lo, y, hi in zip(band_low, ys, band_high, strict=True))
    assert len(band_low) == len(band_high) == 2
    assert list(xs) == [0.0, 1.0]
    assert [round(y, 2) for y in ys] == [2.0, 2.0]
    assert tab.overall.value() == 2 and tab.overall.maximum() == 2
    assert tab.sentences.text() == "jit faster at every batch size"
    # The same sweep into the same folder has nothing left to run; another one is refused.
    assert tab.form.plan_line.text().endswith("all finished already: nothing to run.")
    type_into(qtbot, tab.form.fields["batch_size"], "4, 12")
    assert "holds another sweep" in tab.form.plan_line.text()
    assert "axis batch_size: 4,8 → 4,12" in tab.form.plan_line.text()
    assert not tab.form.run_button.isEnabled()
    saved = json.loads((folder / "sweep.json").read_text())
    assert [c["settings"]["batch_size"] for c in saved["cells"]] == ["4", "8"]
    assert all(c["arms"][0]["arm"] == "jit" and c["arms"][0]["low"] for c in saved["cells"])


def test_bad_input_is_refused_with_its_reason(qtbot: QtBot, loaded_window: MainWindow,
                                              tmp_path: Path) -> None:
    tab = open_sweep_tab(qtbot, loaded_window, tmp_path / "sweep")
    form = tab.form
    assert not form.run_button.isEnabled()  # nothing to sweep yet
    type_into(qtbot, form.fields["batch_size"], "4, many")
    assert form.notes["batch_size"].isVisible()
    assert "'many' is not a whole number" in form.notes["batch_size"].text()
    assert not form.run_button.isEnabled()
    type_into(qtbot, form.fields["batch_size"], "4")
    assert not form.notes["batch_size"].isVisible()
    assert form.run_button.isEnabled()
    type_into(qtbot, form.fields["levers"], "speed=fast")
    assert "no runtime setting is called 'speed'" in form.notes["levers"].text()
    assert not form.run_button.isEnabled()
    type_into(qtbot, form.fields["levers"], "")
    type_into(qtbot, form.fields["arms"], "jit; warp")
    assert "unknown arm part 'warp'" in form.notes["arms"].text()
    assert not form.run_button.isEnabled()


def test_stop_keeps_the_finished_cells_and_a_rerun_does_the_rest(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path) -> None:
    window = load_small(qtbot, make_window(measure_command=slow_measure_command), dataset)
    folder = tmp_path / "sweep"
    tab = open_sweep_tab(qtbot, window, folder)
    type_into(qtbot, tab.form.fields["batch_size"], "4, 8, 12")
    with watching(window, ModalAnswerer()):
        click(qtbot, tab.form.run_button)
        assert not tab.form.run_button.isEnabled() and tab.form.stop_button.isEnabled()
        qtbot.waitUntil(lambda: tab.table.texts("status")[:2] == ["done", "running…"],
                        timeout=SWEEP_S)
        with qtbot.waitSignal(tab.finished, timeout=SWEEP_S) as stopped:
            click(qtbot, tab.form.stop_button)
    assert stopped.args is not None and stopped.args[0].stopped
    assert tab.table.texts("status") == ["done", "stopped (runs again on resume)", "to run"]
    saved = json.loads((folder / "sweep.json").read_text())
    statuses = {c["settings"]["batch_size"]: c["status"] for c in saved["cells"]}
    assert statuses == {"4": CellStatus.DONE, "8": CellStatus.INTERRUPTED}
    # Run again into the same folder: only the two cells not done run.
    with watching(window, ModalAnswerer()), \
            qtbot.waitSignal(tab.finished, timeout=SWEEP_S) as resumed:
        click(qtbot, tab.form.run_button)
    assert resumed.args is not None and resumed.args[0].ran == 2
    assert tab.table.texts("status") == ["done", "done", "done"]


def test_two_swept_settings_make_a_heatmap_and_a_folder_reopens(
        qtbot: QtBot, loaded_window: MainWindow, tmp_path: Path) -> None:
    window, folder = loaded_window, tmp_path / "sweep"
    with watching(window, ModalAnswerer()):
        tab = open_sweep_tab(qtbot, window, folder)
        type_into(qtbot, tab.form.fields["batch_size"], "4, 8")
        type_into(qtbot, tab.form.fields["image_size"], "48, 56")
        run_sweep(qtbot, tab)
    assert tab.plot.kind == "heatmap"
    # Its own settings, not the sidebar's: Run would resume it (nothing is left to run).
    assert tab.form.plan_line.text().endswith("all finished already: nothing to run."), \
        tab.form.plan_line.text()
    assert tab.form.run_button.isEnabled()
    image = tab.plot.image.image
    assert image is not None and image.shape == (2, 2)
    assert abs(float(image[0][0]) - 1.0) < 0.01  # log₂ of a 2× speed-up
    # Forget it, then open the folder as a user does.
    type_into(qtbot, tab.form.fields["batch_size"], "")
    type_into(qtbot, tab.form.fields["image_size"], "")
    tab.table.setRowCount(0)
    window.settings_panel.epochs.setValue(5)  # the sidebar's settings are not the sweep's now
    with watching(window, ModalAnswerer(folders={"Open a sweep": folder})):
        click(qtbot, tab.form.open_button)
        qtbot.waitUntil(lambda: tab.table.rowCount() == 4, timeout=5_000)
    assert tab.form.fields["batch_size"].text() == "4, 8"
    assert tab.form.fields["image_size"].text() == "48, 56"
    assert tab.table.texts("status") == ["done"] * 4
    assert tab.plot.kind == "heatmap"
    # Its own settings, not the sidebar's: Run would resume it (nothing is left to run).
    assert tab.form.plan_line.text().endswith("all finished already: nothing to run."), \
        tab.form.plan_line.text()
    assert tab.form.run_button.isEnabled()


def test_closing_during_a_sweep_keeps_its_finished_cells(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path) -> None:
    window = load_small(qtbot, make_window(measure_command=slow_measure_command), dataset)
    folder = tmp_path / "sweep"
    tab = open_sweep_tab(qtbot, window, folder)
    type_into(qtbot, tab.form.fields["batch_size"], "4, 8, 12")
    click(qtbot, tab.form.run_button)
    qtbot.waitUntil(lambda: tab.table.texts("status")[:2] == ["done", "running…"],
                    timeout=SWEEP_S)
    assert not window.run_button.isEnabled()  # one run at a time: no comparison beside it
    window.close_without_asking()
    qtbot.waitUntil(lambda: is_closed(window), timeout=SWEEP_S)
    saved = json.loads((folder / "sweep.json").read_text())
    statuses = [c["status"] for c in saved["cells"]]
    assert statuses == [CellStatus.DONE, CellStatus.INTERRUPTED]
