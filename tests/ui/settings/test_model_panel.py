"""The "Model" group, driven with real clicks: pick a built-in, open a model file, drop one,
a refused file blocks the run with its message, a fixed input size locks the image size."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QComboBox, QFileDialog, QStyle, QStyleOptionComboBox
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import choose_combo_item, click
from tests.helpers.models import FakeModelChecker
from tests.ui.conftest import WindowFactory, drop, load_small, url_mime
from xlagui.core.model.sources import builtin_names
from xlagui.ui.settings.model_panel import ModelPanel
from xlagui.ui.window.main_window import MainWindow


def _window(qtbot: QtBot, make_window: WindowFactory, dataset: Path,
            checker: FakeModelChecker) -> MainWindow:
    window = load_small(qtbot, make_window(model_checker=checker), dataset)
    panel = window.settings_panel.model_panel
    qtbot.waitUntil(lambda: "parameters" in panel.picker.itemText(0), timeout=5_000)
    return window


def text_fits(combo: QComboBox) -> bool:
    """Whether the combo's current text fits in the field it is drawn in (left of the arrow)."""
    option = QStyleOptionComboBox()
    combo.initStyleOption(option)
    field = combo.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                         QStyle.SubControl.SC_ComboBoxEditField, combo)
    return combo.fontMetrics().horizontalAdvance(combo.currentText()) <= field.width()


def _builder(tmp_path: Path, name: str = "net.py") -> Path:
    path = tmp_path / name
    path.write_text("def build_model(input_shape, num_classes):\n    raise NotImplementedError\n")
    return path


