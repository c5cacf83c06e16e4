"""Small widgets shared by the panels."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QMouseEvent, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QBoxLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)


class ElidedLabel(QLabel):
    """A one-line label that shortens its text with “…” rather than widening its layout.

    Live figures change their text many times a second; a label that grows with its text
    would make the whole column (and its plots) lay out and repaint again each time.

    Signals: none. `text()` returns the full text; the tooltip shows it when shortened.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(text)

    def setText(self, text: str) -> None:
        if text == self._full and super().text():
            return
        self._full = text
        self._elide()

    def text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.width() if self.isVisible() or self.width() > 0 else 10_000
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width)
        super().setText(shown)
        if shown != self._full:
            self.setToolTip(self._full)


class ImageLabel(QLabel):
    """Shows a picture as large as fits, keeping its proportions (small images are enlarged,
    smoothly, so a 160 px image is not a stamp in a large pane).

    Signals: none.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._source = QPixmap()
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)  # its placeholder text, in a pane narrower than one line of it
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    def set_image(self, pixmap: QPixmap) -> None:
        self._source = pixmap
        self._rescale()

    def clear_image(self, text: str = "") -> None:
        self._source = QPixmap()
        super().setPixmap(QPixmap())
        self.setText(text)

    def source(self) -> QPixmap:
        return self._source

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._rescale()

    def _rescale(self) -> None:
        if self._source.isNull():
            return
        size = self.contentsRect().size()
        if size.width() < 2 or size.height() < 2:
            return
        super().setPixmap(self._source.scaled(size, Qt.AspectRatioMode.KeepAspectRatio,
                                              Qt.TransformationMode.SmoothTransformation))


def make_action(parent: QWidget, text: str, slot: Callable[[], object],
                keys: list[QKeySequence] | None = None, tip: str = "",
                icon: QStyle.StandardPixmap | None = None) -> QAction:
    """An action of `parent` that calls `slot` with no argument (`triggered`'s `checked` never
    reaches it), with its first shortcut shown in the tool tip."""
    a = QAction(text, parent)
    if icon is not None:
        a.setIcon(parent.style().standardIcon(icon))
    if keys:
        a.setShortcuts(keys)
    if tip:
        a.setStatusTip(tip)
        native = QKeySequence.SequenceFormat.NativeText
        a.setToolTip(tip + (f" ({keys[0].toString(native)})" if keys else ""))
    a.triggered.connect(lambda _checked=False: slot())
    parent.addAction(a)
    return a


class _FillingBody(QWidget):
    """A scroll area's body exactly as tall as the area, or as its minimum size where the area
    is shorter (then it scrolls). A resizable QScrollArea otherwise makes a body whose layout
    has a height for its width (any word-wrapped label) as tall as that preferred height, and
    the run columns' plots ran past the bottom of the strip, their axes out of sight."""

    def heightForWidth(self, width: int) -> int:
        return -1


def transparent_body(scroll: QScrollArea, name: str, *, fill_height: bool = False) -> QWidget:
    """Give `scroll` (resizable, frameless) a body that shows the window's background through,
    and return the body to lay out. `name` is the body's object name, for its style sheet.
    With `fill_height` the body fills the area's height instead of taking the height its
    wrapped text would like (for a row of columns, not for a page of text)."""
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    body = _FillingBody() if fill_height else QWidget()
    body.setObjectName(name)
    body.setStyleSheet(f"QWidget#{name} {{ background: transparent; }}")
    scroll.viewport().setAutoFillBackground(False)
    scroll.setWidget(body)
    return body


def box_layout(
    parent: QWidget, margins: tuple[int, int, int, int], spacing: int, vertical: bool = True
) -> QBoxLayout:
    """A vertical (or horizontal) layout on `parent` with these margins and spacing."""
    layout = QVBoxLayout(parent) if vertical else QHBoxLayout(parent)
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    return layout


def parent_window(obj: QObject) -> QWidget:
    """The window a controller belongs to, through Qt's parent rather than a Python reference:
    a window in a reference cycle could be destroyed by Python's garbage collector in whichever
    thread it happens to run."""
    window = obj.parent()
    assert isinstance(window, QWidget)
    return window


class _ButtonWords(QLabel):
    """Words beside a check box that a click on toggles it, as a click on its own text does.

    Signals: none."""

    def __init__(self, words: str, button: QAbstractButton) -> None:
        super().__init__(words)
        self._button = button
        self.setWordWrap(True)
        self.setObjectName("Caption")
        self.setToolTip(button.toolTip())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        super().mouseReleaseEvent(event)
        inside = self.rect().contains(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and inside:
            self._button.click()  # nothing when it is disabled


def with_words(button: QAbstractButton, words: str) -> QWidget:
    """`button` (a check box with a short text) and `words` beside it that wrap to the width
    there is: a check box's own text never wraps, and a long one widened the settings past the
    sidebar's edge."""
    button.setAccessibleDescription(words)  # a screen reader says them with the box
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(6)
    layout.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
    layout.addWidget(_ButtonWords(words, button), 1)
    return row
