"""Settings: ranges from the core, problems explained next to the field, devices, memory."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QCheckBox, QGroupBox, QRadioButton
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import choose_combo_item, click
from tests.ui.conftest import WindowFactory, drag_enter, url_mime
from xlagui.core.protocol.config import MIN_IMAGE_SIZE, RANGES, XlaMode
from xlagui.present.levers import VALUE_WORDS
from xlagui.ui.settings.settings_panel import SettingsPanel
from xlagui.ui.window.main_window import MainWindow


def test_ranges_come_from_the_core(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    assert (panel.epochs.minimum(), panel.epochs.maximum()) == (
        RANGES["epochs"].low, RANGES["epochs"].high)
    assert panel.batch_size.maximum() == RANGES["batch_size"].high
    assert panel.repeats.maximum() == RANGES["repeats"].high
    assert panel.seed.maximum() == RANGES["seed"].high
    assert panel.image_size.maximum() == RANGES["image_size"].high


def test_too_small_an_image_size_is_explained_and_blocks_the_run(
        loaded_window: MainWindow) -> None:
    panel = loaded_window.settings_panel
    assert loaded_window.run_button.isEnabled()
    panel.image_size.setValue(20)
    note = panel._note_labels["image_size"]
    assert note.isVisible()
    assert "too small" in note.text() and str(MIN_IMAGE_SIZE) in note.text()
    assert "convolutions" in note.text()
    assert panel.config() is None
    assert not loaded_window.run_button.isEnabled()
    assert not loaded_window.run_action.isEnabled()
    assert "too small" in loaded_window.run_hint.text()
    panel.image_size.setValue(MIN_IMAGE_SIZE)
    assert panel.config() is not None and loaded_window.run_button.isEnabled()


def test_a_batch_larger_than_the_training_set_is_explained(loaded_window: MainWindow) -> None:
    panel = loaded_window.settings_panel
    panel.batch_size.setValue(13)  # 12 training images
    note = panel._note_labels["batch_size"]
    assert "larger than the training set (12 images)" in note.text()
    assert "at most 12" in note.text()
    assert not loaded_window.run_button.isEnabled()
    panel.batch_size.setValue(5)
    assert "2 full batches per epoch, 2 left out" in note.text()
    assert loaded_window.run_button.isEnabled()


def test_one_epoch_warns_but_allows(loaded_window: MainWindow) -> None:
    panel = loaded_window.settings_panel
    panel.epochs.setValue(1)
    note = panel._note_labels["epochs"]
    assert note.isVisible() and "no steady epoch" in note.text()
    assert loaded_window.run_button.isEnabled()


def test_held_out_share_is_off_for_a_dataset_with_its_own_test_folder(
        loaded_window: MainWindow) -> None:
    panel = loaded_window.settings_panel
    assert not panel.holdout.isEnabled()
    assert "own test folder" in panel._note_labels["holdout_percent"].text()


def test_the_one_side_choice_picks_the_single_side(qtbot: QtBot,
                                                   loaded_window: MainWindow) -> None:
    """"One side", beside the button it steers, picks the side "Run … only" trains; the XLA
    group holds the XLA side's mode only (a box "XLA on" there read as "switch XLA on")."""
    window = loaded_window
    panel = window.settings_panel
    assert window.run_one_button.text() == "Run XLA only"
    choose_combo_item(qtbot, window.one_side_choice, 1)
    assert window.run_one_button.text() == "Run baseline only"
    assert window.run_one_action.text() == "Run baseline only"
    assert [b.text() for b in window.findChildren(QCheckBox) if "XLA on" in b.text()] == []
    click(qtbot, panel.advanced_button)
    assert panel.advanced.isVisible()
    with qtbot.waitSignal(panel.changed, timeout=1_000):
        click(qtbot, _mode_button(panel, XlaMode.AUTOCLUSTER))
    config = panel.config()
    assert config is not None and config.xla is XlaMode.AUTOCLUSTER
    click(qtbot, _mode_button(panel, XlaMode.JIT))
    config = panel.config()
    assert config is not None and config.xla is XlaMode.JIT


def test_the_one_side_choice_is_kept_under_its_old_key(
        qtbot: QtBot, make_window: WindowFactory, settings: QSettings) -> None:
    """Saved where the "XLA on" box kept it: a file written before reads the same."""
    settings.setValue("settings/xla_on", False)  # the box, unticked
    window = make_window()
    assert window.one_side_choice.currentText() == "baseline"
    assert window.run_one_button.text() == "Run baseline only"
    choose_combo_item(qtbot, window.one_side_choice, 0)
    assert window.run_one_button.text() == "Run XLA only"
    window.close()
    assert str(settings.value("settings/xla_on")).lower() == "true"
    assert make_window().one_side_choice.currentText() == "XLA"


def _mode_button(panel: SettingsPanel, mode: XlaMode) -> QRadioButton:
    button = panel.findChild(QRadioButton, f"xla:{mode.value}")
    assert isinstance(button, QRadioButton), mode
    return button


