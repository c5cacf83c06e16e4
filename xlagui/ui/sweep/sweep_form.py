"""The Sweep tab's form: the axes a user fills (comma lists), the sweep's budget with the plan
said before starting, the folder that keeps it, and Run / Stop / Open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.settings import SETTINGS
from xlagui.core.sweep import fields as axes_text
from xlagui.core.sweep.cell import CellResult
from xlagui.core.sweep.plan import SweepPlan, plan_sweep
from xlagui.core.sweep.store import kept_cells
from xlagui.present import sweep as sweep_words
from xlagui.present import sweep_form as words
from xlagui.present.levels import Level
from xlagui.ui.shared.theme import LEVEL_COLORS

# The fields, in the order shown: (axis kind, its words), a setting's from its entry in the
# settings table. `axes_text` parses each.
FIELDS = (
    *((one.name, words.setting_field(one)) for one in SETTINGS if one.sweep),
    (axes_text.MODEL_FIELD, words.MODEL),
    (axes_text.ARMS_FIELD, words.ARMS),
    (axes_text.LEVERS, words.LEVERS),
)
BUDGET_MAX = 7 * 24 * 3600


class SweepForm(QWidget):
    """The sweep's settings. `base` gives the settings every cell starts from (the sidebar's;
    None while they cannot run).

    Signals:
        run_requested(): Run was pressed (the plan is `plan()`).
        stop_requested(): Stop was pressed.
        open_requested(): "Open a sweep…" was pressed.
        browse_requested(): "Browse…" (the folder) was pressed.
        changed(): a field changed; the plan line was said again.
    """

    run_requested = Signal()
    stop_requested = Signal()
    open_requested = Signal()
    browse_requested = Signal()
    changed = Signal()

    def __init__(self, base: Callable[[], RunConfig | None],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._base = base
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        outer.addLayout(form)
        self.fields: dict[str, QLineEdit] = {}
        self.notes: dict[str, QLabel] = {}
        for kind, text in FIELDS:
            self._add_field(form, kind, text)
        self.budget = QSpinBox()
        self.budget.setRange(0, BUDGET_MAX)
        self.budget.setSingleStep(60)
        self.budget.setSuffix(" s")
        self.budget.setSpecialValueText("automatic")
        self.budget.setToolTip(words.BUDGET_HINT)
        self.budget.valueChanged.connect(self._on_field_text_changed)
        form.addRow("Budget", self.budget)
        self.folder = QLineEdit()
        self.folder.setObjectName("sweep-folder")
        self.folder.setToolTip(words.FOLDER_HINT)
        self.folder.textChanged.connect(self._on_field_text_changed)
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(lambda _checked=False: self.browse_requested.emit())
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(self.browse_button)
        form.addRow("Folder", row)
        self.plan_line = QLabel()
        self.plan_line.setObjectName("SweepPlanLine")
        self.plan_line.setWordWrap(True)
        outer.addWidget(self.plan_line)
        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run the sweep")
        self.run_button.setObjectName("PrimaryButton")
        self.stop_button = QPushButton("Stop")
        self.open_button = QPushButton("Open a sweep…")
        self.run_button.clicked.connect(lambda _checked=False: self.run_requested.emit())
        self.stop_button.clicked.connect(lambda _checked=False: self.stop_requested.emit())
        self.open_button.clicked.connect(lambda _checked=False: self.open_requested.emit())
        for b in (self.run_button, self.stop_button, self.open_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        outer.addLayout(buttons)
        outer.addStretch(1)  # the form stays at the top of its column
        self._plan: SweepPlan | None = None
        self._pinned: tuple[Path, RunConfig] | None = None
        self._kept: list[CellResult] = []
        self._problem = ""
        self.refresh()

    def _add_field(self, form: QFormLayout, kind: str, text: words.FieldText) -> None:
        """One axis field, with the note under it that says why its text is refused."""
        edit = QLineEdit()
        edit.setObjectName(f"sweep-{kind}")
        edit.setPlaceholderText(text.placeholder)
        edit.setToolTip(text.hint)
        edit.setClearButtonEnabled(True)
        edit.textChanged.connect(self._on_field_text_changed)
        note = QLabel()
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]}")
        note.hide()
        column = QVBoxLayout()
        column.setSpacing(1)
        column.addWidget(edit)
        column.addWidget(note)
        form.addRow(text.label, column)
        self.fields[kind], self.notes[kind] = edit, note

    # -- what the form says ------------------------------------------------------------------

    def plan(self) -> SweepPlan | None:
        """The sweep the fields describe now; None when they cannot (`problem()` says why)."""
        return self._plan

    def problem(self) -> str:
        """Why the sweep cannot be planned now, in words ("" when it can)."""
        return self._problem

    def base(self) -> RunConfig | None:
        """The settings every cell starts from: those of the sweep opened from the folder
        chosen (so that Run resumes it), else the sidebar's."""
        folder = self.chosen_folder()
        if self._pinned is not None and folder is not None and folder == self._pinned[0]:
            return self._pinned[1]
        return self._base()

    def budget_seconds(self) -> int | None:
        return self.budget.value() or None

    def refresh(self) -> None:
        """Parse every field, plan the grid over the base settings, say the plan or why not."""
        axes, problems = [], []
        for kind, text in FIELDS:
            try:
                axes += axes_text.parse(kind, self.fields[kind].text())
            except ConfigError as exc:
                message = words.field_error(text.label, str(exc))
                problems.append(message)
                self._note(kind, message)
            else:
                self._note(kind, "")
        self._plan, self._problem = None, problems[0] if problems else ""
        base = self.base()
        if not self._problem and not axes:
            self._problem = words.NO_AXES
        elif not self._problem and base is None:
            self._problem = words.NO_DATASET
        elif not self._problem and base is not None:
            try:
                self._plan = plan_sweep(base, axes, self.budget_seconds())
                folder = self.chosen_folder()
                # A folder holding another sweep is refused, with what differs.
                self._kept = kept_cells(folder, self._plan) if folder is not None else []
            except ConfigError as exc:
                self._plan, self._problem = None, str(exc)
        self._say_plan()

    def _say_plan(self) -> None:
        plan = self._plan
        if plan is None:
            self.plan_line.setText(self._problem)
            colour = LEVEL_COLORS[Level.ERROR if self._problem != words.NO_AXES else Level.INFO]
        else:
            self.plan_line.setText(sweep_words.plan_words(plan, self._kept) + ".")
            colour = LEVEL_COLORS[Level.INFO]
        self.plan_line.setStyleSheet(f"color: {colour}")

    def _note(self, kind: str, message: str) -> None:
        note = self.notes[kind]
        note.setText(message)
        note.setVisible(bool(message))

    def show_state(self, running: bool, stopping: bool) -> None:
        """Enable what can be pressed: Run when a plan is ready and nothing runs, Stop while
        a sweep runs (until it is stopping)."""
        self.run_button.setEnabled(not running and self._plan is not None)
        self.run_button.setToolTip("" if self._plan is not None else self._problem)
        self.stop_button.setEnabled(running and not stopping)
        self.open_button.setEnabled(not running)
        for edit in (*self.fields.values(), self.folder):
            edit.setReadOnly(running)
        self.budget.setEnabled(not running)
        self.browse_button.setEnabled(not running)

    def set_folder(self, folder: Path) -> None:
        self.folder.setText(str(folder))

    def chosen_folder(self) -> Path | None:
        text = self.folder.text().strip()
        return Path(text).expanduser() if text else None

    def show_axes(self, plan: SweepPlan) -> None:
        """Fill the fields with `plan`'s axes and plan over its settings while the folder
        is the one it was opened from (a reopened sweep: Run then resumes it)."""
        folder = self.chosen_folder()
        self._pinned = (folder, plan.base) if folder is not None else None
        texts = axes_text.texts(plan.axes)
        for kind, edit in self.fields.items():
            blocked = edit.blockSignals(True)
            edit.setText(texts.get(kind, ""))
            edit.blockSignals(blocked)
        blocked = self.budget.blockSignals(True)
        self.budget.setValue(plan.total_budget_seconds)
        self.budget.blockSignals(blocked)
        self.refresh()

    def _on_field_text_changed(self, *_args: object) -> None:
        self.refresh()
        self.changed.emit()
