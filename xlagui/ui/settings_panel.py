# Over 500 lines on purpose: one form, each field with its range, note, save and restore.
"""The settings of a comparison, checked as they are typed, with the reason next to the field.

Ranges come from `core.config` (`RANGES`, `MIN_IMAGE_SIZE`); a value the core would refuse is
shown with the core's own explanation, and the run buttons stay off until it is fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.machine import cpu as machine_cpu
from xlagui.core.protocol import arms as arm_kinds
from xlagui.core.protocol.config import (
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    MIN_IMAGE_SIZE,
    RANGES,
    TARGET_PERCENT_RANGE,
    ConfigError,
    ModelChoice,
    RunConfig,
    XlaMode,
    check_batch_fits,
    check_image_size,
)
from xlagui.ui.machine_panel import HostChecker, MachinePanel
from xlagui.ui.model_panel import ModelChecker, ModelPanel
from xlagui.ui.theme import SEVERITY_COLORS

SETTINGS_GROUP = "settings"
# The speed budget is saved under its own key, and only once the user has set it.
BUDGET_KEY = "speed_budget"
GPU_NONE_TIP = (
    "TensorFlow sees no GPU on this machine (no CUDA device, or a TensorFlow build without "
    "GPU support), so runs use the CPU."
)


@dataclass
class Note:
    """A remark on one field: "error" blocks a run, "warning" and "info" only explain."""

    severity: str
    text: str


class SettingsPanel(QWidget):
    """Epochs, batch size, image size, device, XLA, the other arms to measure, augmentation,
    repeats, seed.

    Signals:
        changed(): any setting changed (the window re-checks what it can run).
        holdout_changed(int): the held-out percentage changed (the scan depends on it).
        xla_toggled(bool): the XLA switch, which picks the side a single run uses.
        put_back_requested(): the user wants every file left out back in the comparison.
    """

    changed = Signal()
    holdout_changed = Signal(int)
    xla_toggled = Signal(bool)
    put_back_requested = Signal()

    def __init__(self, model_checker: ModelChecker | None = None,
                 parent: QWidget | None = None, *, ssh_config: str = "",
                 host_checker: HostChecker | None = None) -> None:
        super().__init__(parent)
        self.train_count: int | None = None
        self.num_classes = 2
        self._fixed_size: int | None = None  # a model file's own image size (locks the box)
        self.auto_split = True
        self.notes: dict[str, Note] = {}
        self.restore_problems: list[str] = []  # saved settings refused by the last restore()
        self._note_labels: dict[str, QLabel] = {}
        self.gpu_available = False
        self._preferred_device = "cpu"
        # This computer's devices (the probe's answer; None until it answers): shown while the
        # machine is this computer, a host's own while it is one.
        self._local_devices: list[dict[str, str]] | None = None
        # None: the "Also measure" boxes follow this machine's defaults (until the user ticks
        # one, or a saved choice is restored).
        self._chosen_arms: tuple[str, ...] | None = None
        # None: the speed budget follows the number of arms measured (until the user sets it).
        self._chosen_budget: int | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(10)
        self._build_left_out(outer)
        self._build_machine(outer, ssh_config, host_checker)
        self._build_model(outer, model_checker)
        self._build_training(outer)
        self._build_xla(outer)
        self._build_also_measure(outer)
        self._build_measurement(outer)
        outer.addStretch(1)

        self._show_devices(None)
        self.reset_defaults()

    # -- construction -------------------------------------------------------------------------

    def _build_left_out(self, outer: QVBoxLayout) -> None:
        """Data left out: shown only when some is."""
        self.left_out_box = QGroupBox("Data")
        lv = QVBoxLayout(self.left_out_box)
        self.left_out_label = QLabel()
        self.left_out_label.setObjectName("Note")
        self.left_out_label.setWordWrap(True)
        self.left_out_label.setStyleSheet(f"color: {SEVERITY_COLORS['warning']};")
        self.put_back_button = QPushButton("Put them back")
        self.put_back_button.setToolTip("Train and validate on every usable file again")
        self.put_back_button.clicked.connect(self._on_put_back_button_clicked)
        lv.addWidget(self.left_out_label)
        lv.addWidget(self.put_back_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.left_out_box.setVisible(False)
        outer.addWidget(self.left_out_box)

    def _build_machine(self, outer: QVBoxLayout, ssh_config: str,
                       host_checker: HostChecker | None) -> None:
        """Where the workers run: this computer, or an SSH host."""
        self.machine_panel = MachinePanel(ssh_config, host_checker)
        self.machine_panel.changed.connect(self._on_machine_panel_changed)
        outer.addWidget(self.machine_panel)

    def _build_model(self, outer: QVBoxLayout, model_checker: ModelChecker | None) -> None:
        """What is trained (`ui/model_panel.py`)."""
        self.model_panel = ModelPanel(model_checker)
        self.model_panel.changed.connect(self._on_model_panel_changed)
        self.model_panel.fixed_size.connect(self._on_model_panel_fixed_size)
        outer.addWidget(self.model_panel)

    def _build_training(self, outer: QVBoxLayout) -> None:
        """Epochs, batch size, image size, device, augmentation."""
        training = QGroupBox("Training")
        form = self._form(training)
        self.epochs = self._spin("epochs", RANGES["epochs"].low, RANGES["epochs"].high)
        self.batch_size = self._spin("batch_size", RANGES["batch_size"].low,
                                     RANGES["batch_size"].high)
        # The box accepts sizes below the minimum on purpose: the note explains why not.
        self.image_size = self._spin("image_size", 1, RANGES["image_size"].high, suffix=" px")
        self.image_size.setSingleStep(8)
        self.augment = QCheckBox("Augment (horizontal flip, zoom 0.2, shear 0.2)")
        self.augment.setToolTip("The article's augmentation layers, applied to training batches")
        self.augment.toggled.connect(self._on_value_changed)
        self.device = QComboBox()
        self.device.setModel(QStandardItemModel(self.device))
        self.device.currentIndexChanged.connect(self._on_device_changed)
        self._add_row(form, "Epochs", self.epochs, "epochs")
        self._add_row(form, "Batch size", self.batch_size, "batch_size")
        self._add_row(form, "Image size", self.image_size, "image_size")
        self._add_row(form, "Device", self.device, "device")
        form.addRow(self.augment)
        outer.addWidget(training)

    def _build_xla(self, outer: QVBoxLayout) -> None:
        """The XLA switch (which side "Run one side" trains) and the mode."""
        xla = QGroupBox("XLA")
        xv = QVBoxLayout(xla)
        self.xla = QCheckBox("XLA on")
        self.xla.setChecked(True)
        self.xla.setToolTip(
            "Which side “Run one side” trains: with XLA (on) or the baseline (off).\n"
            "“Run comparison” always trains both."
        )
        self.xla.toggled.connect(self._on_xla_toggled)
        xv.addWidget(self.xla)
        self.advanced_button = QToolButton()
        self.advanced_button.setText("Advanced")
        self.advanced_button.setCheckable(True)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setStyleSheet("QToolButton { border: none; }")
        self.advanced_button.toggled.connect(self._on_advanced_toggled)
        xv.addWidget(self.advanced_button)
        self.advanced = QWidget()
        av = QVBoxLayout(self.advanced)
        av.setContentsMargins(18, 0, 0, 0)
        self.mode_jit = QRadioButton("jit_compile=True (recommended)")
        self.mode_jit.setToolTip("model.compile(jit_compile=True): XLA compiles the whole "
                                 "training step, on CPU and GPU")
        self.mode_autocluster = QRadioButton("Auto-clustering (the article's set_jit)")
        self.mode_autocluster.setToolTip("tf.config.optimizer.set_jit(True): XLA compiles the "
                                  "clusters it chooses; on CPU it needs extra flags, which xlagui "
                                  "sets")
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.mode_jit)
        self.mode_group.addButton(self.mode_autocluster)
        self.mode_jit.setChecked(True)
        self.mode_jit.toggled.connect(self._on_value_changed)
        av.addWidget(self.mode_jit)
        av.addWidget(self.mode_autocluster)
        self.advanced.setVisible(False)
        xv.addWidget(self.advanced)
        outer.addWidget(xla)

    def _build_also_measure(self, outer: QVBoxLayout) -> None:
        """Other levers, measured in the same interleaved rounds."""
        also = QGroupBox("Also measure")
        also.setToolTip("Other training configurations, each measured against the baseline in "
                        "the same interleaved rounds, with a column of its own")
        alv = QVBoxLayout(also)
        alv.setSpacing(2)
        self.arm_boxes: dict[str, QCheckBox] = {}
        self._arm_notes: dict[str, QLabel] = {}
        for name in arm_kinds.OFFERED:
            arm = arm_kinds.parse_arm(name)
            box = QCheckBox(f"{name}  ({arm.label})")
            box.setObjectName(f"arm:{name}")
            box.setToolTip(f"{arm.label}: {arm.description}")
            box.toggled.connect(self._on_arm_toggled)
            note = QLabel()
            note.setObjectName("Note")
            note.setWordWrap(True)
            note.setContentsMargins(22, 0, 0, 2)
            note.setStyleSheet(f"color: {SEVERITY_COLORS['warning']};")
            note.setVisible(False)
            alv.addWidget(box)
            alv.addWidget(note)
            self.arm_boxes[name] = box
            self._arm_notes[name] = note
        outer.addWidget(also)

    def _build_measurement(self, outer: QVBoxLayout) -> None:
        """Budget, precision goal, repeats, seed, held out, A/A check."""
        measure = QGroupBox("Measurement")
        mform = self._form(measure)
        self.repeats = self._spin("repeats", RANGES["repeats"].low, RANGES["repeats"].high)
        self.seed = self._spin("seed", RANGES["seed"].low, RANGES["seed"].high)
        self.holdout = self._spin("holdout_percent", RANGES["holdout_percent"].low,
                                  RANGES["holdout_percent"].high, suffix=" %")
        self.holdout.setToolTip("Share of each class held out for testing when the folder has "
                                "no test folder")
        self.holdout.valueChanged.connect(self.holdout_changed)
        self.budget = self._spin("budget_seconds", RANGES["budget_seconds"].low,
                                 RANGES["budget_seconds"].high, suffix=" s",
                                 on_change=self._on_budget_value_changed)
        self.budget.setToolTip(
            "The speed measurement alternates short blocks of steps between the baseline and "
            "each arm; it stops after this long at most. Until you set it, it follows the arms: "
            f"{DEFAULTS['budget_seconds']} s for XLA, plus {EXTRA_ARM_BUDGET_SECONDS} s for "
            "every other arm measured")
        self.target = QDoubleSpinBox()
        self.target.setObjectName("target_percent")
        self.target.setRange(*TARGET_PERCENT_RANGE)
        self.target.setDecimals(1)
        self.target.setSingleStep(0.5)
        self.target.setPrefix("± ")
        self.target.setSuffix(" %")
        self.target.setToolTip("…or as soon as the speed-up's 95% interval is this narrow")
        self.target.valueChanged.connect(self._on_value_changed)
        self._add_row(mform, "Speed budget", self.budget, "budget_seconds")
        self._add_row(mform, "Precision goal", self.target, "target_percent")
        self._add_row(mform, "Repeats", self.repeats, "repeats")
        self._add_row(mform, "Seed", self.seed, "seed")
        self._add_row(mform, "Held out", self.holdout, "holdout_percent")
        self.check = QCheckBox("Check the measurement (A/A)")
        self.check.setToolTip(
            "Also measure the baseline against an identical second baseline worker, interleaved "
            "like an arm: its ratio should be 1.00, and an interval that misses 1.00 shows a "
            "position or order effect of the instrument itself. Adds one arm's time.")
        self.check.toggled.connect(self._on_check_toggled)
        mform.addRow(self.check)
        outer.addWidget(measure)

    # -- construction helpers ----------------------------------------------------------------

    def _form(self, box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setVerticalSpacing(4)
        return form

    def _spin(
        self,
        name: str,
        low: int,
        high: int,
        suffix: str = "",
        on_change: Callable[[int], None] | None = None,
    ) -> QSpinBox:
        box = QSpinBox()
        box.setObjectName(name)
        box.setRange(low, high)
        box.setSuffix(suffix)
        box.setAccelerated(True)
        box.setKeyboardTracking(True)
        box.valueChanged.connect(on_change or self._on_value_changed)
        return box

    def _add_row(self, form: QFormLayout, label: str, field: QWidget, key: str) -> None:
        form.addRow(label, field)
        note = QLabel()
        note.setObjectName("Note")
        note.setWordWrap(True)
        note.setVisible(False)
        form.addRow("", note)
        self._note_labels[key] = note

    # -- what the window calls ---------------------------------------------------------------

    def reset_defaults(self) -> None:
        self.epochs.setValue(DEFAULTS["epochs"])
        self.batch_size.setValue(DEFAULTS["batch_size"])
        self.image_size.setValue(DEFAULTS["image_size"])
        self.repeats.setValue(DEFAULTS["repeats"])
        self.seed.setValue(DEFAULTS["seed"])
        self.holdout.setValue(DEFAULTS["holdout_percent"])
        self._chosen_budget = None
        self.target.setValue(DEFAULTS["target_percent"])
        self.augment.setChecked(DEFAULTS["augment"])
        self.check.setChecked(False)
        self.mode_jit.setChecked(True)
        self.model_panel.select(ModelChoice())
        self._chosen_arms = None
        self._show_arms()
        self.validate()

    def set_dataset(self, train_count: int | None, auto_split: bool = True,
                    num_classes: int = 2) -> None:
        """The training set size (to check the batch size), whether the scan chose the test
        set (only then does the held-out percentage matter), and the class count (a model's
        output is sized to it)."""
        self.train_count = train_count
        self.auto_split = auto_split
        self.num_classes = max(2, num_classes)
        self.holdout.setEnabled(auto_split)
        self.validate()

    def set_left_out(self, count: int, detail: str) -> None:
        """Say how many files the comparison leaves out, and why (`detail`); hidden at 0."""
        from xlagui.core.data.exclusions import describe

        self.left_out_box.setVisible(count > 0)
        self.left_out_label.setText(
            f"{describe(count)}" + (f" ({detail})" if detail else "")
            + ". The dataset folder is not changed.")

    def set_devices(self, devices: list[dict[str, str]] | None) -> None:
        """This computer's devices (the probe's answer; `None`: not answered yet), shown while
        the comparison runs on this computer."""
        self._local_devices = devices
        if not self.machine_panel.is_remote:
            self._show_devices(devices)

    def _on_machine_panel_changed(self) -> None:
        machine = self.machine_panel
        self._show_devices(machine.devices() if machine.is_remote else self._local_devices)
        self.changed.emit()

    def _show_devices(self, devices: list[dict[str, str]] | None) -> None:
        """Fill the device list: CPU first; GPUs disabled with a reason when none is found.
        `None` means the machine has not said yet."""
        model: QStandardItemModel = self.device.model()  # type: ignore[assignment]
        self.device.blockSignals(True)
        model.clear()
        unknown = devices is None
        found = list(devices or [])
        cpu = next((d for d in found if d.get("kind") == "CPU"), None)
        name = (cpu or {}).get("name", "")
        cpu_item = QStandardItem(f"CPU — {name}" if name and name != "CPU" else "CPU")
        cpu_item.setData("cpu", Qt.ItemDataRole.UserRole)
        model.appendRow(cpu_item)
        gpus = [d for d in found if d.get("kind") == "GPU"]
        for d in gpus:
            label = d["name"] if d["id"] == "all" else f"GPU {d['id'][4:]} — {d['name']}"
            item = QStandardItem(label)
            item.setData(d["id"], Qt.ItemDataRole.UserRole)
            model.appendRow(item)
        if not gpus:
            item = QStandardItem("GPU — looking for GPUs…" if unknown else "GPU — none found")
            item.setData("gpu:0", Qt.ItemDataRole.UserRole)
            item.setEnabled(False)
            item.setToolTip("Asking TensorFlow which devices it sees, in a helper process…"
                            if unknown else GPU_NONE_TIP)
            model.appendRow(item)
        self.gpu_available = bool(gpus)
        self.device.setToolTip("" if gpus or unknown else GPU_NONE_TIP)
        self._select_device(self._preferred_device)
        self.device.blockSignals(False)
        self._show_arms()
        self.validate()

    def _select_device(self, device_id: str) -> None:
        model: QStandardItemModel = self.device.model()  # type: ignore[assignment]
        row = next((r for r in range(model.rowCount())
                    if model.item(r).data(Qt.ItemDataRole.UserRole) == device_id
                    and model.item(r).isEnabled()), 0)
        blocked = self.device.blockSignals(True)
        self.device.setCurrentIndex(row)
        self.device.blockSignals(blocked)

    @property
    def device_kind(self) -> str:
        """"CPU" or "GPU": the kind of the chosen device (what the arms' defaults and notes
        depend on)."""
        return "CPU" if (self.device.currentData() or "cpu") == "cpu" else "GPU"

    @property
    def arms(self) -> tuple[str, ...]:
        """The ticked "Also measure" arms, in the order offered."""
        return tuple(n for n, box in self.arm_boxes.items() if box.isChecked())

    def _show_arms(self) -> None:
        """Tick the chosen arms (this machine's defaults until the user chose) and show each
        arm's hardware note for the chosen device."""
        kind = self.device_kind
        flags = machine_cpu.cpu_flags()
        ticked = (arm_kinds.default_also(kind, flags) if self._chosen_arms is None
                  else self._chosen_arms)
        for name, box in self.arm_boxes.items():
            blocked = box.blockSignals(True)
            box.setChecked(name in ticked)
            box.blockSignals(blocked)
            note = arm_kinds.hardware_note(arm_kinds.parse_arm(name), kind, flags)
            label = self._arm_notes[name]
            label.setText(note[:1].upper() + note[1:] + "." if note else "")
            label.setVisible(bool(note))

    @property
    def xla_mode(self) -> XlaMode:
        return XlaMode.AUTOCLUSTER if self.mode_autocluster.isChecked() else XlaMode.JIT

    def values(self) -> dict[str, Any]:
        return {
            "epochs": self.epochs.value(),
            "batch_size": self.batch_size.value(),
            "image_size": self.image_size.value(),
            "device": self.device.currentData() or "cpu",
            "augment": self.augment.isChecked(),
            "seed": self.seed.value(),
            "repeats": self.repeats.value(),
            "xla": self.xla_mode.value,
            "holdout_percent": self.holdout.value(),
            "budget_seconds": self.budget.value(),
            "target_percent": self.target.value(),
            "arms": self.arms,
            "check": self.check.isChecked(),
            "model": self.model_panel.choice(),
        }

    def config(self) -> RunConfig | None:
        """The settings as a `RunConfig`, or None while any of them is in error."""
        if any(n.severity == "error" for n in self.notes.values()):
            return None
        try:
            return RunConfig(**self.values())
        except ConfigError:
            return None

    def errors(self) -> list[str]:
        return [n.text for n in self.notes.values() if n.severity == "error"]

    @property
    def default_budget(self) -> int:
        """The speed budget for the arms ticked now (what the box shows until the user sets
        one)."""
        return arm_kinds.default_budget(self.xla_mode, self.arms, check=self.check.isChecked())

    def _on_check_toggled(self, checked: bool) -> None:
        self._show_budget()  # the twin is one more arm to measure
        self._on_value_changed()

    def _show_budget(self) -> None:
        if self._chosen_budget is None:
            blocked = self.budget.blockSignals(True)
            self.budget.setValue(self.default_budget)
            self.budget.blockSignals(blocked)

    def validate(self) -> None:
        """Check every field and show the notes; emits nothing (callers emit `changed`)."""
        notes: dict[str, Note] = {}
        self._show_budget()
        v = self.values()
        self.model_panel.set_context(v["image_size"], v["batch_size"], self.num_classes)
        try:
            check_image_size(v["image_size"], v["model"])
        except ConfigError as exc:
            notes["image_size"] = Note("error", str(exc)[0].upper() + str(exc)[1:] + ".")
        else:
            if v["image_size"] < 64:
                notes["image_size"] = Note(
                    "info", f"Small images train fast but leave XLA little to speed up "
                    f"(the smallest is {MIN_IMAGE_SIZE} px).")
        if self.train_count is not None:
            try:
                check_batch_fits(v["batch_size"], self.train_count)
            except ConfigError as exc:
                notes["batch_size"] = Note("error", str(exc)[0].upper() + str(exc)[1:] + ".")
        if self.train_count and "batch_size" not in notes:
            # Full batches only (a partial one would make XLA compile a second program).
            steps, left = divmod(self.train_count, v["batch_size"])
            rest = f", {left:,} left out of each shuffled epoch" if left else ""
            notes["batch_size"] = Note(
                "info", f"{self.train_count:,} training images: {steps:,} full "
                f"batch{'es' if steps != 1 else ''} per epoch{rest}.")
        if v["epochs"] == 1:
            notes["epochs"] = Note(
                "warning", "With one epoch there is no steady epoch to compare: the first "
                "epoch includes tracing and compiling. Use 2 or more.")
        if v["repeats"] > 1:
            notes["repeats"] = Note(
                "info", f"{v['repeats']} runs per side, interleaved (baseline, XLA, …); the "
                "speed-up interval comes from the repeats.")
        if not self.auto_split:
            notes["holdout_percent"] = Note(
                "info", "Not used: the dataset has its own test folder.")
        others = [name for name, _arm in arm_kinds.comparison_arms(self.xla_mode, self.arms)[2:]]
        if v["check"]:
            others.append("the A/A check's twin")
        if self._chosen_budget is None and others:
            notes["budget_seconds"] = Note(
                "info", f"{DEFAULTS['budget_seconds']} s for XLA and {EXTRA_ARM_BUDGET_SECONDS} s "
                f"more for each other arm ({', '.join(others)}): each needs pairs of its own.")
        if v["device"] == "cpu" and self.gpu_available:
            notes["device"] = Note("info", "A GPU is available; XLA usually gains more there.")
        self.notes = notes
        for key, label in self._note_labels.items():
            note = notes.get(key)
            label.setVisible(note is not None)
            if note is not None:
                label.setText(note.text)
                label.setStyleSheet(f"color: {SEVERITY_COLORS[note.severity]};")

    def apply(self, config: RunConfig) -> list[str]:
        """Set every field to `config`'s (a reopened comparison's, "Use these settings"); what
        could not be set, in words (a model file gone since, a GPU not on this machine)."""
        problems: list[str] = []
        for box, value in ((self.epochs, config.epochs), (self.batch_size, config.batch_size),
                           (self.repeats, config.repeats), (self.seed, config.seed),
                           (self.holdout, config.holdout_percent)):
            box.setValue(value)
        self.augment.setChecked(config.augment)
        self.target.setValue(config.target_percent)
        self.check.setChecked(config.check)
        autocluster = config.xla is XlaMode.AUTOCLUSTER
        (self.mode_autocluster if autocluster else self.mode_jit).setChecked(True)
        self._chosen_arms = tuple(a for a in config.arms if a in self.arm_boxes)
        dropped = [a for a in config.arms if a not in self.arm_boxes]
        if dropped:
            problems.append(f"The arms {', '.join(dropped)} are not offered here.")
        self._show_arms()
        self._preferred_device = config.device
        self._select_device(config.device)
        if (self.device.currentData() or "cpu") != config.device:
            problems.append(f"The device {config.device} is not available here: the CPU is "
                            "chosen.")
        why = self.model_panel.select(config.model)
        if why:
            problems.append(f"The model was not set: {why}")
        # After the model: a model file with a fixed input size sets the image size itself.
        if self.image_size.isEnabled():
            self.image_size.setValue(config.image_size)
        # Last: the arms and the check change the budget that follows them.
        self._chosen_budget = None
        self._show_budget()
        if config.budget_seconds != self.default_budget:
            self.budget.setValue(config.budget_seconds)  # a chosen budget
        self.validate()
        self.changed.emit()
        return problems

    # -- persistence --------------------------------------------------------------------------

    def save(self, settings: QSettings) -> None:
        settings.beginGroup(SETTINGS_GROUP)
        self.model_panel.save(settings)
        self.machine_panel.save(settings)
        for key, value in self.values().items():
            if key == "model":
                continue
            if key == "arms":
                # Saved only once chosen: until then the defaults follow the machine.
                if self._chosen_arms is not None:
                    settings.setValue("also_measure", ",".join(value) or "none")
                continue
            if key == "budget_seconds":
                # Likewise: a budget the user never set follows the arms. Versions before
                # that saved the default under "budget_seconds" every time, so that key is
                # dropped rather than read as a choice.
                settings.remove("budget_seconds")
                if self._chosen_budget is not None:
                    settings.setValue(BUDGET_KEY, value)
                continue
            settings.setValue(key, value)
        settings.setValue("xla_on", self.xla.isChecked())
        settings.setValue("advanced_open", self.advanced_button.isChecked())
        settings.endGroup()

    def restore(self, settings: QSettings) -> None:
        """Apply saved settings; `restore_problems` says which were refused and why."""
        settings.beginGroup(SETTINGS_GROUP)
        # A settings file is the user's to edit (or to break): a value out of its range is not
        # clamped silently but left at the default, and said.
        self.restore_problems.clear()
        try:
            for key, label, box in (("epochs", "epochs", self.epochs),
                                    ("batch_size", "batch size", self.batch_size),
                                    ("image_size", "image size", self.image_size),
                                    ("repeats", "repeats", self.repeats),
                                    ("seed", "seed", self.seed),
                                    ("holdout_percent", "held-out percentage", self.holdout),
                                    (BUDGET_KEY, "speed budget", self.budget)):
                value = settings.value(key)
                if value is None:
                    continue
                try:
                    if key == "image_size":
                        box.setValue(check_image_size(str(value)))
                    elif key == BUDGET_KEY:
                        box.setValue(RANGES["budget_seconds"].check(label, str(value)))
                        self._chosen_budget = box.value()
                    else:
                        box.setValue(RANGES[key].check(label, str(value)))
                except ConfigError as exc:
                    self.restore_problems.append(f"The saved {label} was ignored: {exc}.")
            target = settings.value("target_percent")
            if target is not None:
                try:
                    value = float(str(target))
                    if not TARGET_PERCENT_RANGE[0] <= value <= TARGET_PERCENT_RANGE[1]:
                        raise ValueError(f"must be between {TARGET_PERCENT_RANGE[0]:g} and "
                                         f"{TARGET_PERCENT_RANGE[1]:g}, got {target}")
                    self.target.setValue(value)
                except ValueError as exc:
                    self.restore_problems.append(
                        f"The saved precision goal was ignored: {exc}.")
            self.augment.setChecked(_bool(settings.value("augment"), DEFAULTS["augment"]))
            self.check.setChecked(_bool(settings.value("check"), False))
            self.xla.setChecked(_bool(settings.value("xla_on"), True))
            if settings.value("xla") == XlaMode.AUTOCLUSTER.value:
                self.mode_autocluster.setChecked(True)
            self.advanced_button.setChecked(_bool(settings.value("advanced_open"), False))
            device = settings.value("device")
            if isinstance(device, str):
                self._preferred_device = device
                self._select_device(device)
            also = settings.value("also_measure")
            if also is not None:
                text = ",".join(also) if isinstance(also, list) else str(also)
                try:
                    chosen = () if text.strip() == "none" else arm_kinds.parse_arms([text])
                except ConfigError as exc:
                    self.restore_problems.append(f"The saved arms to measure were ignored: {exc}.")
                else:
                    self._chosen_arms = tuple(n for n in chosen if n in self.arm_boxes)
            self._show_arms()
            self.machine_panel.restore(settings)
            model_problem = self.model_panel.restore(settings)
            if model_problem:
                self.restore_problems.append(model_problem)
        finally:
            settings.endGroup()
        self.validate()

    # -- slots ------------------------------------------------------------------------------

    def _on_value_changed(self, *_args: object) -> None:
        self.validate()
        self.changed.emit()

    def _on_model_panel_changed(self) -> None:
        self.validate()
        self.changed.emit()

    def _on_model_panel_fixed_size(self, size: int | None) -> None:
        """A model file with a fixed input size sets the image size and locks the box."""
        self._fixed_size = size
        self.image_size.setEnabled(size is None)
        self.image_size.setToolTip(
            "" if size is None else f"{self.model_panel.choice().label} takes {size}×{size} "
            "images: the image size is the model's")
        if size is not None and self.image_size.value() != size:
            self.image_size.setValue(size)  # validates and says changed

    def _on_budget_value_changed(self, value: int) -> None:
        # Only a chosen budget reaches here (the user's edit, or a saved choice restored): the
        # budget that follows the arms is set with the box's signals blocked.
        self._chosen_budget = value
        self._on_value_changed()

    def _on_device_changed(self, _index: int) -> None:
        self._preferred_device = self.device.currentData() or "cpu"
        self._show_arms()
        self._on_value_changed()

    def _on_arm_toggled(self, _on: bool) -> None:
        self._chosen_arms = self.arms
        self._on_value_changed()

    def _on_xla_toggled(self, on: bool) -> None:
        self.xla_toggled.emit(on)
        self.changed.emit()

    def _on_put_back_button_clicked(self) -> None:
        self.put_back_requested.emit()

    def _on_advanced_toggled(self, on: bool) -> None:
        self.advanced.setVisible(on)
        self.advanced_button.setArrowType(Qt.ArrowType.DownArrow if on
                                          else Qt.ArrowType.RightArrow)


def _bool(value: object, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).lower() in ("true", "1", "yes")