def test_the_xla_modes_are_the_levers_with_their_words(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    assert "XLA" in [box.title() for box in panel.findChildren(QGroupBox)]
    buttons = panel.advanced.findChildren(QRadioButton)
    assert [(b.objectName(), b.text(), b.toolTip()) for b in buttons] == [
        ("xla:jit", "jit_compile=True (recommended)",
         "model.compile(jit_compile=True): XLA compiles the whole training step, on CPU and "
         "GPU"),
        ("xla:autocluster", "Auto-clustering (the article's set_jit)",
         "tf.config.optimizer.set_jit(True): XLA compiles the clusters it chooses; on CPU it "
         "needs extra flags, which xlagui sets"),
    ]
    assert _mode_button(panel, XlaMode.JIT).isChecked() and panel.xla_mode is XlaMode.JIT


def test_a_new_xla_mode_with_words_is_offered_without_touching_the_panel(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    # Keras' "auto" has no radio button today: given one's words, it appears after the others
    # (the lever table's order), and a click on it is the comparison's mode.
    words = VALUE_WORDS["xla.auto"]
    monkeypatch.setitem(VALUE_WORDS, "xla.auto", dataclasses.replace(
        words, choice="Keras decides", tip="jit_compile=\"auto\""))
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    click(qtbot, panel.advanced_button)
    names = [b.objectName() for b in panel.advanced.findChildren(QRadioButton)]
    assert names == ["xla:jit", "xla:autocluster", "xla:auto"]
    click(qtbot, _mode_button(panel, XlaMode.AUTO))
    config = panel.config()
    assert config is not None and config.xla is XlaMode.AUTO
    assert panel.values()["xla"] == "auto"


def test_gpus_are_listed_after_the_probe_or_disabled_with_a_reason(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    model = panel.device.model()
    assert isinstance(model, QStandardItemModel)
    assert model.item(0).text() == "CPU"
    assert "looking" in model.item(1).text() and not model.item(1).isEnabled()
    panel.set_devices([{"id": "cpu", "name": "Xeon", "kind": "CPU"}])
    assert model.item(0).text() == "CPU — Xeon"
    gpu = model.item(1)
    assert not gpu.isEnabled() and "no GPU" in gpu.toolTip()
    panel.set_devices([{"id": "cpu", "name": "CPU", "kind": "CPU"},
                       {"id": "gpu:0", "name": "NVIDIA H200", "kind": "GPU"}])
    assert model.item(1).isEnabled() and "H200" in model.item(1).text()
    panel.device.setCurrentIndex(1)
    assert panel.values()["device"] == "gpu:0"


def test_the_probe_fills_the_device_list(qtbot: QtBot, make_window: WindowFactory) -> None:
    devices = [{"id": "cpu", "name": "CPU", "kind": "CPU"},
               {"id": "gpu:0", "name": "Test GPU", "kind": "GPU"}]
    window = make_window(show=False, probe=lambda: devices)
    with qtbot.waitSignal(window.devices_ready, timeout=10_000):
        window.show()
    assert window.settings_panel.device.count() == 2
    assert "1 GPU" in window.device_label.text()


def test_settings_and_geometry_are_remembered(qtbot: QtBot, make_window: WindowFactory,
                                              settings: QSettings, tmp_path: Path) -> None:
    first = make_window()
    first.settings_panel.epochs.setValue(7)
    first.settings_panel.augment.setChecked(False)
    click(qtbot, first.settings_panel.drop_remainder)
    assert first.settings_panel.config().drop_remainder is True  # type: ignore[union-attr]
    assert first.settings_panel.config().explain is True  # type: ignore[union-attr]
    click(qtbot, first.settings_panel.explain)  # `--no-explain`, in the window
    assert first.settings_panel.config().explain is False  # type: ignore[union-attr]
    click(qtbot, first.settings_panel.advanced_button)
    click(qtbot, _mode_button(first.settings_panel, XlaMode.AUTOCLUSTER))
    first.resize(first.width(), 560)  # the offscreen screen is 800x600
    first.close()
    second = make_window(show=False)
    panel = second.settings_panel
    assert panel.epochs.value() == 7
    assert not panel.augment.isChecked()
    assert panel.drop_remainder.isChecked()
    assert not panel.explain.isChecked()
    assert _mode_button(panel, XlaMode.AUTOCLUSTER).isChecked()
    assert settings.value("settings/xla") == "autocluster"  # saved as before
    assert second.height() == first.height() == 560


def test_a_tampered_settings_file_is_refused_with_the_allowed_range(
        qtbot: QtBot, make_window: WindowFactory, settings: QSettings) -> None:
    settings.setValue("settings/epochs", 0)
    settings.setValue("settings/image_size", "20")
    settings.setValue("settings/batch_size", "lots")
    settings.setValue("settings/seed", 5)
    settings.sync()
    window = make_window(show=False)
    panel = window.settings_panel
    assert panel.epochs.value() == 50 and panel.image_size.value() == 150  # defaults kept
    assert panel.batch_size.value() == 64
    assert panel.seed.value() == 5  # the valid one is applied
    problems = " ".join(panel.restore_problems)
    assert "epochs must be between 1 and 1000, got 0" in problems
    assert "smallest image it accepts is 36x36" in problems
    assert "batch size must be a whole number" in problems
    assert "The saved epochs was ignored" in window.message_bar.label.text()


def test_shortcuts(window: MainWindow, dataset: Path) -> None:
    def keys(action: object) -> list[str]:
        return [k.toString() for k in action.shortcuts()]  # type: ignore[attr-defined]

    assert "Ctrl+O" in keys(window.open_action)
    assert "Ctrl+E" in keys(window.export_action)
    assert "Ctrl+Q" in keys(window.quit_action)
    assert "Ctrl+R" in keys(window.run_action)
    assert {"Esc", "Ctrl+."} <= set(keys(window.stop_action))
    assert window.windowTitle() == "xlagui"
    # The window takes drops: it accepts them, and a folder dragged over it is accepted as a copy.
    assert window.acceptDrops()
    mime = url_mime(dataset)  # kept alive: the event points to it
    enter = drag_enter(window, mime)
    assert enter.isAccepted()
    assert enter.dropAction() == Qt.DropAction.CopyAction
