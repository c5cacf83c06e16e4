"""The sidebar: the settings fit its width at every window size (every line wraps inside, no
field runs under the scroll bar), and a note is said once."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QCheckBox,
    QComboBox,
    QLabel,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QWidget,
)
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from tests.ui.conftest import WindowFactory
from xlagui.ui.window.main_window import MainWindow

SHOWN = (QLabel, QCheckBox, QRadioButton, QAbstractSpinBox, QComboBox, QPushButton)


def _settled() -> None:
    for _ in range(3):  # a layout change can ask for another
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def _past_the_edge(window: MainWindow) -> list[str]:
    """What in the settings reaches past the right edge of the sidebar's scroll area."""
    panel = window.settings_panel
    scroll = panel.parentWidget().parentWidget()
    assert isinstance(scroll, QScrollArea)
    viewport = scroll.viewport()
    out = []
    for widget in panel.findChildren(QWidget):
        if not isinstance(widget, SHOWN) or not widget.isVisible():
            continue
        right = widget.mapTo(viewport, QPoint(widget.width(), 0)).x()
        if right > viewport.width():
            words = widget.text() if hasattr(widget, "text") else widget.objectName()
            out.append(f"{type(widget).__name__} {words[:50]!r}: {right - viewport.width()} px")
    if scroll.horizontalScrollBar().isVisible():
        out.append("the horizontal scroll bar")
    return out


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
def test_every_setting_fits_the_sidebar(qtbot: QtBot, make_window: WindowFactory,
                                        dataset: Path, size: tuple[int, int]) -> None:
    window = make_window()
    window.resize(*size)
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    panel = window.settings_panel
    panel.batch_size.setValue(5)  # its note: full batches per epoch and the images left out
    click(qtbot, panel.advanced_button)  # the XLA modes too
    _settled()
    assert panel._note_labels["batch_size"].isVisible()
    assert _past_the_edge(window) == []


def test_a_narrow_sidebar_stays_as_wide_as_its_settings(qtbot: QtBot,
                                                        window: MainWindow) -> None:
    """Dragged as narrow as it goes, the sidebar keeps the settings' own width."""
    window.resize(1280, 800)
    window.splitter.setSizes([10, 1270])
    _settled()
    assert _past_the_edge(window) == []


def test_each_hardware_note_is_said_once(qtbot: QtBot, window: MainWindow) -> None:
    """bf16 and jit+bf16 share the CPU's note (fp16 and jit+fp16 theirs): it is said under the
    first, or under the one ticked."""
    panel = window.settings_panel
    notes = panel._arm_notes
    shown = [n.text() for n in notes.values() if n.isVisible()]
    assert shown and len(shown) == len(set(shown))
    assert notes["fp16"].isVisible() and not notes["jit+fp16"].isVisible()
    click(qtbot, panel.arm_boxes["jit+fp16"])
    assert notes["jit+fp16"].isVisible() and not notes["fp16"].isVisible()
    click(qtbot, panel.arm_boxes["fp16"])
    assert notes["fp16"].isVisible() and not notes["jit+fp16"].isVisible()
