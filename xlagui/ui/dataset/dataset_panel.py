"""The Dataset tab: what the scan found (layout, classes, sizes, problems) and the images.

The panel shows a `DatasetScan` and forwards what the user asks for; the scan itself runs in
the background, started by the main window.
"""

from __future__ import annotations

import html
import os
from collections import defaultdict
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.data import exclusions as excl
from xlagui.core.data.scan.model import SEVERITIES
from xlagui.core.protocol.identity import Severity, Split
from xlagui.present.exclusions import left_out
from xlagui.present.levels import Level, level_of
from xlagui.present.problem_kinds import problem_heading
from xlagui.present.scan import (
    CLASS_COLUMNS,
    class_row,
    layout_description,
    readiness,
    summary_text,
)
from xlagui.present.scan_problems import problem_text
from xlagui.ui.dataset.image_preview import ImagePreview
from xlagui.ui.dataset.problem_view import ProblemView
from xlagui.ui.dataset.thumbnails import ThumbnailModel, ThumbnailView
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.shared.widgets import ElidedLabel

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan, ImageFile, Problem

PAGE_IMAGES, PAGE_PROBLEM = 0, 1
ProblemRole = Qt.ItemDataRole.UserRole  # a problem's index in scan.problems
GroupRole = Qt.ItemDataRole.UserRole + 1  # a group's "severity:kind"
HeadingRole = Qt.ItemDataRole.UserRole + 2  # a group's heading before "n left out" is added


