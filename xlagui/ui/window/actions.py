"""What the user can press in the window's frame: the actions (each with its shortcut and tip),
the menus and the toolbar that hold them, and when each is enabled. Run and Stop are in the Run
menu and on the keys, not on the toolbar: their buttons are the sidebar's."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QStyle

from xlagui.ui.shared.widgets import make_action


@dataclass(frozen=True)
class Commands:
    """What each action calls: the window's methods (each called with no argument but
    `show_tab`, which gets the tab's index)."""

    browse: Callable[[], object]
    demo: Callable[[], object]
    export: Callable[[], object]
    copy_markdown: Callable[[], object]
    quit: Callable[[], object]
    run: Callable[[], object]
    run_one: Callable[[], object]
    stop: Callable[[], object]
    show_tab: Callable[[int], object]
    show_logs: Callable[[], object]
    about: Callable[[], object]


class WindowActions:
    """The window's actions, built on `window` (which owns them, so their shortcuts work
    anywhere in it); `add_menus` puts them in its menus and toolbar."""

    def __init__(self, window: QMainWindow, commands: Commands) -> None:
        self._commands = commands
        sp = QStyle.StandardPixmap

        action = functools.partial(make_action, window)
        self.open = action("&Open dataset…", commands.browse,
                           [QKeySequence(QKeySequence.StandardKey.Open)],
                           "Choose a folder of images", sp.SP_DirOpenIcon)
        self.demo = action("Open the &demo dataset", commands.demo, None,
                           "Drawn African and Asian elephants, made on first use")
        self.export = action("&Export report…", commands.export,
                             [QKeySequence("Ctrl+E")],
                             "Write the comparison as PNG, CSV and JSON to a folder",
                             sp.SP_DialogSaveButton)
        self.copy_markdown = action(
            "Copy as &Markdown", commands.copy_markdown, None,
            "Put the comparison on the clipboard as Markdown tables, to paste into an issue or "
            "a pull request")
        quit_keys = QKeySequence.keyBindings(QKeySequence.StandardKey.Quit)
        if QKeySequence("Ctrl+Q") not in quit_keys:
            quit_keys.append(QKeySequence("Ctrl+Q"))
        self.quit = action("&Quit", commands.quit, quit_keys, "Close xlagui")
        self.run = action("&Run comparison", commands.run,
                          [QKeySequence("Ctrl+R")],
                          "Train the baseline and the XLA model, then compare",
                          sp.SP_MediaPlay)
        self.run_one = action("Run XLA only", commands.run_one, None,
                              "Train only the side chosen under “One side” in the sidebar")
        self.stop = action("&Stop", commands.stop,
                           [QKeySequence(Qt.Key.Key_Escape), QKeySequence("Ctrl+.")],
                           "Stop the running comparison", sp.SP_MediaStop)
        self.quit.setMenuRole(QAction.MenuRole.QuitRole)

    def add_menus(self, window: QMainWindow) -> None:
        """The menu bar (File, Run, View, Help) and the toolbar."""
        commands = self._commands
        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.open, self.demo])
        file_menu.addSeparator()
        file_menu.addActions([self.export, self.copy_markdown])
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        bar.addMenu("&Run").addActions([self.run, self.run_one, self.stop])
        view_menu = bar.addMenu("&View")
        for i, name in enumerate(("&Dataset", "R&uns", "&History")):
            a = QAction(name, window)
            a.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            a.triggered.connect(lambda _checked=False, i=i: commands.show_tab(i))
            view_menu.addAction(a)
        help_menu = bar.addMenu("&Help")
        self.show_logs = make_action(
            window, "Show &log folder", commands.show_logs, None,
            "Open the folder with xlagui's log files and crash log (attach them to a bug report)")
        help_menu.addAction(self.show_logs)
        help_menu.addSeparator()
        help_menu.addAction(make_action(window, "&About xlagui", commands.about))

        tools = window.addToolBar("Main")
        tools.setObjectName("MainToolBar")
        tools.setMovable(False)
        tools.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        # Run and Stop are the sidebar's buttons, beside the settings they use: a second pair
        # up here was two of each on screen (the Run menu and the shortcuts stay).
        tools.addAction(self.open)
        tools.addSeparator()
        tools.addAction(self.export)

    def show_state(self, *, reason: str, running: bool, stopping: bool, one_side: str,
                   report_shown: bool) -> None:
        """Enable what can be done now (`reason`: why a comparison cannot start, "" when it
        can); `one_side` names the side "Run one side" trains."""
        self.run.setEnabled(not reason)
        self.run_one.setEnabled(not reason)
        self.run_one.setText(one_side)
        self.stop.setEnabled(running and not stopping)
        self.export.setEnabled(report_shown and not running)
        self.copy_markdown.setEnabled(self.export.isEnabled())
        self.open.setEnabled(True)
