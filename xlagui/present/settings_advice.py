"""The settings of a comparison, advised on: the note next to each field (an error that blocks
a run, a warning, or an explanation), the note under an arm the hardware runs poorly, and the
line that says how much data is left out.

Pure functions of the settings as typed and what is known of the dataset and the machine: the
window's settings panel shows them as the user types; the command line can say them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xlagui.core.protocol import arms as arm_kinds
from xlagui.core.protocol.config import (
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    MIN_IMAGE_SIZE,
    ConfigError,
    ModelChoice,
    XlaMode,
    check_batch_fits,
    check_image_size,
)
from xlagui.present.exclusions import left_out
from xlagui.present.levels import Level
from xlagui.present.levers import hardware_note

# Below this many pixels a side, images train fast but leave XLA little to speed up.
SMALL_IMAGE_SIZE = 64


@dataclass
class Note:
    """A remark on one field: an `ERROR` blocks a run, a `WARNING` or an `INFO` only explains."""

    severity: Level
    text: str


@dataclass(frozen=True)
class SettingsDraft:
    """The settings as typed (before they are a `RunConfig`, which refuses what the notes
    explain), and what the advice depends on besides them.

    `train_count`: the training set's size (None: no dataset yet); `auto_split`: the scan
    chose the test set, so the held-out percentage matters; `budget_chosen`: the user set the
    speed budget (else it follows the arms); `gpu_available`: the machine has a GPU.
    """

    epochs: int
    batch_size: int
    image_size: int
    repeats: int
    device: str
    xla_mode: XlaMode
    arms: Sequence[str]
    check: bool
    model: ModelChoice
    train_count: int | None = None
    auto_split: bool = True
    budget_chosen: bool = False
    gpu_available: bool = False


def settings_notes(draft: SettingsDraft) -> dict[str, Note]:
    """The note for each field that has one, by the field's key ("image_size", "batch_size",
    "epochs", "repeats", "holdout_percent", "budget_seconds", "device")."""
    notes: dict[str, Note] = {}
    try:
        check_image_size(draft.image_size, draft.model)
    except ConfigError as exc:
        notes["image_size"] = Note(Level.ERROR, _sentence(exc))
    else:
        if draft.image_size < SMALL_IMAGE_SIZE:
            notes["image_size"] = Note(
                Level.INFO, f"Small images train fast but leave XLA little to speed up "
                f"(the smallest is {MIN_IMAGE_SIZE} px).")
    batch = _batch_note(draft)
    if batch is not None:
        notes["batch_size"] = batch
    if draft.epochs == 1:
        notes["epochs"] = Note(
            Level.WARNING, "With one epoch there is no steady epoch to compare: the first "
            "epoch includes tracing and compiling. Use 2 or more.")
    if draft.repeats > 1:
        notes["repeats"] = Note(
            Level.INFO, f"{draft.repeats} runs per side, interleaved (baseline, XLA, …); the "
            "speed-up interval comes from the repeats.")
    if not draft.auto_split:
        notes["holdout_percent"] = Note(
            Level.INFO, "Not used: the dataset has its own test folder.")
    budget = _budget_note(draft)
    if budget is not None:
        notes["budget_seconds"] = budget
    if draft.device == "cpu" and draft.gpu_available:
        notes["device"] = Note(Level.INFO, "A GPU is available; XLA usually gains more there.")
    return notes


def _batch_note(draft: SettingsDraft) -> Note | None:
    """A batch larger than the training set is refused; else how many full batches an epoch
    takes (a partial one would make XLA compile a second program)."""
    if draft.train_count is None:
        return None
    try:
        check_batch_fits(draft.batch_size, draft.train_count)
    except ConfigError as exc:
        return Note(Level.ERROR, _sentence(exc))
    if not draft.train_count:
        return None
    steps, left = divmod(draft.train_count, draft.batch_size)
    rest = f", {left:,} left out of each shuffled epoch" if left else ""
    return Note(
        Level.INFO, f"{draft.train_count:,} training images: {steps:,} full "
        f"batch{'es' if steps != 1 else ''} per epoch{rest}.")


def _budget_note(draft: SettingsDraft) -> Note | None:
    """Why the budget that follows the arms is longer than XLA's alone."""
    others = [name for name, _arm in arm_kinds.comparison_arms(draft.xla_mode, draft.arms)[2:]]
    if draft.check:
        others.append("the A/A check's twin")
    if draft.budget_chosen or not others:
        return None
    return Note(
        Level.INFO, f"{DEFAULTS['budget_seconds']} s for XLA and {EXTRA_ARM_BUDGET_SECONDS} s "
        f"more for each other arm ({', '.join(others)}): each needs pairs of its own.")


def arm_note(name: str, device_kind: str) -> str:
    """The note under an "Also measure" arm this Python cannot run (its backend is not
    installed: the line that installs it) or the hardware runs poorly ("" when none)."""
    missing = arm_missing(name)
    if missing:
        return missing
    note = hardware_note(arm_kinds.parse_arm(name), device_kind)
    return note[:1].upper() + note[1:] + "." if note else ""


def arm_missing(name: str) -> str:
    """Why an arm cannot run on this computer, with the line that installs what it needs
    ("Needs JAX: pip install 'xlagui[jax]'"); "" when it can."""
    arm = arm_kinds.parse_arm(name)
    missing = arm_kinds.missing_backend_of(arm)
    if missing is None:
        return ""
    return f"Needs {arm_kinds.BACKEND_NAMES.get(arm.backend, missing[0])}: {missing[1]}"


def left_out_line(count: int, detail: str) -> str:
    """How many files the comparison leaves out, and why (`detail`, may be "")."""
    return (f"{left_out(count)}" + (f" ({detail})" if detail else "")
            + ". The dataset folder is not changed.")


def _sentence(exc: ConfigError) -> str:
    """The core's refusal as a sentence: capitalised, with a full stop."""
    return str(exc)[0].upper() + str(exc)[1:] + "."