class DatasetPanel(QWidget):
    """Layout, classes with counts per split, sizes, problems, and a thumbnail grid per class.

    Signals:
        browse_requested(): the user wants to choose a folder.
        demo_requested(): the user wants the built-in demo dataset.
        rescan_requested(): the user wants the current folder scanned again.
        cancel_scan_requested(): the user wants the running scan stopped.
        leave_out_requested(object list[Problem], bool leave_out): leave these problems' files
            out of the comparison (True) or put them back (False).
    """

    browse_requested = Signal()
    demo_requested = Signal()
    rescan_requested = Signal()
    cancel_scan_requested = Signal()
    leave_out_requested = Signal(object, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.scan: DatasetScan | None = None
        self.exclusions = excl.Exclusions()
        self._status = ""  # the status line's counts, before the readiness and what is left out
        self._files_by_class: dict[tuple[str, str], list[ImageFile]] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(8)

        # Header: name, path, actions, progress.
        head = QHBoxLayout()
        titles = QVBoxLayout()
        titles.setSpacing(0)
        self.heading = QLabel("No dataset")
        self.heading.setObjectName("Heading")
        # Shortened with "…" (the whole path in its tooltip): a long folder path must not make
        # the window wider than a laptop's screen (it once needed 1323 px with one).
        self.path_label = ElidedLabel("Drop a folder of images anywhere on this window")
        self.path_label.setObjectName("SubHeading")
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        titles.addWidget(self.heading)
        titles.addWidget(self.path_label)
        head.addLayout(titles, 1)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setFixedWidth(180)
        self.progress.setTextVisible(False)
        self.progress.setVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setVisible(False)
        self.cancel_button.clicked.connect(self.cancel_scan_requested)
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.setToolTip("Scan the folder again (after you changed files in it)")
        self.rescan_button.clicked.connect(self.rescan_requested)
        self.rescan_button.setEnabled(False)
        self.details_button = QPushButton("Details…")
        self.details_button.setToolTip("The full scan report as text")
        self.details_button.clicked.connect(self._on_details_clicked)
        self.details_button.setEnabled(False)
        browse = QPushButton("Browse…")
        browse.setToolTip("Choose a dataset folder (Ctrl+O)")
        browse.clicked.connect(self.browse_requested)
        for w in (self.progress, self.cancel_button, self.rescan_button, self.details_button,
                  browse):
            head.addWidget(w, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addLayout(head)

        self.stack = QStackedWidget()
        self.stack.addWidget(self._build_empty_page())
        self.stack.addWidget(self._build_loaded_page())
        layout.addWidget(self.stack, 1)

    # -- construction -------------------------------------------------------------------------

    def _build_empty_page(self) -> QWidget:
        page = QFrame()
        page.setObjectName("DropZone")
        page.setStyleSheet("QFrame#DropZone { border: 2px dashed #c3c8cf; border-radius: 12px; }")
        box = QVBoxLayout(page)
        box.addStretch(2)
        big = QLabel("Drop a dataset folder here")
        f = QFont()
        f.setPointSizeF(18)
        f.setWeight(QFont.Weight.DemiBold)
        big.setFont(f)
        big.setAlignment(Qt.AlignmentFlag.AlignCenter)
        small = QLabel(
            "One folder per class (for example african/ and asian/), or train/ and test/ "
            "folders that each hold the class folders.\nThe scan reads file headers only and "
            "never changes anything in the folder."
        )
        small.setObjectName("Placeholder")
        small.setAlignment(Qt.AlignmentFlag.AlignCenter)
        small.setWordWrap(True)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        browse = QPushButton("Browse…")
        browse.setObjectName("Primary")
        browse.clicked.connect(self.browse_requested)
        demo = QPushButton("Try the demo dataset")
        demo.setToolTip("Drawn African and Asian elephants, generated on first use")
        demo.clicked.connect(self.demo_requested)
        buttons.addWidget(browse)
        buttons.addWidget(demo)
        buttons.addStretch(1)
        box.addWidget(big)
        box.addSpacing(8)
        box.addWidget(small)
        box.addSpacing(16)
        box.addLayout(buttons)
        box.addStretch(3)
        return page

    def _build_loaded_page(self) -> QWidget:
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        split.addWidget(self._build_overview())
        self.right_stack = QStackedWidget()
        self.right_stack.addWidget(self._build_gallery())
        self.problem_view = ProblemView(self.thumbnails.pool)
        self.problem_view.back_requested.connect(self._on_problem_back_requested)
        self.problem_view.leave_out_requested.connect(self.leave_out_requested)
        self.right_stack.addWidget(self.problem_view)
        split.addWidget(self.right_stack)
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 3)
        split.setSizes([500, 800])
        return split

    def _build_overview(self) -> QWidget:
        """The left side: the folder layout, the scan's status, the classes and the problems."""
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(6)
        self.layout_label = QLabel()
        self.layout_label.setWordWrap(True)
        self.status_label = QLabel()
        self.status_label.setWordWrap(True)
        lv.addWidget(self.layout_label)
        lv.addWidget(self.status_label)
        self.class_table = QTableWidget(0, len(CLASS_COLUMNS))
        for col, (heading, covers) in enumerate(CLASS_COLUMNS):
            item = QTableWidgetItem(heading)
            item.setToolTip(covers)
            self.class_table.setHorizontalHeaderItem(col, item)
        self.class_table.verticalHeader().setVisible(False)
        self.class_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.class_table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.class_table.setAlternatingRowColors(True)
        hh = self.class_table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setStretchLastSection(True)
        self.class_table.itemSelectionChanged.connect(self._on_class_table_selection_changed)
        lv.addWidget(self.class_table)
        problems_title = QLabel("Problems")
        problems_title.setObjectName("Figure")
        lv.addWidget(problems_title)
        self.problem_tree = QTreeWidget()
        self.problem_tree.setHeaderHidden(True)
        self.problem_tree.setWordWrap(True)
        self.problem_tree.setUniformRowHeights(False)
        self.problem_tree.setToolTip("Select a problem to see its files")
        self.problem_tree.itemSelectionChanged.connect(self._on_problem_tree_selection_changed)
        lv.addWidget(self.problem_tree, 1)
        lv.addStretch(0)
        return left

    def _build_gallery(self) -> QWidget:
        """The right side's first page: a class and split to pick, their thumbnails and the
        preview of the image chosen."""
        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.setSpacing(6)
        pick = QHBoxLayout()
        self.class_combo = QComboBox()
        self.class_combo.setMinimumWidth(160)
        self.split_combo = QComboBox()
        self.split_combo.addItem("Training images", Split.TRAIN.value)
        self.split_combo.addItem("Test images", Split.TEST.value)
        self.count_label = QLabel()
        self.count_label.setObjectName("Caption")
        pick.addWidget(QLabel("Class"))
        pick.addWidget(self.class_combo)
        pick.addWidget(self.split_combo)
        pick.addWidget(self.count_label, 1)
        rv.addLayout(pick)
        self.class_combo.currentIndexChanged.connect(self._on_class_combo_changed)
        self.split_combo.currentIndexChanged.connect(self._on_class_combo_changed)
        gallery = QSplitter(Qt.Orientation.Horizontal)
        gallery.setChildrenCollapsible(False)
        self.thumbnails = ThumbnailModel(self)
        self.grid = ThumbnailView()
        self.grid.setModel(self.thumbnails)
        self.grid.image_activated.connect(self._on_grid_image_activated)
        self.preview = ImagePreview(self.thumbnails.pool)
        gallery.addWidget(self.grid)
        gallery.addWidget(self.preview)
        gallery.setStretchFactor(0, 3)
        gallery.setStretchFactor(1, 2)
        rv.addWidget(gallery, 1)
        return right

    # -- what the main window calls -------------------------------------------------------

    def show_scanning(self, path: str) -> None:
        self.heading.setText(os.path.basename(os.path.normpath(path)) or path)
        self.path_label.setText(f"Scanning {path}…")
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setVisible(True)
        self.rescan_button.setEnabled(False)

    def set_progress(self, fraction: float) -> None:
        self.progress.setValue(round(fraction * 100))

    def scan_ended(self) -> None:
        self.progress.setVisible(False)
        self.cancel_button.setVisible(False)
        self.rescan_button.setEnabled(self.scan is not None)

    def show_scan(self, scan: DatasetScan, name: str | None = None) -> None:
        self.scan = scan
        self.scan_ended()
        self.heading.setText(name or os.path.basename(os.path.normpath(scan.root)))
        self.path_label.setText(scan.root)
        self.details_button.setEnabled(True)
        self.rescan_button.setEnabled(True)
        self.layout_label.setText(f"<b>Layout:</b> {html.escape(layout_description(scan))}")
        train = len(scan.files_for(Split.TRAIN))
        test = len(scan.files_for(Split.TEST))
        self._status = (
            f"{len(scan.class_names)} classes · {train:,} training and {test:,} test images · "
        )
        self._fill_classes(scan)
        self.exclusions = self.exclusions.restricted_to(scan)
        self._fill_problems(scan.problems)
        self.problem_view.clear()
        self.right_stack.setCurrentIndex(PAGE_IMAGES)
        self.set_exclusions(self.exclusions)
        self._files_by_class = defaultdict(list)
        for f in scan.files:
            self._files_by_class[(f.split, f.label)].append(f)
        self.class_combo.blockSignals(True)
        self.class_combo.clear()
        for label in scan.class_names:
            self.class_combo.addItem(label, label)
        self.class_combo.blockSignals(False)
        self.preview.clear()
        self._on_class_combo_changed()
        self.stack.setCurrentIndex(1)

    def set_exclusions(self, exclusions: excl.Exclusions) -> None:
        """Show which problems' files the comparison leaves out (in the list, the status line
        and the problem shown)."""
        self.exclusions = exclusions
        scan = self.scan
        if scan is None:
            return
        left = len(exclusions.files(scan))
        level, state = readiness(scan, exclusions.leaves_out)
        extra = (f" · <span style='color:{LEVEL_COLORS[Level.WARNING]}'>"
                 f"{left_out(left)}</span>" if left else "")
        self.status_label.setText(
            f"{self._status}<span style='color:{LEVEL_COLORS[level]}; font-weight:600'>"
            f"{html.escape(state)}</span>{extra}")
        tree = self.problem_tree
        for i in range(tree.topLevelItemCount()):
            top = tree.topLevelItem(i)
            if top is None:
                continue
            out = 0
            for j in range(top.childCount()):
                child = top.child(j)
                index = child.data(0, ProblemRole) if child is not None else None
                if child is None or not isinstance(index, int) or index >= len(scan.problems):
                    continue
                gone = exclusions.leaves_out(scan.problems[index])
                out += gone
                font = child.font(0)
                font.setItalic(gone)
                child.setFont(0, font)
                child.setForeground(0, _brush("#8a8f96" if gone else "#202124"))
                said = problem_text(scan.problems[index])
                child.setText(0, ("Left out: " if gone else "") + said)
            heading = str(top.data(0, HeadingRole) or top.text(0))
            top.setText(0, heading if not out else f"{heading[:-1]}, {out} left out)")
            top.setToolTip(0, f"{top.text(0)}\nSelect to see them all, and one of them to see "
                              "its files")
        if self.right_stack.currentIndex() == PAGE_PROBLEM:
            self.problem_view.set_exclusions(exclusions)

    def show_empty(self) -> None:
        self.scan = None
        self.heading.setText("No dataset")
        self.path_label.setText("Drop a folder of images anywhere on this window")
        self.details_button.setEnabled(False)
        self.rescan_button.setEnabled(False)
        self.thumbnails.set_files([])
        self.stack.setCurrentIndex(0)

    def shutdown(self) -> None:
        self.thumbnails.shutdown()

    # -- filling ----------------------------------------------------------------------------

    def _fill_classes(self, scan: DatasetScan) -> None:
        table = self.class_table
        table.setRowCount(0)
        for label in scan.class_names:
            row = table.rowCount()
            table.insertRow(row)
            for col, text in enumerate(class_row(scan, label)):
                item = QTableWidgetItem(text)
                if col in (1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                item.setData(Qt.ItemDataRole.UserRole, label)
                table.setItem(row, col, item)
        # As tall as its rows (up to a dozen), so the problems below get the rest.
        shown = min(table.rowCount(), 12)
        height = table.horizontalHeader().height() + 2 * table.frameWidth()
        height += sum(table.rowHeight(r) for r in range(shown))
        table.setFixedHeight(height + (0 if shown == table.rowCount() else 4))

    def _fill_problems(self, problems: list[Problem]) -> None:
        tree = self.problem_tree
        tree.clear()
        if not problems:
            item = QTreeWidgetItem(["No problems found"])
            item.setForeground(0, _brush(LEVEL_COLORS[Level.OK]))
            tree.addTopLevelItem(item)
            tree.setMaximumHeight(tree.sizeHintForRow(0) + 2 * tree.frameWidth() + 6)
            return
        tree.setMaximumHeight(16_777_215)
        groups: dict[tuple[Severity, str], list[Problem]] = defaultdict(list)
        index = {id(p): i for i, p in enumerate(problems)}
        for p in problems:
            groups[(p.severity, p.kind)].append(p)
        for (severity, kind), group in sorted(
                groups.items(), key=lambda kv: (SEVERITIES.index(kv[0][0]), kv[0][1])):
            top = QTreeWidgetItem([problem_heading(severity, kind, len(group))])
            top.setForeground(0, _brush(LEVEL_COLORS[level_of(severity)]))
            f = top.font(0)
            f.setBold(True)
            top.setFont(0, f)
            top.setData(0, GroupRole, f"{severity}:{kind}")
            top.setData(0, HeadingRole, top.text(0))
            top.setToolTip(0, "Select to see them all, and one of them to see its files")
            for p in group:
                child = QTreeWidgetItem([problem_text(p)])
                child.setData(0, ProblemRole, index[id(p)])
                # The list is narrow: the whole message (and the paths) on hover, and in the
                # view beside it when selected.
                child.setToolTip(0, "\n".join([problem_text(p), *p.paths[:20]]))
                for path in p.paths[:50]:
                    leaf = QTreeWidgetItem([path])
                    leaf.setForeground(0, _brush("#6b6f76"))
                    leaf.setToolTip(0, path)
                    child.addChild(leaf)
                top.addChild(child)
            tree.addTopLevelItem(top)
            # Errors are what stops a training: show them open; the rest on demand.
            top.setExpanded(severity is Severity.ERROR)

    # -- slots ----------------------------------------------------------------------------

    def _on_class_combo_changed(self, _index: int = 0) -> None:
        label = self.class_combo.currentData()
        split = self.split_combo.currentData()
        files = self._files_by_class.get((split, label), []) if label is not None else []
        self.thumbnails.set_files(files)
        self.count_label.setText(f"{len(files):,} images")

    def _on_class_table_selection_changed(self) -> None:
        items = self.class_table.selectedItems()
        if items:
            self.right_stack.setCurrentIndex(PAGE_IMAGES)
            label = items[0].data(Qt.ItemDataRole.UserRole)
            i = self.class_combo.findData(label)
            if i >= 0:
                self.class_combo.setCurrentIndex(i)

    def _on_problem_tree_selection_changed(self) -> None:
        scan = self.scan
        items = self.problem_tree.selectedItems()
        if scan is None or not items:
            return
        item = items[0]
        parent = item.parent()
        # A path selected stands for the problem above it.
        if item.data(0, ProblemRole) is None and parent is not None \
                and parent.data(0, GroupRole) is None:
            item = parent
        index = item.data(0, ProblemRole)
        group = item.data(0, GroupRole)
        if isinstance(index, int) and 0 <= index < len(scan.problems):
            problem = scan.problems[index]
            title = problem_heading(problem.severity, problem.kind)
            self.problem_view.show_problems(scan, [problem], title, self.exclusions)
        elif isinstance(group, str):
            word, kind = group.split(":", 1)
            severity = Severity(word)  # the group's item holds its severity as a string
            problems = [p for p in scan.problems if (p.severity, p.kind) == (severity, kind)]
            self.problem_view.show_problems(
                scan, problems, problem_heading(severity, kind, len(problems)), self.exclusions)
        else:
            return
        self.right_stack.setCurrentIndex(PAGE_PROBLEM)

    def _on_problem_back_requested(self) -> None:
        self.right_stack.setCurrentIndex(PAGE_IMAGES)

    def _on_grid_image_activated(self, f: ImageFile) -> None:
        self.preview.show_file(f)

    def _on_details_clicked(self) -> None:
        if self.scan is not None:
            dialogs.show_text(self, "Scan report", summary_text(self.scan, max_paths=50))


def _brush(colour: str) -> QBrush:
    return QBrush(QColor(colour))

