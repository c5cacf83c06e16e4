"""The “What XLA did” tab: per XLA run, its compiled modules, fusions by kind, convolutions and
dots, the largest fusions (a sortable table) and the HLO text of a module with syntax
highlighting; the difference between two XLA runs; the TensorBoard command of the comparison.

Thin: the figures come from `xlagui.core.xla.hlo`, the words and rows from `xlagui.present.xla_did`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QRegularExpression, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QSyntaxHighlighter, QTextCharFormat
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.worker import tensorboard as tboard
from xlagui.core.xla import hlo
from xlagui.present import xla_did as did
from xlagui.present.units import created

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport

# Columns that sort as numbers (their text is shown, their number sorts).
_NUMERIC = {"instructions before", "instructions after", "fusions", "bytes", "ops"}
_MAX_HLO_CHARS = 3_000_000  # a larger module is shown cut, with a note



def _button(text: str, tip: str, slot: Callable[[], object]) -> QPushButton:
    button = QPushButton(text)
    button.setToolTip(tip)
    button.clicked.connect(slot)
    return button

class _Item(QTableWidgetItem):
    """A cell that sorts by a number when it has one, by its text otherwise."""

    def __init__(self, text: str, number: float | None = None) -> None:
        super().__init__(text)
        self._number = number
        self.setFlags(self.flags() & ~Qt.ItemFlag.ItemIsEditable)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        if isinstance(other, _Item) and self._number is not None and other._number is not None:
            return self._number < other._number
        return self.text() < other.text()


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _fill(table: QTableWidget, columns: tuple[str, ...], rows: list[tuple[str, ...]],
          numbers: list[dict[int, float]] | None = None,
          tips: dict[tuple[int, int], str] | None = None) -> None:
    table.setSortingEnabled(False)
    table.clear()
    table.setColumnCount(len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            num = (numbers[r].get(c) if numbers else None)
            if num is None and columns[c] in _NUMERIC:
                num = _number(text)
            item = _Item(text, num)
            if tips and (r, c) in tips:
                item.setToolTip(tips[(r, c)])
            table.setItem(r, c, item)
    table.setSortingEnabled(True)
    table.resizeColumnsToContents()
    table.updateGeometry()  # its size hint is its content's (`_Table`)


class _Table(QTableWidget):
    """A table whose size hint is its content's height: one row takes one row's room, not a
    pane's; a long table scrolls in what room there is."""

    def sizeHint(self) -> QSize:  # a Qt override: its name is Qt's
        hint = super().sizeHint()
        header = self.horizontalHeader()
        height = 0 if header.isHidden() else header.sizeHint().height()
        height += self.verticalHeader().length() + 2 * self.frameWidth()
        if header.length() > self.viewport().width():
            height += self.horizontalScrollBar().sizeHint().height()
        return QSize(hint.width(), height)


def _table() -> QTableWidget:
    t = _Table()
    t.setSortingEnabled(True)
    t.setAlternatingRowColors(True)
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
    t.verticalHeader().setVisible(False)
    t.horizontalHeader().setStretchLastSection(True)
    return t


class HloHighlighter(QSyntaxHighlighter):
    """Colours HLO text: keywords (HloModule, ENTRY, ROOT), %names, shapes, opcodes, fusion
    kinds, and dims the metadata that follows an instruction."""

    def __init__(self, document: Any) -> None:
        super().__init__(document)

        def fmt(colour: str, bold: bool = False) -> QTextCharFormat:
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            if bold:
                f.setFontWeight(QFont.Weight.Bold)
            return f

        self.rules = [
            (QRegularExpression(r"\b(HloModule|ENTRY|ROOT)\b"), fmt("#7c3aed", bold=True)),
            (QRegularExpression(r"%[\w.\-]+"), fmt("#1d4ed8")),
            (QRegularExpression(r"\b(pred|[suf]\d+|bf16|c64|c128)\[[\d,]*\](\{[\d,]*\})?"),
             fmt("#047857")),
            (QRegularExpression(r"(?<=\s)[a-z][a-z0-9\-]*(?=\()"), fmt("#b45309", bold=True)),
            (QRegularExpression(r"\bkind=k\w+"), fmt("#be123c", bold=True)),
            (QRegularExpression(r"(metadata|backend_config)=.*$"), fmt("#9ca3af")),
        ]

    def highlightBlock(self, text: str) -> None:  # a Qt override: its name is Qt's
        for pattern, style in self.rules:
            it = pattern.globalMatch(text)
            while it.hasNext():
                m = it.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), style)


