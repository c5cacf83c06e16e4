"""Pressing what a user presses: buttons, menu items, toolbar buttons and shortcuts, with real
mouse and key events, and the modal dialogs they open answered as a user would.

`CrashWatch` stands in for the app's crash handler while a test clicks: any exception that
reaches it (a slot that raised) and any error dialog that opened fail the test.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import shiboken6
from PySide6.QtCore import QObject, QPoint, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QFileDialog,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QRadioButton,
    QStyle,
    QStyleOptionButton,
    QTableWidget,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)
from pytestqt.exceptions import TimeoutError as WaitTimeout
from pytestqt.qtbot import QtBot

from xlagui.ui.app import CrashHandler

LEFT = Qt.MouseButton.LeftButton


@dataclass
class Seen:
    """One modal dialog the answerer met: its kind, title, object name and text."""

    kind: str
    title: str
    name: str
    text: str


@dataclass
class ModalAnswerer:
    """Answers every modal dialog as soon as it opens (polling, so it also works inside the
    nested event loop of a blocking `exec()`).

    A file dialog whose title is in `folders` gets that folder chosen; a message box whose
    title is in `buttons` gets that button clicked; a dialog whose title is in `dismiss` is
    closed, as with Escape. Anything else is closed too, but kept in `unexpected`, which
    `watching` fails on: a dialog no test asked for is a finding, not noise.
    """

    folders: dict[str, Path] = field(default_factory=dict)
    buttons: dict[str, str] = field(default_factory=dict)
    dismiss: set[str] = field(default_factory=set)
    seen: list[Seen] = field(default_factory=list)
    unexpected: list[Seen] = field(default_factory=list)
    _timer: QTimer | None = None

    def start(self) -> ModalAnswerer:
        self._timer = QTimer()
        self._timer.setInterval(15)
        self._timer.timeout.connect(self._answer)
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def titles(self) -> list[str]:
        return [s.title for s in self.seen]

    def _answer(self) -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or isinstance(dialog, QMainWindow) or not dialog.isVisible():
            return
        text = dialog.text() if isinstance(dialog, QMessageBox) else ""
        seen = Seen(type(dialog).__name__, dialog.windowTitle(), dialog.objectName(), text)
        self.seen.append(seen)
        title = dialog.windowTitle()
        answered = title in self.folders or title in self.buttons or title in self.dismiss
        if not answered and seen.name != "ErrorDialog":  # error dialogs: CrashWatch.check
            self.unexpected.append(seen)
        if isinstance(dialog, QFileDialog):
            folder = self.folders.get(dialog.windowTitle())
            if folder is None:
                dialog.reject()
            else:
                # Typed into the name field, as a user can (Qt's own dialog offscreen).
                name = dialog.findChild(QLineEdit, "fileNameEdit")
                if name is not None:
                    name.setText(str(folder))
                else:
                    dialog.setDirectory(str(folder))
                dialog.accept()
            return
        wanted = self.buttons.get(dialog.windowTitle())
        if isinstance(dialog, QMessageBox) and wanted is not None:
            button = next(b for b in dialog.buttons() if b.text() == wanted)
            QTest.mouseClick(button, LEFT)
            return
        if isinstance(dialog, QDialog):
            dialog.reject()
        else:
            dialog.close()


@dataclass
class CrashWatch:
    """The app's crash handler, installed for the test: what reaches it is kept in `caught`."""

    window: QWidget
    caught: list[BaseException] = field(default_factory=list)
    handler: CrashHandler | None = None

    def install(self) -> CrashWatch:
        watch = self

        class Recording(CrashHandler):
            def __call__(
                self,
                exc_type: type[BaseException],
                exc: BaseException,
                tb: TracebackType | None,
            ) -> None:
                watch.caught.append(exc)
                super().__call__(exc_type, exc, tb)

        self.handler = Recording(lambda: self.window).install()
        return self

    def uninstall(self) -> None:
        if self.handler is not None:
            self.handler.uninstall()

    def check(self, answerer: ModalAnswerer | None = None) -> None:
        errors = [s for s in (answerer.seen if answerer else []) if s.name == "ErrorDialog"]
        # Every error dialog is the window's child (dialogs.show_error(window, ...)). Walking
        # QApplication.topLevelWidgets() instead (every window left by earlier tests too)
        # segfaulted once in CI's full lane.
        # A window that closed deleted itself, and its dialogs with it: none is left open.
        visible = [
            w for w in self.window.findChildren(QMessageBox, "ErrorDialog") if w.isVisible()
        ] if shiboken6.isValid(self.window) else []
        assert not self.caught, f"reached the crash handler: {self.caught!r}"
        assert not errors and not visible, f"error dialogs: {errors or visible}"
        unexpected = answerer.unexpected if answerer else []
        assert not unexpected, f"dialogs no test asked for (closed unanswered): {unexpected}"


