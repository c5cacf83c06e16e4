"""The "Model" group of the settings: which model a comparison trains, and what it is.

A built-in model is picked from a list that shows each one's parameter count at the current
image size and class count; "Open model file…" (or dropping a model file on the window) picks a
model of the user's. The list, the file filter and what is said of a choice come from the
registry of model sources (`xlagui.core.model.sources`) and its words
(`xlagui.present.models`): nothing here names a source.

Every model is built once, in a short worker process (`xlagui.core.model.check`), never in the
window's process: that check fills the parameter counts, the summary shown before anything
runs, a model file's fixed input size (which sets and locks the image size) and its problems (a
file that cannot be trained blocks the run, with the file and line). The chosen model's check
answers twice: its parameters and layers as soon as it is built (no training step compiled),
then its FLOPs and memory once a training step has been compiled and counted, in a line of its
own that says it is still being counted until then.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.model import sources
from xlagui.core.model.check import ModelCheckSpec, ModelRefused, memory_guard
from xlagui.core.protocol.config import ConfigError, ModelChoice, RunConfig, check_image_size
from xlagui.core.protocol.events import ModelEvent
from xlagui.core.protocol.task import TaskState
from xlagui.present import models as words
from xlagui.present.levels import Level
from xlagui.present.model_files import refusal_text
from xlagui.ui.shared.tasks import TaskOwner
from xlagui.ui.shared.theme import LEVEL_COLORS

# Runs the checks (`check_models`); the tests give a fake that answers at once.
ModelChecker = Callable[[list[ModelCheckSpec], TaskState], list[ModelEvent]]
SETTINGS_KEY = "model"
NEW_HEAD_KEY = "model_new_head"
# Typing an image size fires a change per key: check once the typing stopped.
CHECK_DELAY_MS = 600
FILE_ROLE = Qt.ItemDataRole.UserRole


def real_checker(specs: list[ModelCheckSpec], state: TaskState) -> list[ModelEvent]:
    from xlagui.core.measure.model_check import check_models

    return check_models(specs, state=state)


class ModelPanel(QGroupBox):
    """The model picker, "Open model file…", the model's summary and its problems.

    Signals:
        changed(): the choice, or what is known about it, changed (the window re-checks what
            it can run).
        fixed_size(object): the image size the chosen model takes (int), or None when it takes
            any size: the settings panel sets and locks the image size box.
    """

    changed = Signal()
    fixed_size = Signal(object)

    def __init__(self, checker: ModelChecker | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__("Model", parent)
        self._checker = checker
        self._context = (150, 64, 2)  # image size, batch size, classes
        self._file_choice: ModelChoice | None = None
        # What the checks answered, by the model's argument and the context.
        self._counts: dict[tuple[str, int, int], ModelEvent] = {}
        self._full: dict[tuple[str, int, int, int], ModelEvent] = {}
        # The chosen model built without its FLOPs: what the check answered first.
        self._built: dict[tuple[str, int, int, int], ModelEvent] = {}
        self._one_specs: list[ModelCheckSpec] = []
        self._one_key: tuple[str, int, int, int] | None = None
        self._refused: dict[tuple[str, int, int, int], str] = {}
        self._list_key: tuple[int, int] | None = None
        self._checking = ""
        self._list = TaskOwner(self)
        self._list.done.connect(self._on_list_done)
        self._list.failed.connect(self._on_list_failed)
        self._one = TaskOwner(self)
        self._one.partial.connect(self._on_one_partial)
        self._one.done.connect(self._on_one_done)
        self._one.failed.connect(self._on_one_failed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(CHECK_DELAY_MS)
        self._timer.timeout.connect(self._check_now)
        self._build()
        self._show()

    def _build(self) -> None:
        """The picker and "Open model file…", what the model is, the new-head option, the
        note on running a file's code, the check's answer and the layers."""
        v = QVBoxLayout(self)
        v.setSpacing(4)
        self.picker = QComboBox()
        self.picker.setObjectName("model")
        self.picker.setToolTip("The model both sides train: a built-in one, or your own file")
        # The sidebar's whole width (the button goes below): "efficientnetb0 — 4.0 M
        # parameters" fits at its narrowest; the list itself opens as wide as its items.
        self.picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.picker.setMinimumContentsLength(12)
        for name in sources.builtin_names():
            self.picker.addItem(name, name)
        self.picker.currentIndexChanged.connect(self._on_picker_index_changed)
        self.open_button = QPushButton("Open model file…")
        self.open_button.setToolTip(words.open_file_hint())
        self.open_button.clicked.connect(self._on_open_button_clicked)
        v.addWidget(self.picker)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.open_button)
        v.addLayout(row)
        self.about = QLabel()
        self.about.setObjectName("Caption")
        self.about.setWordWrap(True)
        v.addWidget(self.about)
        self.new_head = QCheckBox("Replace its last layer (new head)")
        self.new_head.setToolTip(
            "Keep the saved model's body and put a new output layer sized to this dataset's "
            "classes (--new-head)")
        self.new_head.toggled.connect(self._on_new_head_toggled)
        v.addWidget(self.new_head)
        self.code_note = QLabel()
        self.code_note.setObjectName("Note")
        self.code_note.setWordWrap(True)
        self.code_note.setStyleSheet(f"color: {LEVEL_COLORS[Level.WARNING]};")
        v.addWidget(self.code_note)
        self._build_check(v)

    def _build_check(self, v: QVBoxLayout) -> None:
        """What the check says: the summary (or why the model is refused), the FLOPs on a line
        of their own, and the layers behind a toggle."""
        self.status = QLabel()
        self.status.setObjectName("Note")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.status)
        self.flops = QLabel()
        self.flops.setObjectName("Note")
        self.flops.setWordWrap(True)
        self.flops.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        v.addWidget(self.flops)
        self.layers_button = QToolButton()
        self.layers_button.setText("Layers")
        self.layers_button.setCheckable(True)
        self.layers_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.layers_button.setArrowType(Qt.ArrowType.RightArrow)
        self.layers_button.setStyleSheet("QToolButton { border: none; }")
        self.layers_button.toggled.connect(self._on_layers_button_toggled)
        v.addWidget(self.layers_button)
        self.layers = QPlainTextEdit()
        self.layers.setReadOnly(True)
        self.layers.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.layers.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.layers.setMinimumHeight(140)
        self.layers.setVisible(False)
        v.addWidget(self.layers)

    # -- what the settings panel and the window call ----------------------------------------

    def choice(self) -> ModelChoice:
        """The chosen model (a file's with the new-head option as ticked)."""
        data = self.picker.currentData(FILE_ROLE)
        if data != "file":
            return sources.parse_model(str(data))
        assert self._file_choice is not None
        # The box keeps its tick while hidden (a file that takes no new head picked after one
        # that does): only a source that takes one gets it.
        new_head = self.new_head.isChecked() and sources.describe(
            self._file_choice).takes_new_head
        return dataclasses.replace(self._file_choice, new_head=new_head)

    def set_context(self, image_size: int, batch_size: int, num_classes: int) -> None:
        """The settings a model is checked at; a change checks again once typing stopped."""
        context = (image_size, batch_size, max(2, num_classes))
        if context != self._context:
            self._context = context
            self._show()
            self._schedule()

    def start_checks(self) -> None:
        """Check the built-ins (their parameter counts) and the chosen model now."""
        self._check_now()

    def choose_file(self, path: Path) -> str:
        """Pick a model file (a `.keras`, `.h5` or `.py`: `sources.source_for_path`); "" when
        picked, else why not (for the window: a SavedModel folder's refusal, say)."""
        if sources.source_for_path(path) is None:
            return words.not_a_model_file(path)
        try:
            choice = sources.parse_model(str(path))
        except ConfigError as exc:
            return words.refusal(exc)
        self._file_choice = choice
        index = self.picker.findData("file", FILE_ROLE)
        text = words.file_item(choice.file)
        if index < 0:
            self.picker.insertSeparator(self.picker.count())
            self.picker.addItem(text, "file")
            index = self.picker.count() - 1
        else:
            self.picker.setItemText(index, text)
        self.picker.setItemData(index, choice.file, Qt.ItemDataRole.ToolTipRole)
        blocked = self.picker.blockSignals(True)
        self.picker.setCurrentIndex(index)
        self.picker.blockSignals(blocked)
        self._on_choice_changed()
        return ""

    def select(self, choice: ModelChoice) -> str:
        """Show `choice` (a reopened comparison's, a saved setting); "" or why it cannot be."""
        try:
            sources.check(choice)
        except ConfigError as exc:
            return words.refusal(exc)
        if not choice.file:
            blocked = self.picker.blockSignals(True)
            self.picker.setCurrentIndex(self.picker.findData(choice.name, FILE_ROLE))
            self.picker.blockSignals(blocked)
            self._on_choice_changed()
            return ""
        why = self.choose_file(Path(choice.file))
        if not why:
            self.new_head.setChecked(choice.new_head)
        return why

    def check_for_run(self) -> ModelEvent | None:
        """The chosen model's check at the current settings (None for the article's CNN, which
        needs none, and while the check has not answered)."""
        choice = self.choice()
        if choice.is_article_cnn:
            return None
        return self._full.get(self._full_key(choice))

    def problem(self) -> str:
        """Why the chosen model cannot run now ("" when it can): refused, or not checked yet."""
        choice = self.choice()
        if choice.is_article_cnn:
            return ""
        key = self._full_key(choice)
        if key in self._refused:
            return self._refused[key]
        if key not in self._full:
            return words.checking_for_run(choice.label)
        return ""

    def memory_note(self, workers: int) -> str:
        """The memory warning for the chosen model's check ("" when it fits or is unknown)."""
        check = self.check_for_run()
        if check is None or not check.memory_bytes:
            return ""
        config = RunConfig(image_size=check.image_size, batch_size=self._context[1],
                           model=self.choice())
        return words.memory_warning(memory_guard(check.memory_bytes, workers), config)

    def shutdown(self) -> None:
        """Stop any running check (its worker process is killed)."""
        self._timer.stop()
        self._list.cancel()
        self._one.cancel()

    def save(self, settings: QSettings) -> None:
        choice = self.choice()
        settings.setValue(SETTINGS_KEY, choice.argument)
        settings.setValue(NEW_HEAD_KEY, choice.new_head)

    def restore(self, settings: QSettings) -> str:
        """Apply the saved model; "" or the reason it was not (a file gone since)."""
        saved = settings.value(SETTINGS_KEY)
        if not isinstance(saved, str) or not saved:
            return ""
        new_head = str(settings.value(NEW_HEAD_KEY, "false")).lower() in ("true", "1")
        try:
            choice = sources.parse_model(saved)
            if new_head and sources.describe(choice).takes_new_head:
                choice = dataclasses.replace(choice, new_head=True)
        except ConfigError as exc:
            return words.not_restored(exc)
        why = self.select(choice)
        return words.not_restored(why) if why else ""

    # -- checks -------------------------------------------------------------------------------

    def _full_key(self, choice: ModelChoice) -> tuple[str, int, int, int]:
        size, batch, classes = self._context
        return (f"{choice.argument}|{choice.sha256}|{choice.new_head}", size, batch, classes)

    def _schedule(self) -> None:
        if self._checker is not None:
            self._timer.start()

    def _check_now(self) -> None:
        self._timer.stop()
        if self._checker is None:
            return
        size, batch, classes = self._context
        if self._list_key != (size, classes):
            specs = []
            for name in sources.builtin_names():
                model = sources.parse_model(name)
                if (name, size, classes) in self._counts:
                    continue
                try:
                    check_image_size(size, model)
                except ConfigError:
                    continue
                specs.append(ModelCheckSpec(model=model, image_size=size, num_classes=classes,
                                            count_flops=False))
            if specs:
                self._list_key = (size, classes)
                checker = self._checker
                self._list.start(lambda state: checker(specs, state))
        choice = self.choice()
        key = self._full_key(choice)
        if choice.is_article_cnn or key in self._full or key in self._refused:
            self._checking = ""
            self._show()
            return
        try:
            check_image_size(size, choice)
        except ConfigError:
            self._show()
            return  # the settings panel says why; nothing to build
        spec = ModelCheckSpec(model=choice, image_size=size, batch_size=batch,
                              num_classes=classes)
        # Built first without a training step (seconds), so that its parameters and layers
        # show while the step is compiled and its FLOPs counted (up to a minute).
        specs = [spec] if self._built_check(choice) else [
            dataclasses.replace(spec, count_flops=False), spec]
        checker = self._checker
        self._checking = choice.label
        self._one_specs, self._one_key = specs, key
        self._one.start(lambda state: (key, checker(specs, state)[-1]))
        self._show()

    def _on_list_done(self, checks: list[ModelEvent]) -> None:
        for check in checks:
            self._counts[(check.model.name, check.image_size, self._context[2])] = check
        self._list_key = None
        self._show()

    def _on_list_failed(self, exc: BaseException, _details: str) -> None:
        self._list_key = None
        self.status.setText(words.counts_failed(exc))

    def _on_one_partial(self, answer: object) -> None:
        if not (isinstance(answer, tuple) and len(answer) == 2):
            return
        index, check = answer
        if (self._one_key is None or not isinstance(index, int)
                or not isinstance(check, ModelEvent) or index >= len(self._one_specs)
                or self._one_specs[index].count_flops):
            return
        self._built[self._one_key] = check
        self._show()

    def _on_one_done(self, answer: tuple[tuple[str, int, int, int], ModelEvent]) -> None:
        key, check = answer
        self._checking = ""
        self._full[key] = check
        # A model with a fixed input size answers for that size, whatever it was asked at.
        self._full[(key[0], check.image_size, key[2], key[3])] = check
        self._show()
        self.fixed_size.emit(check.image_size if check.fixed_input_size else None)
        self.changed.emit()

    def _on_one_failed(self, exc: BaseException, details: str) -> None:
        self._checking = ""
        choice = self.choice()
        message = refusal_text(exc) if isinstance(exc, (ModelRefused, ConfigError)) else (
            words.not_checked(choice.label, exc))
        self._refused[self._full_key(choice)] = message
        self._show()
        self.changed.emit()

    def _built_check(self, choice: ModelChoice) -> ModelEvent | None:
        """What is known of `choice` without its FLOPs: its check's first answer, or for a
        built-in the list's (keyed by its name)."""
        size, _batch, classes = self._context
        key = self._full_key(choice)
        return self._built.get(key) or self._counts.get((choice.argument, size, classes))

    # -- showing ------------------------------------------------------------------------------

    def _show(self) -> None:
        size, _batch, classes = self._context
        for i in range(self.picker.count()):
            name = self.picker.itemData(i, FILE_ROLE)
            if name not in sources.builtin_names():
                continue
            self.picker.setItemText(i, words.builtin_item(name, self._counts.get(
                (name, size, classes))))
            self.picker.setItemData(i, words.BUILTIN_WORDS.get(name, ""),
                                    Qt.ItemDataRole.ToolTipRole)
        choice = self.choice()
        facts = sources.describe(choice)
        self.about.setText(words.about(facts))
        self.new_head.setVisible(facts.takes_new_head)
        self.code_note.setText(words.code_note(facts))
        self.code_note.setVisible(bool(self.code_note.text()))
        self._show_check(choice)

    def _show_check(self, choice: ModelChoice) -> None:
        key = self._full_key(choice)
        refused = self._refused.get(key)
        full = self._full.get(key)
        check = full or self._built_check(choice)
        text, level = words.check_status(
            refused=refused or "", checking=self._checking, check=check,
            label=choice.label, counts=self._checker is not None)
        self.status.setText(text)
        self.status.setVisible(bool(text))
        self.status.setStyleSheet(f"color: {LEVEL_COLORS[level]};" if level else "")
        flops = "" if refused or check is None or choice.is_article_cnn else words.flops_status(
            full, counting=bool(self._checking))
        self.flops.setText(flops)
        self.flops.setVisible(bool(flops))
        self.layers_button.setVisible(check is not None and bool(check.summary))
        self.layers.setPlainText("\n".join(words.layer_lines(check)) if check is not None else "")

    # -- slots --------------------------------------------------------------------------------

    def _on_picker_index_changed(self, _index: int) -> None:
        self._on_choice_changed()

    def _on_choice_changed(self) -> None:
        check = self._full.get(self._full_key(self.choice()))
        self.fixed_size.emit(check.image_size if check and check.fixed_input_size else None)
        self._show()
        self._schedule()
        self.changed.emit()

    def _on_new_head_toggled(self, _on: bool) -> None:
        self._on_choice_changed()

    def _on_open_button_clicked(self) -> None:
        start = str(Path(self._file_choice.file).parent) if self._file_choice else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open a model file", start,
                                              words.file_filter())
        if path:
            why = self.choose_file(Path(path))
            if why:
                self.status.setText(why)
                self.status.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]};")
                self.status.setVisible(True)

    def _on_layers_button_toggled(self, on: bool) -> None:
        self.layers.setVisible(on)
        self.layers_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
