"""The settings' fields, laid out in their groups, and the values they hold: what
`settings_panel.SettingsPanel` checks, saves and restores.

Ranges come from `core.config` (`RANGES`, `TARGET_PERCENT_RANGE`); each field has a label under
it for its note (`present/settings_advice.py` words them).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
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

from xlagui.core.measure.transports import TransportOptions
from xlagui.core.protocol import arms as arm_kinds
from xlagui.core.protocol.config import (
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    SETTING,
    SETTINGS,
    TARGET_PERCENT_RANGE,
    XlaMode,
)
from xlagui.core.protocol.levers import XLA
from xlagui.core.protocol.settings import Setting
from xlagui.present.levels import Level
from xlagui.present.levers import (
    LEVER_WORDS,
    arm_description,
    arm_label,
    comparison_line,
    xla_choices,
)
from xlagui.present.settings_advice import arm_missing
from xlagui.ui.settings.device_box import DeviceBox
from xlagui.ui.settings.machine_panel import HostChecker, MachinePanel
from xlagui.ui.settings.model_panel import ModelChecker, ModelPanel
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.shared.widgets import with_words

# The XLA side's mode until the user picks one (`RunConfig`'s).
DEFAULT_MODE = XlaMode(DEFAULTS["xla"])
# The attribute a setting's field is kept under, where it is not the setting's name.
FIELD_ATTRIBUTES = {"holdout_percent": "holdout", "budget_seconds": "budget",
                    "target_percent": "target", "busy_percent": "busy"}
# The window's own words for its fields (the command line's are the table's `help`).
TOOLTIPS = {
    "augment": "The article's augmentation layers, applied to training batches",
    "drop_remainder":
        "Every validation batch then has the batch size (training batches always do): XLA "
        "compiles the evaluation once instead of once more for the last, smaller batch "
        "(drop_remainder=True). The images of that batch are not evaluated.",
    "holdout_percent": "Share of each class held out for testing when the folder has no test "
                       "folder",
    "budget_seconds":
        "The speed measurement alternates short blocks of steps between the baseline and "
        "each arm; it stops after this long at most. Until you set it, it follows the arms: "
        f"{DEFAULTS['budget_seconds']} s for XLA, plus {EXTRA_ARM_BUDGET_SECONDS} s for "
        "every other arm measured",
    "target_percent": "…or as soon as the speed-up's 95% interval is this narrow",
    "busy_percent":
        "A timed block or epoch during which other programs (or a VM's hypervisor) used "
        "more than this share of the machine's cores is disturbed: set aside, and an "
        "answer with too few undisturbed rounds is marked as measured on a busy machine",
    "check":
        "Also measure the baseline against an identical second baseline worker, interleaved "
        "like an arm: its ratio should be 1.00, and an interval that misses 1.00 shows a "
        "position or order effect of the instrument itself. Adds one arm's time.",
    "explain":
        "After the speed answer, one untimed worker per arm profiles a few steps (where "
        "each step's time goes, layer by layer) and trains the first batches beside the "
        "baseline (do the numbers stay the same?). Shown in the Why tab; adds about a "
        "compile per arm.",
}


class SettingsForm(QWidget):
    """The fields of a comparison's settings, in groups: the data left out, the machine, the
    model, training, XLA, the other arms to measure, the measurement. Built unconnected:
    `SettingsPanel` (its subclass) wires, checks, saves and restores them.

    Signals: none.
    """

    # The settings table's fields (`_build_group` makes them from its entries).
    epochs: QSpinBox
    batch_size: QSpinBox
    image_size: QSpinBox
    device: DeviceBox
    augment: QCheckBox
    drop_remainder: QCheckBox
    budget: QSpinBox
    target: QDoubleSpinBox
    busy: QSpinBox
    repeats: QSpinBox
    seed: QSpinBox
    holdout: QSpinBox
    check: QCheckBox
    explain: QCheckBox

    def __init__(self, model_checker: ModelChecker | None = None,
                 parent: QWidget | None = None, *, transport_options: TransportOptions = (),
                 host_checker: HostChecker | None = None) -> None:
        super().__init__(parent)
        self._note_labels: dict[str, QLabel] = {}
        # The settings table's whole numbers and true-or-false ones, by name (`_build_group`).
        self.spins: dict[str, QSpinBox] = {}
        self.toggles: dict[str, QCheckBox] = {}
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 4)  # the last group's frame, not on the edge
        outer.setSpacing(10)
        self._build_left_out(outer)
        self._build_machine(outer, transport_options, host_checker)
        self._build_model(outer, model_checker)
        self._build_training(outer)
        self._build_xla(outer)
        self._build_also_measure(outer)
        self._build_measurement(outer)
        outer.addStretch(1)
        for combo in self.findChildren(QComboBox):
            # As wide as the sidebar gives, not as its longest item (a GPU's or a host's
            # name): the settings never get wider than the sidebar.
            combo.setSizeAdjustPolicy(
                QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            if combo.minimumContentsLength() == 0:
                combo.setMinimumContentsLength(12)

    # -- construction -------------------------------------------------------------------------

    def _build_left_out(self, outer: QVBoxLayout) -> None:
        """Data left out: shown only when some is."""
        self.left_out_box = QGroupBox("Data")
        lv = QVBoxLayout(self.left_out_box)
        self.left_out_label = QLabel()
        self.left_out_label.setObjectName("Note")
        self.left_out_label.setWordWrap(True)
        self.left_out_label.setStyleSheet(f"color: {LEVEL_COLORS[Level.WARNING]};")
        self.put_back_button = QPushButton("Put them back")
        self.put_back_button.setToolTip("Train and validate on every usable file again")
        lv.addWidget(self.left_out_label)
        lv.addWidget(self.put_back_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.left_out_box.setVisible(False)
        outer.addWidget(self.left_out_box)

    def _build_machine(self, outer: QVBoxLayout,
                       transport_options: TransportOptions,
                       host_checker: HostChecker | None) -> None:
        """Where the workers run: this computer, or an SSH host."""
        self.machine_panel = MachinePanel(transport_options, host_checker)
        outer.addWidget(self.machine_panel)

    def _build_model(self, outer: QVBoxLayout, model_checker: ModelChecker | None) -> None:
        """What is trained (`ui/settings/model_panel.py`)."""
        self.model_panel = ModelPanel(model_checker)
        outer.addWidget(self.model_panel)

    def _build_training(self, outer: QVBoxLayout) -> None:
        """Epochs, batch size, image size, device, augmentation, the partial batch: the
        settings table's "training" group."""
        self._build_group(outer, "Training", "training")

    def _build_xla(self, outer: QVBoxLayout) -> None:
        """The XLA side's mode: a radio button per mode the XLA lever offers
        (`present.levers.xla_choices`), in the table's order. (The side "Run … only" trains is
        chosen beside that button, in the sidebar.)"""
        xla = QGroupBox(LEVER_WORDS[XLA.words])
        xv = QVBoxLayout(xla)
        # What "Run comparison" switches on, with the mode chosen below: on the first screen.
        self.xla_line = QLabel()
        self.xla_line.setObjectName("XlaLine")
        self.xla_line.setWordWrap(True)
        xv.addWidget(self.xla_line)
        self.advanced_button = QToolButton()
        self.advanced_button.setText("Advanced")
        self.advanced_button.setCheckable(True)
        self.advanced_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_button.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_button.setStyleSheet("QToolButton { border: none; }")
        xv.addWidget(self.advanced_button)
        self.advanced = QWidget()
        av = QVBoxLayout(self.advanced)
        av.setContentsMargins(18, 0, 0, 0)
        self.mode_group = QButtonGroup(self)
        self.mode_buttons: dict[XlaMode, QRadioButton] = {}
        for mode, words in xla_choices():
            button = QRadioButton(words.choice)
            button.setObjectName(f"xla:{mode.value}")
            button.setToolTip(words.tip)
            self.mode_group.addButton(button)
            av.addWidget(button)
            self.mode_buttons[mode] = button
            button.toggled.connect(self._on_mode_button_toggled)
        self.choose_mode(DEFAULT_MODE)
        self.advanced.setVisible(False)
        xv.addWidget(self.advanced)
        outer.addWidget(xla)

    def _build_also_measure(self, outer: QVBoxLayout) -> None:
        """Other levers, measured in the same interleaved rounds: a box per arm the levers offer
        (`arms.offered_arms`), in their order."""
        also = QGroupBox("Also measure")
        also.setToolTip("Other training configurations, each measured against the baseline in "
                        "the same interleaved rounds, with a column of its own")
        alv = QVBoxLayout(also)
        alv.setSpacing(2)
        self.arm_boxes: dict[str, QCheckBox] = {}
        self._arm_notes: dict[str, QLabel] = {}
        for name in arm_kinds.offered_arms():
            arm = arm_kinds.parse_arm(name)
            box = QCheckBox(name)
            box.setObjectName(f"arm:{name}")
            box.setToolTip(f"{arm_label(arm)}: {arm_description(arm)}")
            missing = arm_missing(name)
            if missing:  # listed, greyed, with the line that installs what it needs
                box.setEnabled(False)
                box.setToolTip(f"{arm_label(arm)}: {arm_description(arm)}. {missing}")
            note = QLabel()
            note.setObjectName("Note")
            note.setWordWrap(True)
            note.setContentsMargins(22, 0, 0, 2)
            note.setStyleSheet(f"color: {LEVEL_COLORS[Level.WARNING]};")
            note.setVisible(False)
            alv.addWidget(with_words(box, arm_label(arm)))
            alv.addWidget(note)
            self.arm_boxes[name] = box
            self._arm_notes[name] = note
        outer.addWidget(also)

    def _build_measurement(self, outer: QVBoxLayout) -> None:
        """Budget, precision goal, busy threshold, repeats, seed, held out, A/A check, the why:
        the settings table's "measurement" group."""
        self._build_group(outer, "Measurement", "measurement")

    def _build_group(self, outer: QVBoxLayout, title: str, group: str) -> None:
        """A group of the settings table's fields, in the table's order: a whole number's spin
        box and a true-or-false one's tick box from its entry (range, unit, label), the few
        that need another widget from `_special_field`; each field's tooltip is the window's
        own (`TOOLTIPS`)."""
        box = QGroupBox(title)
        form = self._form(box)
        for one in SETTINGS:
            if one.group != group:
                continue
            field = self._special_field(one.name) or self._plain_field(one)
            field.setObjectName(one.name)
            if one.name in TOOLTIPS:
                field.setToolTip(TOOLTIPS[one.name])
            setattr(self, FIELD_ATTRIBUTES.get(one.name, one.name), field)
            if isinstance(field, QCheckBox):
                self.toggles[one.name] = field
                form.addRow(with_words(field, one.aside) if one.aside else field)
            else:
                if isinstance(field, QSpinBox):
                    self.spins[one.name] = field
                self._add_setting_row(form, field)
        outer.addWidget(box)

    def _plain_field(self, one: Setting) -> QWidget:
        if one.kind is bool:
            assert one.label is not None, f"{one.name} has no label in the settings table"
            tick = QCheckBox(one.label)
            tick.setChecked(one.default)
            return tick
        spin = self._setting_spin(one.name)
        spin.setValue(one.default)
        return spin

    def _special_field(self, name: str) -> QWidget | None:
        """The fields that are not a plain spin or tick box: the device's list, the image size
        (it accepts sizes below the minimum on purpose: the note explains why not), the
        precision goal (a decimal)."""
        if name == "device":
            return DeviceBox()
        if name == "image_size":
            spin = self._setting_spin(name, low=1)
            spin.setSingleStep(8)
            return spin
        if name == "target_percent":
            target = QDoubleSpinBox()
            target.setRange(*TARGET_PERCENT_RANGE)
            target.setDecimals(1)
            target.setSingleStep(0.5)
            target.setPrefix("± ")
            target.setSuffix(SETTING[name].unit)
            return target
        return None

    # -- construction helpers ----------------------------------------------------------------

    def _form(self, box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        form.setVerticalSpacing(4)
        return form

    def _setting_spin(self, name: str, low: int | None = None) -> QSpinBox:
        """The spin box of a whole-number setting: its range and unit from the settings table
        (`core/protocol/settings.py`); `low` lets the box take less than the setting allows,
        where a note then says why not."""
        one = SETTING[name]
        allowed = one.range
        assert allowed is not None, f"{name} is not a whole number with a range"
        return self._spin(name, allowed.low if low is None else low, allowed.high, one.unit)

    def _add_setting_row(self, form: QFormLayout, field: QWidget) -> None:
        """The row of the setting `field` holds (its object name), labelled from the table."""
        name = field.objectName()
        label = SETTING[name].label
        assert label is not None, f"{name} has no label in the settings table"
        self._add_row(form, label, field, name)

    def _spin(self, name: str, low: int, high: int, suffix: str = "") -> QSpinBox:
        box = QSpinBox()
        box.setObjectName(name)
        box.setRange(low, high)
        box.setSuffix(suffix)
        box.setAccelerated(True)
        box.setKeyboardTracking(True)
        return box

    def _add_row(self, form: QFormLayout, label: str, field: QWidget, key: str) -> None:
        form.addRow(label, field)
        note = QLabel()
        note.setObjectName("Note")
        note.setWordWrap(True)
        note.setVisible(False)
        form.addRow("", note)
        self._note_labels[key] = note

    # -- the values -----------------------------------------------------------------------------

    @property
    def device_kind(self) -> str:
        """"CPU" or "GPU": the kind of the chosen device (what the arms' defaults and notes
        depend on)."""
        return "CPU" if (self.device.currentData() or "cpu") == "cpu" else "GPU"

    @property
    def arms(self) -> tuple[str, ...]:
        """The ticked "Also measure" arms, in the order offered."""
        return tuple(n for n, box in self.arm_boxes.items() if box.isChecked())

    @property
    def xla_mode(self) -> XlaMode:
        """The XLA side's mode: the one ticked."""
        return next((mode for mode, button in self.mode_buttons.items() if button.isChecked()),
                    DEFAULT_MODE)

    def choose_mode(self, mode: XlaMode) -> None:
        """Tick `mode` (the default's button for a mode the window does not offer)."""
        self.mode_buttons.get(mode, self.mode_buttons[DEFAULT_MODE]).setChecked(True)

    def _on_mode_button_toggled(self, on: bool) -> None:
        if on:  # the button ticked, not the one it replaced
            self.xla_line.setText(comparison_line(self.xla_mode))

    def values(self) -> dict[str, Any]:
        """Every field's value under its setting's name (the spin and tick boxes from the
        settings table, then those shown their own way)."""
        return {
            **{name: spin.value() for name, spin in self.spins.items()},
            **{name: tick.isChecked() for name, tick in self.toggles.items()},
            "device": self.device.currentData() or "cpu",
            "xla": self.xla_mode.value,
            "target_percent": self.target.value(),
            "arms": self.arms,
            "model": self.model_panel.choice(),
        }
