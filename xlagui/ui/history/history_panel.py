"""The History tab: every comparison saved in the user's data folder, newest first, with the
machine each was measured on; and the same comparison made on several machines side by side."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from xlagui.present import history as words
from xlagui.present.hosts import SIDE_BY_SIDE_COLUMNS, side_by_side_rows
from xlagui.present.report import history_title
from xlagui.ui.shared.tasks import TaskOwner
from xlagui.ui.shared.widgets import ElidedLabel

if TYPE_CHECKING:
    from xlagui.core.results.history import HistoryItem

PathRole = Qt.ItemDataRole.UserRole
# The columns that give way when the row is wider than the list (elided, all of it in the
# tooltip): the machine first, then the title. The verdict in brief keeps its width.
_GIVE_WAY = (words.HISTORY_COLUMNS.index("Machine"), words.HISTORY_COLUMNS.index("Comparison"))
_NARROWEST = 120  # px: what a column that gives way keeps


def _tip(text: str) -> str:
    """A tooltip that wraps (Qt wraps rich text, not plain): a verdict is a paragraph."""
    if not text:
        return ""
    body = "<br>".join(html.escape(line) for line in text.split("\n"))
    return f"<p style='white-space:pre-wrap'>{body}</p>"


class HistoryPanel(QWidget):
    """The saved comparisons, with Open, Show folder, Refresh and "Machines side by side".

    Side by side: the selected comparison and, for each other machine, the newest one of the
    same dataset, model and settings, each with its own XLA speed-up and interval and its own
    step times. No figure is divided across machines (two machines' step times differ for
    reasons no ratio of them could tell apart).

    Signals:
        open_requested(object Path): the user wants this comparison folder reopened.
        refreshed(): the list was read again (in the background) and is shown.
    """

    open_requested = Signal(object)
    refreshed = Signal()

    def __init__(self, root: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.root = root
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.addLayout(self._build_head())
        self._build_lists(layout)
        self.items: list[HistoryItem] = []
        self._listing = TaskOwner(self)  # a newer refresh supersedes an older one
        self._listing.done.connect(self._on_listing_done)
        self._select_after: Path | None = None
        self._on_tree_selection_changed()

    def _build_head(self) -> QHBoxLayout:
        """The title, where the comparisons are kept, and the buttons."""
        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        heading = QLabel("History")
        heading.setObjectName("Heading")
        self.where = ElidedLabel()  # a long folder must not widen the window: "…", tooltip
        self.where.setObjectName("SubHeading")
        self.where.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        titles.addWidget(heading)
        titles.addWidget(self.where)
        head.addLayout(titles, 1)
        self.open_button = QPushButton("Open")
        self.open_button.setObjectName("Primary")
        self.open_button.setToolTip("Show this comparison's plots and summary in the Runs tab")
        self.folder_button = QPushButton("Show folder")
        self.side_by_side_button = QPushButton("Machines side by side")
        self.side_by_side_button.setObjectName("side_by_side")
        self.side_by_side_button.setCheckable(True)
        self.side_by_side_button.setToolTip(
            "This comparison next to the same one measured on other machines: each machine's "
            "own XLA speed-up and step times")
        self.refresh_button = refresh = QPushButton("Refresh")
        self.open_button.clicked.connect(self._on_open_clicked)
        self.folder_button.clicked.connect(self._on_folder_clicked)
        self.side_by_side_button.toggled.connect(self._on_side_by_side_toggled)
        refresh.clicked.connect(self._on_refresh_clicked)
        for b in (self.open_button, self.folder_button, self.side_by_side_button, refresh):
            head.addWidget(b, 0, Qt.AlignmentFlag.AlignVCenter)
        return head

    def _build_lists(self, layout: QVBoxLayout) -> None:
        """The comparisons (or, while there are none, a note) and the machines side by side."""
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(words.HISTORY_COLUMNS))
        self.tree.setHeaderLabels(list(words.HISTORY_COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setWordWrap(False)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        # Sized by `_fit_columns` to what they hold, the verdict first; the last one takes
        # what is left.
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.tree.header().setStretchLastSection(True)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self.tree.itemSelectionChanged.connect(self._on_tree_selection_changed)
        layout.addWidget(self.tree, 1)
        self.empty = QLabel("No comparisons yet: each one you run is saved here automatically.")
        self.empty.setObjectName("Placeholder")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(self.empty)
        self.machines_caption = QLabel()
        self.machines_caption.setObjectName("Caption")
        self.machines_caption.setWordWrap(True)
        self.machines = QTreeWidget()
        self.machines.setObjectName("machines")
        self.machines.setColumnCount(len(SIDE_BY_SIDE_COLUMNS))
        self.machines.setHeaderLabels(list(SIDE_BY_SIDE_COLUMNS))
        self.machines.setRootIsDecorated(False)
        self.machines.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        for w in (self.machines_caption, self.machines):
            w.setVisible(False)
            layout.addWidget(w)

    def refresh(self, *, select: Path | None = None) -> None:
        """Read the saved comparisons again, off the GUI thread (each is a JSON file)."""
        from xlagui.core.files import paths
        from xlagui.core.results import history

        root = self.root or paths.history_dir()
        self.where.setText(f"Saved in {root}")
        self._select_after = select
        self._listing.start(lambda _state: history.list_items(root))

    def _on_listing_done(self, items: list[HistoryItem]) -> None:
        current = self.selected_folder()
        self.items = items
        self.tree.clear()
        for item in self.items:
            row = QTreeWidgetItem(list(words.row(item)))
            row.setData(0, PathRole, str(item.folder))
            for column, tip in enumerate(words.row_tips(item)):
                row.setToolTip(column, _tip(tip))
            self.tree.addTopLevelItem(row)
        self.empty.setVisible(not self.items)
        self.tree.setVisible(bool(self.items))
        wanted = self._select_after or current
        if wanted is not None:
            self.select_folder(wanted)
        self._on_tree_selection_changed()
        self._fit_columns()
        self.refreshed.emit()

    def _fit_columns(self) -> None:
        """Each column as wide as what it holds; where the row is wider than the list, the
        machine, then the title, give way (elided, their tooltips hold all of it), so the
        verdict stays readable and nothing hides behind a horizontal scroll bar."""
        header = self.tree.header()
        count = self.tree.columnCount()
        wanted = [max(self.tree.sizeHintForColumn(c), header.sectionSizeHint(c))
                  for c in range(count)]
        over = sum(wanted) - self.tree.viewport().width()
        for c in _GIVE_WAY:
            cut = max(0, min(over, wanted[c] - _NARROWEST))
            wanted[c] -= cut
            over -= cut
        for c in range(count - 1):  # the last one stretches over the rest
            header.resizeSection(c, wanted[c])

    def resizeEvent(self, event: QResizeEvent) -> None:  # a Qt override: its name is Qt's
        super().resizeEvent(event)
        self._fit_columns()

    def select_folder(self, folder: Path) -> None:
        for i in range(self.tree.topLevelItemCount()):
            row = self.tree.topLevelItem(i)
            if row is not None and row.data(0, PathRole) == str(folder):
                self.tree.setCurrentItem(row)
                return

    def selected_folder(self) -> Path | None:
        row = self.tree.currentItem()
        return Path(row.data(0, PathRole)) if row is not None else None

    def _on_refresh_clicked(self) -> None:
        self.refresh()

    def _on_open_clicked(self) -> None:
        folder = self.selected_folder()
        if folder is not None:
            self.open_requested.emit(folder)

    def _on_folder_clicked(self) -> None:
        folder = self.selected_folder()
        if folder is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def _on_tree_item_double_clicked(self, row: QTreeWidgetItem, _column: int) -> None:
        self.open_requested.emit(Path(row.data(0, PathRole)))

    def side_by_side(self) -> list[HistoryItem]:
        """The selected comparison and the same one on other machines (`same_settings`)."""
        from xlagui.core.results.history import same_settings

        folder = self.selected_folder()
        chosen = next((i for i in self.items if i.folder == folder), None)
        return same_settings(self.items, chosen) if chosen is not None else []

    def _show_machines(self) -> None:
        rows = self.side_by_side() if self.side_by_side_button.isChecked() else []
        shown = len(rows) > 1
        self.machines.clear()
        for values in side_by_side_rows(rows) if shown else []:
            self.machines.addTopLevelItem(QTreeWidgetItem(list(values)))
        if shown:
            self.machines_caption.setText(
                f"{history_title(rows[0])} on {len(rows)} machines: each row is that machine's own "
                "measurement (XLA against the baseline there); step times are shown as "
                "measured, never divided across machines.")
        self.machines_caption.setVisible(shown)
        self.machines.setVisible(shown)

    def _on_side_by_side_toggled(self, _on: bool) -> None:
        self._show_machines()

    def _on_tree_selection_changed(self) -> None:
        has = self.tree.currentItem() is not None
        self.open_button.setEnabled(has)
        self.folder_button.setEnabled(has)
        others = len(self.side_by_side()) > 1
        self.side_by_side_button.setEnabled(others)
        if not others and self.side_by_side_button.isChecked():
            self.side_by_side_button.setChecked(False)  # hides the table
        self._show_machines()
