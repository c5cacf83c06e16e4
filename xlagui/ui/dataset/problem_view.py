"""One dataset problem, shown so a person can judge it: the full message, the files it names as
images side by side with their full paths, and (for label conflicts, leakage and duplicates) a
button that leaves the files out of this comparison. The dataset folder is never changed.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.data import exclusions as excl
from xlagui.core.protocol.identity import Split
from xlagui.present.exclusions import leave_out_rule, left_out
from xlagui.present.levels import level_of
from xlagui.present.scan_problems import problem_text
from xlagui.present.units import size_bytes
from xlagui.ui.dataset.thumbnails import decode_image
from xlagui.ui.shared.tasks import BackgroundTask, TaskKeeper
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.shared.widgets import ImageLabel, box_layout

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan, ImageFile, Problem

CARD_IMAGE_SIZE = 320
MAX_CARDS = 6  # images shown side by side; the other paths are listed below them
LEFT_OUT_COLOR = "#b3261e"
KEPT_COLOR = "#1e7b34"


def breakable(path: str) -> str:
    """A path a word-wrapping label may break after each folder (a zero-width space after each
    separator); the tooltip keeps the path as it is, for copying."""
    for sep in sorted({os.sep, "/"}):
        path = path.replace(sep, sep + "\u200b")
    return path


class FileCard(QFrame):
    """One image of a problem: the picture, its full path, split, class and size, and whether
    the comparison leaves it out.

    Signals: none.
    """

    def __init__(self, f: ImageFile, pool: QThreadPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Card")
        self.file = f
        self._tasks = TaskKeeper()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.setSpacing(4)
        self.image = ImageLabel("Loading…")
        self.image.setObjectName("Placeholder")
        # As tall as the picture is shown (not the whole pane), so the path sits under it;
        # the pane scrolls when the window is smaller.
        self.image.setMinimumWidth(180)
        self.image.setFixedHeight(CARD_IMAGE_SIZE)
        self.image.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.badge = QLabel()
        self.badge.setObjectName("Chip")
        self.badge.setVisible(False)
        self.where = QLabel(
            f"<b>{f.label}</b> · {'training' if f.split == Split.TRAIN else 'test'} images"
        )
        self.path = QLabel(breakable(f.path))
        self.path.setWordWrap(True)
        self.path.setToolTip(f.path)
        self.path.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.path.setTextFormat(Qt.TextFormat.PlainText)
        self.info = QLabel(
            f"{f.width} × {f.height} px · {f.format} · {f.color or f.mode} · "
            f"{size_bytes(f.size_bytes)}"
        )
        self.info.setObjectName("Caption")
        layout.addWidget(self.image, 1)
        layout.addWidget(self.badge, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.where)
        layout.addWidget(self.path)
        layout.addWidget(self.info)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        self.setMinimumWidth(200)

        def decode(_state: object, path: str = f.path) -> object:
            return decode_image(path, CARD_IMAGE_SIZE)

        task = BackgroundTask(decode)
        task.done.connect(self._on_decode_done)
        task.failed.connect(self._on_decode_failed)
        self._tasks.keep(task).start(pool)

    def set_left_out(self, state: bool | None) -> None:
        """True: this file is left out; False: it stays; None: nothing left out (no badge)."""
        self.badge.setVisible(state is not None)
        if state is None:
            return
        colour = LEFT_OUT_COLOR if state else KEPT_COLOR
        self.badge.setText("Left out of this comparison" if state else "Kept")
        self.badge.setStyleSheet(f"color: white; background: {colour};")

    def _on_decode_done(self, image: object) -> None:
        self.image.setObjectName("")
        self.image.set_image(QPixmap.fromImage(image))  # type: ignore[arg-type]

    def _on_decode_failed(self, exc: object, _details: str) -> None:
        self.image.clear_image(f"Cannot show this image: {exc}")


class ProblemView(QWidget):
    """The problem (or group of problems of one kind) selected in the Problems list.

    Signals:
        back_requested(): the user wants the class images again.
        leave_out_requested(object list[Problem], bool leave_out): leave these problems' files
            out of the comparison (True) or put them back (False).
    """

    back_requested = Signal()
    leave_out_requested = Signal(object, bool)

    def __init__(self, pool: QThreadPool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._pool = pool
        self.scan: DatasetScan | None = None
        self.problems: list[Problem] = []
        self.exclusions = excl.Exclusions()
        self.cards: list[FileCard] = []
        layout = box_layout(self, (0, 0, 0, 0), 6)
        head = QHBoxLayout()
        self.back_button = QPushButton("← Class images")
        self.back_button.setToolTip("Back to the images of the chosen class")
        self.back_button.clicked.connect(self._on_back_button_clicked)
        self.title = QLabel()
        self.title.setObjectName("Figure")
        head.addWidget(self.title, 1)
        head.addWidget(self.back_button)
        layout.addLayout(head)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.message)

        # The action next to the message it is about, the files below.
        act = QHBoxLayout()
        self.leave_out_button = QPushButton()
        self.leave_out_button.clicked.connect(self._on_leave_out_button_clicked)
        self.rule = QLabel()
        self.rule.setObjectName("Caption")
        self.rule.setWordWrap(True)
        act.addWidget(self.leave_out_button)
        act.addWidget(self.rule, 1)
        layout.addLayout(act)

        self.cards_area = QScrollArea()
        self.cards_area.setWidgetResizable(True)
        self.cards_area.setFrameShape(QFrame.Shape.NoFrame)
        self._cards_host = QWidget()
        self._cards_row = QHBoxLayout(self._cards_host)
        self._cards_row.setContentsMargins(0, 0, 0, 0)
        self._cards_row.setSpacing(10)
        self._cards_row.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.cards_area.setWidget(self._cards_host)
        layout.addWidget(self.cards_area, 1)
        self.other_paths = QLabel()
        self.other_paths.setObjectName("Caption")
        self.other_paths.setWordWrap(True)
        self.other_paths.setTextFormat(Qt.TextFormat.PlainText)
        self.other_paths.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.other_paths)

    # -- what the panel calls ---------------------------------------------------------------

    def show_problems(
        self, scan: DatasetScan, problems: list[Problem], title: str, exclusions: excl.Exclusions
    ) -> None:
        """One problem (its files as images) or several of one kind (their messages)."""
        self.scan = scan
        self.problems = list(problems)
        self.exclusions = exclusions
        self.title.setText(title)
        self._clear_cards()
        if len(problems) == 1:
            p = problems[0]
            self.message.setText(problem_text(p))
            self.message.setStyleSheet(f"color: {LEVEL_COLORS[level_of(p.severity)]};")
            self._show_files(scan, p)
        else:
            shown = problems[:50]
            more = f"\n… and {len(problems) - len(shown)} more" if len(problems) > 50 else ""
            self.message.setText("\n".join(f"• {problem_text(p)}" for p in shown) + more)
            self.message.setStyleSheet("")
            self.cards_area.setVisible(False)
            self.other_paths.setText("Select one of them in the list to see its images.")
            self.other_paths.setVisible(True)
        self.set_exclusions(exclusions)

    def set_exclusions(self, exclusions: excl.Exclusions) -> None:
        """Show which files the comparison leaves out now, and what the button would do."""
        self.exclusions = exclusions
        scan = self.scan
        excludable = [p for p in self.problems if excl.can_leave_out(p)]
        self.leave_out_button.setVisible(bool(excludable) and scan is not None)
        self.rule.setVisible(bool(excludable) and scan is not None)
        if not excludable or scan is None:
            for card in self.cards:
                card.set_left_out(None)
            return
        out = [p for p in excludable if exclusions.leaves_out(p)]
        every = len(out) == len(excludable)
        leaving = {f.path for p in excludable for f in excl.files_left_out(p, scan)}
        left_now = {f.path for f in exclusions.files(scan)}
        for card in self.cards:
            card.set_left_out((card.file.path in left_now) if out else None)
        n = len(leaving)
        if every:
            self.leave_out_button.setText("Put these files back")
            self.rule.setText(f"{left_out(n)}. The dataset folder is not changed.")
        else:
            self.leave_out_button.setText("Leave these files out of this comparison")
            kinds = sorted({p.kind for p in excludable})
            rules = "; ".join(leave_out_rule(k) for k in kinds)
            self.rule.setText(
                f"Would leave out {n} file{'s' if n != 1 else ''}: {rules}. The dataset folder "
                "is not changed."
            )
        self.leave_out_button.setProperty("leaves_out", not every)

    def clear(self) -> None:
        self.scan = None
        self.problems = []
        self._clear_cards()

    # -- filling ------------------------------------------------------------------------------

    def _clear_cards(self) -> None:
        for card in self.cards:
            self._cards_row.removeWidget(card)
            card.deleteLater()
        self.cards = []
        while self._cards_row.count():
            self._cards_row.takeAt(0)

    def _show_files(self, scan: DatasetScan, problem: Problem) -> None:
        by_path = {f.path: f for f in scan.files}
        images = [by_path[p] for p in problem.paths if p in by_path]
        images.sort(key=lambda f: (f.split != Split.TRAIN, f.rel))
        for f in images[:MAX_CARDS]:
            card = FileCard(f, self._pool)
            self.cards.append(card)
            self._cards_row.addWidget(card, 1)
        self.cards_area.setVisible(bool(self.cards))
        rest = [f.path for f in images[MAX_CARDS:]]
        rest += [p for p in problem.paths if p not in by_path]
        if rest:
            intro = "Also named:" if self.cards else "Files and folders named:"
            self.other_paths.setText(intro + "\n" + "\n".join(rest))
        else:
            self.other_paths.setText(
                "" if problem.paths else "No file is named: this is about the dataset as a whole."
            )
        self.other_paths.setVisible(bool(self.other_paths.text()))

    # -- slots ------------------------------------------------------------------------------

    def _on_back_button_clicked(self) -> None:
        self.back_requested.emit()

    def _on_leave_out_button_clicked(self) -> None:
        excludable = [p for p in self.problems if excl.can_leave_out(p)]
        if excludable:
            leave = bool(self.leave_out_button.property("leaves_out"))
            self.leave_out_requested.emit(excludable, leave)
