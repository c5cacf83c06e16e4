"""The main window's saved state: its geometry, splitter, tab and the settings panel's values,
kept in the window's QSettings between sessions."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from xlagui.present.levels import Level

if TYPE_CHECKING:
    from xlagui.ui.window.main_window import MainWindow


def save(window: MainWindow) -> None:
    s = window.store
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    s.setValue("window/splitter", window.splitter.saveState())
    s.setValue("window/tab", window.tabs.currentIndex())
    window.settings_panel.save(s)
    window.sidebar.save(s)
    s.sync()


def restore(window: MainWindow) -> None:
    s = window.store
    geometry = s.value("window/geometry")
    if geometry is not None:
        window.restoreGeometry(geometry)
    state = s.value("window/state")
    if state is not None:
        window.restoreState(state)
    splitter = s.value("window/splitter")
    if splitter is not None:
        window.splitter.restoreState(splitter)
    panel = window.settings_panel
    panel.restore(s)
    window.sidebar.restore(s)
    window.speed_only.setChecked(str(s.value("run/speed_only", "false")).lower() == "true")
    if panel.restore_problems:
        window.message_bar.show_message(
            Level.WARNING, html.escape(" ".join(panel.restore_problems)))