def test_the_picker_shows_each_models_parameters_at_the_image_size(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    checker = FakeModelChecker()
    window = _window(qtbot, make_window, dataset, checker)
    panel = window.settings_panel.model_panel
    texts = [panel.picker.itemText(i) for i in range(panel.picker.count())]
    # 1,000 × position + 48 px (the fake's count): each built-in with its own number.
    assert texts == [f"{name} — {1 + i}k parameters".replace("k", " k")
                     for i, name in enumerate(builtin_names())], texts
    # A new image size asks again, once the typing stopped, and the counts follow it.
    window.settings_panel.image_size.setValue(96)
    qtbot.waitUntil(lambda: panel.picker.itemText(1) == "mobilenetv2 — 2 k parameters",
                    timeout=5_000)
    # At the default 150 px when the window opened, then at each size the user settled on.
    assert {s.image_size for s in checker.asked if s.model.name == "vit"} == {150, 48, 96}
    assert not any(s.count_flops for s in checker.asked)  # counting needs no FLOPs


def test_picking_a_built_in_with_clicks_sets_the_comparisons_model(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    window = _window(qtbot, make_window, dataset, FakeModelChecker())
    panel = window.settings_panel.model_panel
    mixer = builtin_names().index("mixer")
    choose_combo_item(qtbot, panel.picker, mixer)
    assert panel.choice().name == "mixer"
    assert "MLP-Mixer" in panel.about.text()
    # A built-in other than the article's CNN is built once (with its FLOPs) before it runs.
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert "3 layers, 6,048 parameters" in panel.status.text()
    click(qtbot, panel.layers_button)
    assert panel.layers.isVisible() and "head (Dense)" in panel.layers.toPlainText()
    with qtbot.waitSignal(window.comparison_finished, timeout=60_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    assert report.config.model.name == "mixer"
    assert report.config.model.params == 6_048
    assert report.model_check is not None and report.model_check.flops_per_step == 1e9


def test_open_model_file_picks_a_python_builder_and_says_its_code_runs(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    window = _window(qtbot, make_window, dataset, FakeModelChecker())
    panel = window.settings_panel.model_panel
    builder = _builder(tmp_path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda *args, **kwargs: (str(builder), ""))
    click(qtbot, panel.open_button)
    choice = panel.choice()
    assert (choice.source, choice.file) == ("python", str(builder.resolve()))
    assert panel.code_note.isVisible()
    assert "runs the Python code in net.py" in panel.code_note.text()
    assert panel.picker.currentText() == "net.py  (your file)"
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert window.run_button.isEnabled()
    # Back to a built-in with a click: the note goes, the file stays in the list.
    choose_combo_item(qtbot, panel.picker, 0)
    assert panel.choice().is_article_cnn and not panel.code_note.isVisible()
    assert panel.picker.findText("net.py  (your file)") > 0


def test_a_refused_model_file_blocks_the_run_with_its_file_and_line(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    message = f"{tmp_path / 'bad.py'}, line 2: build_model raised ValueError: no"
    window = _window(qtbot, make_window, dataset, FakeModelChecker(refuse={"bad.py": message}))
    panel = window.settings_panel.model_panel
    bad = _builder(tmp_path, "bad.py")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(bad), ""))
    click(qtbot, panel.open_button)
    qtbot.waitUntil(lambda: panel.status.text() == message, timeout=5_000)
    assert window.cannot_run_reason() == message
    assert not window.run_button.isEnabled()
    assert message in window.run_hint.text()
    click(qtbot, window.run_button)  # disabled: nothing starts
    assert not window.is_running()


def test_a_fixed_input_model_sets_and_locks_the_image_size(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path) -> None:
    window = _window(qtbot, make_window, dataset, FakeModelChecker(fixed={"net.keras": 64}))
    saved = tmp_path / "net.keras"
    saved.write_bytes(b"not read by the fake checker")
    drop(window, url_mime(saved))  # dropping a model file on the window picks it
    panel = window.settings_panel
    assert panel.model_panel.choice().source == "keras"
    assert panel.model_panel.new_head.isVisible()
    qtbot.waitUntil(lambda: panel.image_size.value() == 64, timeout=5_000)
    assert not panel.image_size.isEnabled()
    assert "takes 64×64 images" in panel.image_size.toolTip()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert "fixed by the model" in panel.model_panel.status.text()
    # Back to the article's CNN: the box is the user's again.
    choose_combo_item(qtbot, panel.model_panel.picker, 0)
    assert panel.image_size.isEnabled()


def test_the_new_head_tick_goes_only_to_a_model_file_that_takes_one(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    window = _window(qtbot, make_window, dataset, FakeModelChecker())
    panel = window.settings_panel.model_panel
    saved = tmp_path / "net.keras"
    saved.write_bytes(b"not read by the fake checker")
    drop(window, url_mime(saved))
    click(qtbot, panel.new_head)
    assert panel.choice().new_head
    builder = _builder(tmp_path)
    asked: list[tuple[object, ...]] = []

    def dialog(*args: object, **kwargs: object) -> tuple[str, str]:
        asked.append(args)
        return str(builder), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", dialog)
    click(qtbot, panel.open_button)
    # The dialog offers the registry's kinds of model file.
    assert asked[0][-1] == ("Keras models, Python builders and legacy Keras models "
                            "(*.keras *.py *.h5 *.hdf5)")
    choice = panel.choice()  # the box is hidden, still ticked: a .py takes no new head
    assert (choice.source, choice.new_head) == ("python", False)
    assert not panel.new_head.isVisible()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)


def test_dropping_something_else_still_says_what_to_drop(
        window: MainWindow, tmp_path: Path) -> None:
    other = tmp_path / "notes.txt"
    other.write_text("x")
    drop(window, url_mime(other))
    assert "model file (.keras, .py, .h5 or .hdf5)" in window.message_bar.label.text()
    assert window.settings_panel.model_panel.choice().is_article_cnn


def test_the_chosen_model_is_saved_and_restored(
        qtbot: QtBot, make_window: WindowFactory, settings: QSettings, tmp_path: Path) -> None:
    builder = _builder(tmp_path)
    first = make_window(model_checker=FakeModelChecker())
    assert first.settings_panel.model_panel.choose_file(builder) == ""
    first.settings_panel.model_panel.new_head.setChecked(False)
    first.close()
    second = make_window(model_checker=FakeModelChecker())
    assert second.settings_panel.model_panel.choice().file == str(builder.resolve())
    # The file gone: the window says so and falls back to the article's CNN.
    builder.unlink()
    third = make_window(model_checker=FakeModelChecker())
    assert third.settings_panel.model_panel.choice().is_article_cnn
    assert "The saved model was not restored" in third.message_bar.label.text()


def test_a_check_still_running_blocks_the_run_and_a_new_choice_supersedes_it(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    checker = FakeModelChecker()
    window = _window(qtbot, make_window, dataset, checker)
    panel = window.settings_panel.model_panel
    checker.gate.clear()  # the next check waits
    choose_combo_item(qtbot, panel.picker, builtin_names().index("vit"))
    qtbot.waitUntil(lambda: "still being counted" in panel.flops.text(), timeout=5_000)
    assert window.cannot_run_reason().startswith("Checking vit")
    choose_combo_item(qtbot, panel.picker, builtin_names().index("resnet50"))
    checker.gate.set()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert panel.choice().name == "resnet50"
    assert "6,048" not in panel.status.text() and "3,048 parameters" in panel.status.text()


def test_no_checker_counts_nothing_and_the_cnn_still_runs(qtbot: QtBot) -> None:
    panel = ModelPanel(checker=None)
    qtbot.addWidget(panel)
    panel.start_checks()
    assert panel.picker.itemText(0) == "cnn" and panel.problem() == ""


def test_a_built_ins_parameters_and_layers_show_at_once_and_its_flops_after(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    checker = FakeModelChecker()
    window = _window(qtbot, make_window, dataset, checker)
    panel = window.settings_panel.model_panel
    checker.flops_gate.clear()  # counting the FLOPs takes a while
    choose_combo_item(qtbot, panel.picker, builtin_names().index("mixer"))
    qtbot.waitUntil(lambda: any(s.count_flops and s.model.name == "mixer"
                                for s in checker.asked), timeout=5_000)
    assert window.cannot_run_reason().startswith("Checking mixer")
    # While its FLOPs are counted: its parameters and layers, from the list's build, and no
    # "Building…".
    assert "3 layers, 6,048 parameters" in panel.status.text()
    assert "Building" not in panel.status.text()
    assert panel.flops.isVisible()
    assert panel.flops.text() == (
        "FLOPs per training step: still being counted (one training step is compiled)…")
    click(qtbot, panel.layers_button)
    assert "head (Dense)" in panel.layers.toPlainText()
    checker.flops_gate.set()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert panel.flops.text() == "FLOPs per training step: 1 GFLOP at batch 4."
    assert "3 layers, 6,048 parameters" in panel.status.text()


def test_a_model_files_parameters_show_before_its_flops_are_counted(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    checker = FakeModelChecker()
    window = _window(qtbot, make_window, dataset, checker)
    panel = window.settings_panel.model_panel
    builder = _builder(tmp_path)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(builder), ""))
    checker.flops_gate.clear()
    click(qtbot, panel.open_button)
    # No list has counted a file: its check builds it first without a training step.
    qtbot.waitUntil(lambda: "3 layers, 4,321 parameters" in panel.status.text(), timeout=5_000)
    assert "still being counted" in panel.flops.text()
    assert window.cannot_run_reason().startswith("Checking net.py")
    asked = [s for s in checker.asked if s.model.file]
    assert [s.count_flops for s in asked] == [False, True]
    checker.flops_gate.set()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=5_000)
    assert panel.flops.text().startswith("FLOPs per training step: 1 GFLOP")


def test_the_picker_shows_its_longest_item_whole(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    counts = {"mobilenetv2": 2_259_265, "resnet50": 23_591_810, "efficientnetb0": 4_050_852,
              "vit": 560_000, "mixer": 309_649}
    window = _window(qtbot, make_window, dataset, FakeModelChecker(params=counts))
    window.resize(1280, 800)
    picker = window.settings_panel.model_panel.picker
    qtbot.waitUntil(lambda: "M parameters" in picker.itemText(1), timeout=5_000)
    for index in range(picker.count()):
        choose_combo_item(qtbot, picker, index)
        assert text_fits(picker), f"{picker.currentText()!r} is cut in {picker.width()} px"


def test_a_savedmodel_folder_dropped_is_a_model_refused_in_words_not_a_dataset(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    exported = tmp_path / "exported"
    (exported / "variables").mkdir(parents=True)
    (exported / "saved_model.pb").write_bytes(b"a graph")
    drop(window, url_mime(exported))
    text = window.message_bar.label.text()
    assert "is a TensorFlow SavedModel folder, which xlagui cannot train" in text, text
    assert window.datasets.scan is None and not window.datasets.is_scanning()  # no dataset
    assert window.settings_panel.model_panel.choice().is_article_cnn  # the choice kept


def test_an_h5_file_dropped_is_chosen_as_a_legacy_keras_model(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    saved = tmp_path / "net.h5"
    saved.write_bytes(b"read only in a worker")
    drop(window, url_mime(saved))
    choice = window.settings_panel.model_panel.choice()
    assert (choice.source, choice.file, choice.label) == ("h5", str(saved), "net.h5")