@contextmanager
def watching(window: QWidget, answerer: ModalAnswerer) -> Iterator[CrashWatch]:
    """Install the crash watch and the answerer; check both when the block ends."""
    assert sys.excepthook is not None
    watch = CrashWatch(window).install()
    answerer.start()
    try:
        yield watch
    finally:
        answerer.stop()
        watch.uninstall()
        # Also when the block failed: a crash explains a failure better than what followed.
        watch.check(answerer)


def activate(qtbot: QtBot, window: QWidget) -> None:
    """Make `window` the active one again (a closed dialog leaves none active offscreen), so
    its shortcuts reach it."""
    if QApplication.activeWindow() is not window:
        window.activateWindow()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=2_000)


def click(qtbot: QtBot, widget: QWidget) -> None:
    """A left click where a user would aim: a check box or radio button on its box (its middle
    may be empty space right of the label, which does nothing), anything else in its middle."""
    if isinstance(widget, (QCheckBox, QRadioButton)):
        option = QStyleOptionButton()
        widget.initStyleOption(option)
        element = (
            QStyle.SubElement.SE_CheckBoxIndicator
            if isinstance(widget, QCheckBox)
            else QStyle.SubElement.SE_RadioButtonIndicator
        )
        box = widget.style().subElementRect(element, option, widget)
        qtbot.mouseClick(widget, LEFT, pos=box.center())
        return
    qtbot.mouseClick(widget, LEFT)


def click_menu_item(qtbot: QtBot, window: QMainWindow, action: QAction) -> bool:
    """Open the menu bar's menu that holds `action` and click the item. False if the item was
    disabled (the menu is then closed with Escape, as a user would)."""
    bar = window.menuBar()
    for top in bar.actions():
        menu = top.menu()
        if not isinstance(menu, QMenu) or action not in menu.actions():
            continue
        activate(qtbot, window)
        qtbot.mouseClick(bar, LEFT, pos=bar.actionGeometry(top).center())
        qtbot.waitUntil(menu.isVisible, timeout=2_000)
        enabled = action.isEnabled()
        qtbot.mouseClick(menu, LEFT, pos=menu.actionGeometry(action).center())
        if menu.isVisible():
            qtbot.keyClick(menu, Qt.Key.Key_Escape)
            qtbot.waitUntil(lambda: not menu.isVisible(), timeout=2_000)  # noqa: B023
        return enabled
    raise AssertionError(f"{action.text()!r} is in no menu")


def menu_items(window: QMainWindow) -> list[QAction]:
    """Every item of every menu of the menu bar, separators left out."""
    items = []
    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            items += [a for a in menu.actions() if not a.isSeparator()]
    return items


def close_window(window: QWidget) -> bool:
    """Close `window` with its title bar's close button: the close event the window system
    sends (to the window's native side, as a click on × does), not a call to `close()`.
    True if the window accepted it (it closes); False if it refused (it stays open)."""
    handle = window.windowHandle()
    assert handle is not None and window.isVisible(), "the window is not on screen"
    event = QCloseEvent()
    event.setAccepted(True)
    QApplication.sendEvent(handle, event)
    return event.isAccepted()


def wait_until(qtbot: QtBot, done: Callable[[], bool], what: str, timeout: int = 10_000) -> None:
    """Wait up to `timeout` ms for `done()`; on timeout fail saying `what` never happened."""
    try:
        qtbot.waitUntil(done, timeout=timeout)
    except WaitTimeout:
        raise AssertionError(f"after {timeout} ms, still not: {what}") from None


