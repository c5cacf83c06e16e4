"""The settings of a comparison, checked as they are typed, with the reason next to the field;
saved and restored between sessions.

The fields are `settings_form.py`'s, the notes' words `present/settings_advice.py`'s: a value the
core would refuse is shown with the core's own explanation, and the run buttons stay off until
it is fixed.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import QWidget

from xlagui.core.measure.transports import TransportOptions
from xlagui.core.protocol import arms as arm_kinds
from xlagui.core.protocol.config import (
    DEFAULTS,
    RANGES,
    SETTING,
    TARGET_PERCENT_RANGE,
    ConfigError,
    ModelChoice,
    RunConfig,
    XlaMode,
    check_image_size,
)
from xlagui.present.levels import Level
from xlagui.present.settings_advice import (
    Note,
    SettingsDraft,
    arm_note,
    left_out_line,
    settings_notes,
)
from xlagui.ui.settings.machine_panel import HostChecker
from xlagui.ui.settings.model_panel import ModelChecker
from xlagui.ui.settings.settings_form import DEFAULT_MODE, SettingsForm
from xlagui.ui.shared.theme import LEVEL_COLORS

SETTINGS_GROUP = "settings"
# The speed budget is saved under its own key, and only once the user has set it.
BUDGET_KEY = "speed_budget"


class SettingsPanel(SettingsForm):
    """Epochs, batch size, image size, device, XLA, the other arms to measure, augmentation,
    repeats, seed.

    Signals:
        changed(): any setting changed (the window re-checks what it can run).
        holdout_changed(int): the held-out percentage changed (the scan depends on it).
        put_back_requested(): the user wants every file left out back in the comparison.
    """

    changed = Signal()
    holdout_changed = Signal(int)
    put_back_requested = Signal()

    def __init__(self, model_checker: ModelChecker | None = None,
                 parent: QWidget | None = None, *, transport_options: TransportOptions = (),
                 host_checker: HostChecker | None = None) -> None:
        super().__init__(model_checker, parent, transport_options=transport_options,
                         host_checker=host_checker)
        self.train_count: int | None = None
        self.num_classes = 2
        self._fixed_size: int | None = None  # a model file's own image size (locks the box)
        self.auto_split = True
        self.notes: dict[str, Note] = {}
        self.restore_problems: list[str] = []  # saved settings refused by the last restore()
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
        self._connect()
        self._show_devices(None)
        self.reset_defaults()

    def _connect(self) -> None:
        """What a change to each field does (the form is built unconnected)."""
        self.put_back_button.clicked.connect(self._on_put_back_button_clicked)
        self.machine_panel.changed.connect(self._on_machine_panel_changed)
        self.model_panel.changed.connect(self._on_model_panel_changed)
        self.model_panel.fixed_size.connect(self._on_model_panel_fixed_size)
        for name, spin in self.spins.items():  # the budget: below
            if name != "budget_seconds":
                spin.valueChanged.connect(self._on_value_changed)
        # After the check above: the held-out percentage is checked before the scan hears of it.
        self.holdout.valueChanged.connect(self.holdout_changed)
        self.budget.valueChanged.connect(self._on_budget_value_changed)
        self.target.valueChanged.connect(self._on_value_changed)
        for name, tick in self.toggles.items():  # the A/A check: below
            if name != "check":
                tick.toggled.connect(self._on_value_changed)
        self.device.currentIndexChanged.connect(self._on_device_changed)
        self.advanced_button.toggled.connect(self._on_advanced_toggled)
        for mode_button in self.mode_buttons.values():
            mode_button.toggled.connect(self._on_mode_toggled)
        for arm_box in self.arm_boxes.values():
            arm_box.toggled.connect(self._on_arm_toggled)
        self.check.toggled.connect(self._on_check_toggled)

    # -- what the window calls ---------------------------------------------------------------

    def reset_defaults(self) -> None:
        for name, spin in self.spins.items():  # the budget follows the arms (below)
            if name != "budget_seconds":
                spin.setValue(DEFAULTS[name])
        self._chosen_budget = None
        self.target.setValue(DEFAULTS["target_percent"])
        for name, tick in self.toggles.items():
            tick.setChecked(DEFAULTS[name])
        self.choose_mode(DEFAULT_MODE)
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
        self.left_out_box.setVisible(count > 0)
        self.left_out_label.setText(left_out_line(count, detail))

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
        """Fill the device list (`None`: the machine has not said yet), keeping the device
        chosen where it can."""
        self.gpu_available = self.device.show_devices(devices, self._preferred_device)
        self._show_arms()
        self.validate()

    def _show_arms(self) -> None:
        """Tick the chosen arms (none until the user chose: the default answers the question
        asked, XLA or not, and an extra arm is the user's choice) and show each arm's hardware
        note for the chosen device."""
        ticked = () if self._chosen_arms is None else self._chosen_arms
        for name, box in self.arm_boxes.items():
            blocked = box.blockSignals(True)
            box.setChecked(name in ticked)
            box.blockSignals(blocked)
        self._show_arm_notes()

    def _show_arm_notes(self) -> None:
        """Each arm's hardware note for the chosen device, each said once: arms that share
        one (bf16 and jit+bf16) have it under the first ticked, else under the first."""
        notes = {name: arm_note(name, self.device_kind) for name in self.arm_boxes}
        said: dict[str, str] = {}  # a note's words → the arm it is under
        for name in sorted(notes, key=lambda n: not self.arm_boxes[n].isChecked()):
            said.setdefault(notes[name], name)
        for name, note in notes.items():
            label = self._arm_notes[name]
            label.setText(note)
            label.setVisible(bool(note) and said[note] == name)

    def config(self) -> RunConfig | None:
        """The settings as a `RunConfig`, or None while any of them is in error."""
        if any(n.severity == Level.ERROR for n in self.notes.values()):
            return None
        try:
            return RunConfig(**self.values())
        except ConfigError:
            return None

    def errors(self) -> list[str]:
        return [n.text for n in self.notes.values() if n.severity == Level.ERROR]

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
        self._show_budget()
        v = self.values()
        self.model_panel.set_context(v["image_size"], v["batch_size"], self.num_classes)
        notes = settings_notes(SettingsDraft(
            epochs=v["epochs"], batch_size=v["batch_size"], image_size=v["image_size"],
            repeats=v["repeats"], device=v["device"], xla_mode=self.xla_mode, arms=self.arms,
            check=v["check"], model=v["model"], train_count=self.train_count,
            auto_split=self.auto_split, budget_chosen=self._chosen_budget is not None,
            gpu_available=self.gpu_available))
        self.notes = notes
        for key, label in self._note_labels.items():
            note = notes.get(key)
            label.setVisible(note is not None)
            if note is not None:
                label.setText(note.text)
                label.setStyleSheet(f"color: {LEVEL_COLORS[note.severity]};")

    def apply(self, config: RunConfig) -> list[str]:
        """Set every field to `config`'s (a reopened comparison's, "Use these settings"); what
        could not be set, in words (a model file gone since, a GPU not on this machine)."""
        problems: list[str] = []
        for name, spin in self.spins.items():  # the image size and the budget: below
            if name not in ("image_size", "budget_seconds"):
                spin.setValue(getattr(config, name))
        for name, tick in self.toggles.items():
            tick.setChecked(getattr(config, name))
        self.target.setValue(config.target_percent)
        self.choose_mode(config.xla)
        self._chosen_arms = tuple(a for a in config.arms if a in self.arm_boxes)
        dropped = [a for a in config.arms if a not in self.arm_boxes]
        if dropped:
            problems.append(f"The arms {', '.join(dropped)} are not offered here.")
        self._show_arms()
        self._preferred_device = config.device
        self.device.select(config.device)
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
        settings.setValue("advanced_open", self.advanced_button.isChecked())
        settings.endGroup()

    def restore(self, settings: QSettings) -> None:
        """Apply saved settings; `restore_problems` says which were refused and why."""
        settings.beginGroup(SETTINGS_GROUP)
        # A settings file is the user's to edit (or to break): a value out of its range is not
        # clamped silently but left at the default, and said.
        self.restore_problems.clear()
        try:
            self._restore_numbers(settings)
            for name, tick in self.toggles.items():
                tick.setChecked(_bool(settings.value(name), DEFAULTS[name]))
            saved_mode = settings.value("xla")
            if saved_mode in self.mode_buttons:  # a mode no longer offered is left at its default
                self.choose_mode(XlaMode(saved_mode))
            self.advanced_button.setChecked(_bool(settings.value("advanced_open"), False))
            device = settings.value("device")
            if isinstance(device, str):
                self._preferred_device = device
                self.device.select(device)
            self._restore_arms(settings)
            self._show_arms()
            self.machine_panel.restore(settings)
            model_problem = self.model_panel.restore(settings)
            if model_problem:
                self.restore_problems.append(model_problem)
        finally:
            settings.endGroup()
        self.validate()

    def _restore_numbers(self, settings: QSettings) -> None:
        """The spin boxes' saved values, each checked against its range."""
        for name, box in self.spins.items():
            key = BUDGET_KEY if name == "budget_seconds" else name
            value = settings.value(key)
            if value is None:
                continue
            label = "speed budget" if key == BUDGET_KEY else SETTING[key].words
            try:
                if key == "image_size":
                    box.setValue(check_image_size(str(value)))
                elif key == BUDGET_KEY:
                    box.setValue(RANGES["budget_seconds"].check(label, str(value)))
                    self._chosen_budget = box.value()
                else:  # each against its entry in the settings table
                    box.setValue(SETTING[key].check(str(value)))
            except ConfigError as exc:
                self.restore_problems.append(f"The saved {label} was ignored: {exc}.")
        target = settings.value("target_percent")
        if target is not None:
            try:
                number = float(str(target))
                if not TARGET_PERCENT_RANGE[0] <= number <= TARGET_PERCENT_RANGE[1]:
                    raise ValueError(f"must be between {TARGET_PERCENT_RANGE[0]:g} and "
                                     f"{TARGET_PERCENT_RANGE[1]:g}, got {target}")
                self.target.setValue(number)
            except ValueError as exc:
                self.restore_problems.append(
                    f"The saved precision goal was ignored: {exc}.")

    def _restore_arms(self, settings: QSettings) -> None:
        """The saved "Also measure" choice ("none": none ticked)."""
        also = settings.value("also_measure")
        if also is None:
            return
        text = ",".join(also) if isinstance(also, list) else str(also)
        try:
            chosen = () if text.strip() == "none" else arm_kinds.parse_arms([text])
        except ConfigError as exc:
            self.restore_problems.append(f"The saved arms to measure were ignored: {exc}.")
        else:
            self._chosen_arms = tuple(n for n in chosen if n in self.arm_boxes)

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

    def _on_mode_toggled(self, on: bool) -> None:
        # The button ticked says it, not the one it replaced: one check per change.
        if on:
            self._on_value_changed()

    def _on_arm_toggled(self, _on: bool) -> None:
        self._chosen_arms = self.arms
        self._show_arm_notes()
        self._on_value_changed()

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
