"""Dialogs and inline messages: errors in plain words with the details on demand.

Tests replace `ask` (the only blocking call here) with a function that answers at once;
`show_error` never blocks: it opens a window-modal box and returns it.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QColor, QDesktopServices, QFont, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from xlagui.present.levels import Level
from xlagui.ui.shared.theme import LEVEL_COLORS

# The message bar at each level: (text, background, border).
MESSAGE_COLORS = {
    Level.ERROR: ("#b3261e", "#fbe9e7", "#f3b8b2"),
    Level.WARNING: ("#7a5300", "#fff4dc", "#f0d28e"),
    Level.INFO: ("#1a4f8b", "#e8f0fb", "#b9cdea"),
    Level.OK: ("#1e5e2f", "#e6f4ea", "#a8d5b4"),
}


def show_error(
    parent: QWidget | None, title: str, message: str, hint: str = "", details: str = ""
) -> QMessageBox:
    """A warning box: what happened in one sentence, what to do, and details on demand.

    Opens window-modal and returns at once, so a running comparison keeps going behind it.
    """
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    box.setText(_sentence(message))
    if hint:
        box.setInformativeText(hint)
    if details:
        box.setDetailedText(details)
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.setObjectName("ErrorDialog")
    box.open()
    return box


def ask(parent: QWidget | None, title: str, text: str, yes: str, no: str = "Cancel") -> bool:
    """A blocking yes/no question; True for `yes`."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(text)
    yes_button = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
    box.addButton(no, QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(yes_button)
    box.exec()
    return box.clickedButton() is yes_button


def choose(parent: QWidget | None, title: str, text: str, choices: list[str],
           no: str = "Cancel") -> str | None:
    """A blocking question with several answers: the chosen one's words, None for `no`; the
    first is the default."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(text)
    buttons = {box.addButton(c, QMessageBox.ButtonRole.AcceptRole): c for c in choices}
    box.addButton(no, QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(next(iter(buttons)))
    box.exec()
    clicked = box.clickedButton()
    return next((words for b, words in buttons.items() if b is clicked), None)


def show_text(parent: QWidget | None, title: str, text: str) -> QDialog:
    """A read-only text (a scan report, a log) in a resizable, non-blocking dialog."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    layout = QVBoxLayout(dialog)
    view = QPlainTextEdit(text)
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    mono = QFont("monospace")
    mono.setStyleHint(QFont.StyleHint.TypeWriter)
    view.setFont(mono)
    layout.addWidget(view)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)
    dialog.resize(820, 560)
    dialog.open()
    return dialog


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return "Something went wrong."
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


class MessageBar(QFrame):
    """A one-line message above the tabs (info, ok, warning or error) that the user can close.

    Signals:
        link_activated(str): a link in the message was clicked.
    """

    link_activated = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageBar")
        self.level = Level.INFO
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 6, 6)
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.label.linkActivated.connect(self.link_activated)
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(self.label, 1)
        layout.addWidget(close)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_message(self, level: str, html: str, timeout_ms: int = 0) -> None:
        """Show `html` at `level` (a `Level`; a queued signal brings its plain string)."""
        self.level = Level(level)
        fg, bg, border = MESSAGE_COLORS[self.level]
        self.setStyleSheet(
            f"QFrame#MessageBar {{ background: {bg}; border: 1px solid {border}; "
            f"border-radius: 6px; }} QFrame#MessageBar QLabel {{ color: {fg}; }}"
        )
        self.label.setText(html)
        self.show()
        if timeout_ms:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()

    def text(self) -> str:
        return self.label.text()


class DropOverlay(QWidget):
    """The highlight shown over the window while something is dragged onto it.

    Signals: none. Transparent to the mouse, so it never steals the drop itself.
    """

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground)
        self.accepted = True
        self.message = ""
        self.hide()
        parent.installEventFilter(self)

    def show_for(self, accepted: bool, message: str) -> None:
        self.accepted = accepted
        self.message = message
        parent = self.parentWidget()
        if parent is not None:
            self.setGeometry(parent.rect())
        self.raise_()
        self.show()
        self.update()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        parent = self.parentWidget()
        if parent is not None and obj is parent and event.type() == QEvent.Type.Resize \
                and self.isVisible():
            self.setGeometry(parent.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        colour = QColor("#2f6fd6" if self.accepted else LEVEL_COLORS[Level.ERROR])
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fill = QColor(colour)
        fill.setAlpha(38)
        p.fillRect(self.rect(), QColor(255, 255, 255, 150))
        p.setBrush(fill)
        pen = QPen(colour, 3, Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawRoundedRect(self.rect().adjusted(12, 12, -12, -12), 16, 16)
        font = p.font()
        font.setPointSizeF(20)
        font.setWeight(QFont.Weight.DemiBold)
        p.setFont(font)
        p.setPen(colour.darker(120))
        p.drawText(self.rect().adjusted(40, 40, -40, -40),
                   Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, self.message)
        p.end()


def show_about(parent: QWidget) -> None:
    from xlagui import __version__

    QMessageBox.about(
        parent, "About xlagui",
        f"<b>xlagui {__version__}</b><p>Does XLA make my TensorFlow model train faster, "
        "by how much, and at what cost? xlagui trains the same CNN with and without XLA "
        "on your images and compares them.</p>")


def open_log_folder(folder: Path | None) -> tuple[Level, str, int] | None:
    """Show the log folder (`core.paths.log_dir` when None; made if missing) in the file
    manager; what the message bar should say instead when that fails, else None."""
    from xlagui.core.files import paths

    folder = folder or paths.log_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return Level.ERROR, html.escape(f"The log folder {folder} cannot be made: {exc}"), 8000
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
        return Level.INFO, f"The log files are in {html.escape(str(folder))}", 10000
    return None