class HloDialog(QDialog):
    """The HLO text of one module, read-only, highlighted."""

    def __init__(self, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("HloDialog")
        self.setWindowTitle(f"HLO: {path.name}")
        self.resize(1000, 700)
        layout = QVBoxLayout(self)
        self.path_label = QLabel(str(path))
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.path_label)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        try:
            body = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            body = f"The HLO file cannot be read ({exc.strerror or exc}): the run's dump folder " \
                   "may have been removed. `xlagui inspect` and this tab keep the figures."
        if len(body) > _MAX_HLO_CHARS:
            body = body[:_MAX_HLO_CHARS] + "\n… (cut here: open the file for the rest)"
        self.highlighter = HloHighlighter(self.text.document())
        self.text.setPlainText(body)
        layout.addWidget(self.text, 1)
        close = QPushButton("Close")
        close.clicked.connect(self._on_close_clicked)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignRight)

    def _on_close_clicked(self) -> None:
        self.close()


class XlaDidPanel(QWidget):
    """The “What XLA did” tab.

    Signals:
        hlo_opened(str): the path of the module whose HLO text was opened.
        command_copied(str): the TensorBoard command put on the clipboard.
    """

    hlo_opened = Signal(str)
    command_copied = Signal(str)

    def __init__(self, parent: QWidget | None = None, history_root: Path | None = None) -> None:
        super().__init__(parent)
        self._history_root = history_root
        self._runs: list[tuple[str, hlo.XlaReport]] = []
        self._folder: Path | None = None
        self.hlo_dialog: HloDialog | None = None
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel("XLA run:"))
        self.run_combo = QComboBox()
        self.run_combo.currentIndexChanged.connect(self._on_run_combo_changed)
        top.addWidget(self.run_combo, 1)
        self.open_hlo_button = _button(
            "Open the HLO of this module",
            "The optimized HLO text of the module selected in Modules (the first one if none is)",
            self._on_open_hlo_clicked,
        )
        top.addWidget(self.open_hlo_button)
        self.tensorboard_button = _button(
            "Open in TensorBoard",
            "Copy the command that opens this comparison's runs in TensorBoard",
            self._on_tensorboard_clicked,
        )
        top.addWidget(self.tensorboard_button)
        layout.addLayout(top)
        self.summary = QLabel("No comparison shown yet.")
        self.summary.setObjectName("XlaDidSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.tensorboard_label = QLabel()
        self.tensorboard_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tensorboard_label.setWordWrap(True)
        layout.addWidget(self.tensorboard_label)
        self.views = QTabWidget()
        self.modules_table = _table()
        self.fusions_table = _table()
        self.heavy_table = _table()
        self.views.addTab(self.modules_table, "Modules")
        self.views.addTab(self.fusions_table, "Largest fusions")
        self.views.addTab(self.heavy_table, "Convolutions and dots")
        self.views.addTab(self._build_diff_page(), "Difference")
        self.views.currentChanged.connect(self._on_views_changed)
        layout.addWidget(self.views, 1)
        layout.addStretch(0)  # the room a short table leaves
        self._others: list[tuple[str, hlo.XlaReport]] = []
        self._update_enabled()

    def _build_diff_page(self) -> QWidget:
        """The "Difference" tab: two XLA runs, A and B (this comparison's, or from History),
        figure by figure."""
        diff_page = QWidget()
        dl = QVBoxLayout(diff_page)
        pick = QHBoxLayout()
        pick.addWidget(QLabel("A:"))
        self.diff_a = QComboBox()
        pick.addWidget(self.diff_a, 1)
        pick.addWidget(QLabel("B:"))
        self.diff_b = QComboBox()
        pick.addWidget(self.diff_b, 1)
        self.diff_a.currentIndexChanged.connect(self._on_diff_changed)
        self.diff_b.currentIndexChanged.connect(self._on_diff_changed)
        self.history_button = _button(
            "Add XLA runs from History",
            "Offer the XLA runs of every saved comparison as A or B (another day, another "
            "TensorFlow, the other XLA mode)",
            self._on_history_clicked,
        )
        pick.addWidget(self.history_button)
        dl.addLayout(pick)
        self.diff_table = _table()
        dl.addWidget(self.diff_table, 1)
        dl.addStretch(0)
        return diff_page

    def _fit_views(self) -> None:
        """The tabs as tall as the table shown (or less, where the window is shorter)."""
        page = self.views.currentWidget()
        frame = self.views.style().pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth)
        bar = self.views.tabBar().sizeHint().height()
        page_height = page.sizeHint().height() if page is not None else 0
        self.views.setMaximumHeight(bar + page_height + 2 * frame + 2)

    # -- what it shows --------------------------------------------------------------------------

    def show_report(self, report: ComparisonReport, folder: Path | None) -> None:
        """Show the XLA runs of a `ComparisonReport` kept in `folder` (None: not on disk)."""
        self._folder = folder
        from xlagui.core.results import dumps

        self._runs = [(did.run_label(report, run_id), r)
                      for run_id, r in dumps.xla_runs(report, folder)]
        self.run_combo.blockSignals(True)
        self.run_combo.clear()
        for label, _r in self._runs:
            self.run_combo.addItem(label)  # what XLA did is said once, below it
        self.run_combo.blockSignals(False)
        self.tensorboard_label.clear()
        self._fill_diff_choices()
        self._show_run(0)
        self._update_enabled()

    def add_other_runs(self, runs: list[tuple[str, hlo.XlaReport]]) -> None:
        """XLA runs of other comparisons (from History) to pick in the difference."""
        self._others = list(runs)
        self._fill_diff_choices()

    def current(self) -> hlo.XlaReport | None:
        i = self.run_combo.currentIndex()
        return self._runs[i][1] if 0 <= i < len(self._runs) else None

    def _show_run(self, index: int) -> None:
        report = self._runs[index][1] if 0 <= index < len(self._runs) else None
        if report is None:
            self.summary.setText(
                "No XLA run with an HLO dump in this comparison: XLA compiled nothing, the "
                "inspection compile was stopped or failed, or the comparison was recorded before "
                "xlagui inspected speed-only comparisons too."
            )
            for t in (self.modules_table, self.fusions_table, self.heavy_table):
                _fill(t, (), [])
            self._fit_views()
            return
        self.summary.setText(did.one_line(report))
        named = did.MODULE_COLUMNS.index("what it compiles")
        tips = {(r, named): did.module_tip(m) for r, m in enumerate(report.modules)}
        _fill(self.modules_table, did.MODULE_COLUMNS, did.module_rows(report), tips=tips)
        fusions = did.fusion_rows(report)
        numbers = [{4: float(f.output_bytes), 5: float(f.instructions)} for _m, f, _ in fusions]
        _fill(self.fusions_table, did.FUSION_COLUMNS, [row for *_x, row in fusions], numbers)
        _fill(self.heavy_table, did.HEAVY_COLUMNS, did.heavy_rows(report))
        self._fit_views()

    def _choices(self) -> list[tuple[str, hlo.XlaReport]]:
        return [*self._runs, *self._others]

    def _fill_diff_choices(self) -> None:
        choices = self._choices()
        for combo, default in ((self.diff_a, 0), (self.diff_b, 1)):
            combo.blockSignals(True)
            combo.clear()
            for label, _r in choices:
                combo.addItem(label)
            combo.setCurrentIndex(min(default, len(choices) - 1))
            combo.blockSignals(False)
        self._on_diff_changed()

    def _update_enabled(self) -> None:
        self.open_hlo_button.setEnabled(self.current() is not None)
        self.tensorboard_button.setEnabled(self._folder is not None)

    # -- slots ----------------------------------------------------------------------------------

    def _on_run_combo_changed(self, index: int) -> None:
        self._show_run(index)
        self._update_enabled()

    def _on_diff_changed(self, _index: int = 0) -> None:
        choices = self._choices()
        a, b = self.diff_a.currentIndex(), self.diff_b.currentIndex()
        if len(choices) < 2 or not (0 <= a < len(choices) and 0 <= b < len(choices)):
            _fill(self.diff_table, ("figure",),
                  [("Two XLA runs are needed for a difference",)])
        else:
            rows = did.diff_rows(hlo.diff(choices[a][1], choices[b][1]))
            _fill(self.diff_table, did.DIFF_COLUMNS, rows)
        self._fit_views()

    def _on_views_changed(self, _index: int) -> None:
        self._fit_views()

    def _on_history_clicked(self) -> None:
        from xlagui.core.results import dumps, history

        others: list[tuple[str, hlo.XlaReport]] = []
        for item in history.list_items(self._history_root):
            if self._folder is not None and item.folder == self._folder:
                continue
            try:
                report = history.load(item)
            except (OSError, ValueError, KeyError, TypeError):
                continue  # History shows why; here it is only not offered
            when = created(item.created)
            for run_id, r in dumps.xla_runs(report, item.folder):
                others.append((f"{when}: {did.run_label(report, run_id)}", r))
        self.add_other_runs(others)

    def _on_open_hlo_clicked(self) -> None:
        report = self.current()
        if report is None or not report.modules:
            return
        selected = self.modules_table.selectedItems()
        module = report.modules[0]
        first = self.modules_table.item(selected[0].row(), 0) if selected else None
        if first is not None:
            module = next((m for m in report.modules if m.module_id == first.text()), module)
        path = report.module_path(module)
        if self.hlo_dialog is not None:
            self.hlo_dialog.close()
            self.hlo_dialog.deleteLater()
        self.hlo_dialog = HloDialog(path, self)
        self.hlo_dialog.show()
        self.hlo_opened.emit(str(path))

    def _on_tensorboard_clicked(self) -> None:
        if self._folder is None:
            return
        cmd = tboard.command(self._folder)
        QApplication.clipboard().setText(cmd)
        there = "" if tboard.has_runs(self._folder) else (
            " (this comparison has no TensorBoard files yet: its training runs write them)")
        self.tensorboard_label.setText(f"Copied to the clipboard: {cmd}{there}")
        self.command_copied.emit(cmd)
