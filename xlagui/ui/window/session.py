"""The main window's saved state: its geometry, splitter, tab and the settings panel's values,
kept in the window's QSettings between sessions."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Protocol

from xlagui.present.levels import Level

if TYPE_CHECKING:  # types only: the sidebar and the message bar import Qt's widgets
    from PySide6.QtCore import QByteArray, QSettings
    from PySide6.QtWidgets import QCheckBox, QSplitter, QTabWidget

    from xlagui.ui.runs.run_sidebar import RunSidebar
    from xlagui.ui.settings.settings_panel import SettingsPanel
    from xlagui.ui.shared.dialogs import MessageBar


class SavedWindow(Protocol):
    """What of the main window is saved and restored (the window itself, without naming it:
    `main_window` imports this module, so this one names only what it uses)."""

    store: QSettings
    splitter: QSplitter
    tabs: QTabWidget
    settings_panel: SettingsPanel
    sidebar: RunSidebar
    speed_only: QCheckBox
    message_bar: MessageBar

    def saveGeometry(self) -> QByteArray: ...
    def saveState(self, version: int = ...) -> QByteArray: ...
    def restoreGeometry(self, geometry: QByteArray) -> bool: ...
    def restoreState(self, state: QByteArray, version: int = ...) -> bool: ...


def save(window: SavedWindow) -> None:
    s = window.store
    s.setValue("window/geometry", window.saveGeometry())
    s.setValue("window/state", window.saveState())
    s.setValue("window/splitter", window.splitter.saveState())
    s.setValue("window/tab", window.tabs.currentIndex())
    window.settings_panel.save(s)
    window.sidebar.save(s)
    s.sync()


def restore(window: SavedWindow) -> None:
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