def press_keys(qtbot: QtBot, window: QWidget, keys: QKeySequence) -> None:
    """Type the first chord of `keys` into the active window (how a shortcut is pressed)."""
    activate(qtbot, window)
    combo = keys[0]  # type: ignore[index]
    qtbot.keyClick(window, combo.key(), combo.keyboardModifiers())


def shortcuts(actions: Iterable[QAction]) -> list[tuple[QAction, QKeySequence]]:
    return [(a, k) for a in actions for k in a.shortcuts() if not k.isEmpty()]


def visible_buttons(root: QWidget, skip: Iterable[QObject] = ()) -> list[QAbstractButton]:
    """The buttons a user can see and press in `root` now (check boxes and radio buttons
    are buttons too), minus those in `skip`."""
    skipped = set(map(id, skip))
    return [
        b
        for b in root.findChildren(QAbstractButton)
        if b.isVisible() and b.isEnabled() and id(b) not in skipped and b.window() is root.window()
    ]


def item_at(parent: QTreeWidget | QTreeWidgetItem, index: int) -> QTreeWidgetItem:
    """The `index`th top-level item of a tree, or child of an item (which must exist)."""
    item = parent.topLevelItem(index) if isinstance(parent, QTreeWidget) else parent.child(index)
    assert item is not None, index
    return item


def top_item(tree: QTreeWidget, words: str) -> QTreeWidgetItem:
    """The top-level item whose text holds `words`."""
    for i in range(tree.topLevelItemCount()):
        item = item_at(tree, i)
        if words in item.text(0):
            return item
    raise AssertionError(f"no item says {words!r}")


def click_tree_item(qtbot: QtBot, tree: QTreeWidget, item: QTreeWidgetItem) -> None:
    """Click an item of a tree as a user would: its group opened first, scrolled into view."""
    parent = item.parent()
    while parent is not None:
        if not parent.isExpanded():
            parent.setExpanded(True)  # what a click on the arrow does
        parent = parent.parent()
    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    assert rect.isValid(), item.text(0)
    qtbot.mouseClick(tree.viewport(), LEFT, pos=rect.center())


def each_click(
    qtbot: QtBot,
    buttons: Iterable[QAbstractButton],
    before: Callable[[], None] | None = None,
    after: Callable[[], None] | None = None,
) -> list[str]:
    """Click each button that is (after `before`) still visible and enabled; returns their
    texts (for the report)."""
    pressed = []
    for b in list(buttons):
        if before is not None:
            before()
        if not (b.isVisible() and b.isEnabled()):
            continue
        pressed.append(b.text() or b.toolTip() or b.objectName())
        click(qtbot, b)
        if after is not None:
            after()
    return pressed


def choose_combo_item(qtbot: QtBot, combo: QComboBox, index: int) -> None:
    """Open `combo`'s list with a click and click the item at `index`, as a user picks."""
    qtbot.mouseClick(combo, LEFT)
    view = combo.view()
    qtbot.waitUntil(view.isVisible, timeout=2_000)
    rect = view.visualRect(view.model().index(index, 0))
    assert rect.isValid(), f"item {index} is not in the open list"
    # A release this soon after the list opened counts as the end of the opening click (Qt's
    # combo box ignores it): a person's second click comes later.
    qtbot.wait(QApplication.doubleClickInterval() + 50)
    qtbot.mouseClick(view.viewport(), LEFT, pos=rect.center())
    qtbot.waitUntil(lambda: not view.isVisible(), timeout=2_000)


def click_tab(qtbot: QtBot, tabs: QTabWidget, title: str) -> None:
    """Click the tab titled `title` on its tab bar."""
    bar = tabs.tabBar()
    index = next(i for i in range(tabs.count()) if tabs.tabText(i) == title)
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert tabs.currentIndex() == index


def click_header(qtbot: QtBot, table: QTableWidget, column: int) -> None:
    """Click a table's column header (to sort by it)."""
    header = table.horizontalHeader()
    x = header.sectionViewportPosition(column) + header.sectionSize(column) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))


def column(table: QTableWidget, name: str) -> list[str]:
    """The texts of the column headed `name`, top to bottom."""
    c = next(i for i in range(table.columnCount()) if table.horizontalHeaderItem(i).text() == name)
    return [table.item(r, c).text() for r in range(table.rowCount())]
