"""A comparison's settings, declared once (`SETTINGS`): each one's name, default, allowed
range, words, help, command-line option and whether a sweep may vary it. `RunConfig` checks its
fields with them, the CLI's options and the window's fields are made from them (`DEFAULTS` and
`RANGES` are views of the table), and the error a setting outside its range raises.

To add a setting: one entry here and a field of `RunConfig` (`config.py`), then its use where
it acts (a worker, the measurement). The CLI's option (`cli/parser.py: add_settings`) and the
window's field (`ui/settings/settings_form.py`) follow from the entry.

Below `config` and `arms`: both check settings against these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# With its three unpadded 5x5 convolutions and 2x2 poolings, the article's CNN needs
# ((s - 4) // 2 - 4) // 2 - 4 >= 1, i.e. s >= 36.
MIN_IMAGE_SIZE = 36
# The smallest image any model takes: keras.applications refuse inputs under 32x32.
SMALLEST_IMAGE_SIZE = 32


class ConfigError(ValueError):
    """A setting outside its allowed range; the message names the range."""


@dataclass(frozen=True)
class Range:
    low: int
    high: int

    def check(self, name: str, value: Any) -> int:
        number: int
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                number = int(str(value), 10)
            except ValueError:
                raise ConfigError(f"{name} must be a whole number, got {value!r}") from None
        else:
            number = value
        if not self.low <= number <= self.high:
            raise ConfigError(f"{name} must be between {self.low} and {self.high}, got {number}")
        return number


def _busy_percent_default() -> int:
    """The disturbed threshold's default: 10, or `XLAGUI_BUSY_PERCENT` (a whole percentage; the
    test suite sets 100, the rule off, where a test is not about it: two tests side by side
    are each other's busy neighbour)."""
    text = os.environ.get("XLAGUI_BUSY_PERCENT", "")
    return Range(1, 100).check("XLAGUI_BUSY_PERCENT", text) if text else 10


# The interleaved measurement's precision goal: stop at a 95% interval of ±target percent.
TARGET_PERCENT_RANGE = (0.5, 50.0)


@dataclass(frozen=True)
class Setting:
    """One setting of a comparison (a field of `RunConfig`).

    `words` name it in messages ("batch size"); `label` and `unit` in the window's field (a
    tick box's text for a true-or-false one; None: the window shows it its own way, or not at
    all); `help` is the command line's (the
    window's fields have tooltips of their own). `flag`: `xlagui compare`'s option ("": none);
    a true-or-false setting whose default is true takes `--no-...`. `sweep`: a sweep may vary
    it (an axis of its own). `low`/`high`: the allowed range of a number."""

    name: str
    default: Any
    words: str
    help: str
    flag: str = ""
    label: str | None = None
    unit: str = ""
    low: float | None = None
    high: float | None = None
    sweep: bool = False
    plural: str = ""  # a sweep's words for several values ("batch sizes")
    example: str = ""  # a sweep's values, as typed ("16,128")
    key: str = ""  # its short name in a sweep cell's key ("b": "b16"; "": the name and "-")
    cell: str = ""  # one value in a sweep cell's title ("batch {}": "batch 16"; "": "name 16")
    # The window's group that shows its field ("training", "measurement"; "": none, or its own
    # place), in the table's order; `aside`: words beside a true-or-false one's tick box.
    group: str = ""
    aside: str = ""

    @property
    def kind(self) -> type:
        """What a value is: bool, int, float or str (the default's type; a tuple: a list)."""
        return type(self.default)

    @property
    def range(self) -> Range | None:
        """The allowed range of a whole number (None: not a whole number, or no range)."""
        if self.kind is not int or self.low is None or self.high is None:
            return None
        return Range(int(self.low), int(self.high))

    @property
    def dest(self) -> str:
        """The attribute argparse gives the flag's value."""
        return self.flag.lstrip("-").removeprefix("no-").replace("-", "_") if self.flag else ""

    def check(self, value: Any) -> Any:
        """`value` as this setting's kind, within its range, or a `ConfigError` naming it."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{self.name} must be true or false, got {value!r}")
            return value
        if self.range is not None:
            return self.range.check(self.words, value)
        if self.kind is float and self.low is not None and self.high is not None:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise ConfigError(f"{self.words} must be a number, got {value!r}") from None
            if isinstance(value, bool) or not self.low <= number <= self.high:
                unit = " percent" if self.unit.strip() == "%" else self.unit
                raise ConfigError(f"{self.words} must be between {self.low:g} and "
                                  f"{self.high:g}{unit}, got {value!r}")
            return number
        return value


SETTINGS: tuple[Setting, ...] = (
    Setting("epochs", 50, "epochs", "epochs of each training run", "--epochs",
            "Epochs", low=1, high=1000, group="training"),
    Setting("batch_size", 64, "batch size", "batch size", "--batch", "Batch size",
            low=1, high=4096, sweep=True, plural="batch sizes", example="16,128", key="b",
            cell="batch {}", group="training"),
    Setting("image_size", 150, "image size", "the side, in pixels, every image is resized to",
            "--image-size", "Image size", " px", low=SMALLEST_IMAGE_SIZE, high=1024,
            sweep=True, plural="image sizes", example="64,150", key="px", cell="{} px",
            group="training"),
    Setting("device", "cpu", "device", "cpu, gpu, gpu:N or all", "--device", "Device",
            group="training"),
    Setting("augment", True, "augment", "train without augmentation", "--no-augment",
            "Augment", group="training", aside="horizontal flip, zoom 0.2, shear 0.2"),
    Setting("drop_remainder", False, "drop_remainder", "drop the last partial validation "
            "batch (XLA then compiles the evaluation once, not again for that batch's size)",
            "--drop-remainder", "Drop the last partial batch", group="training"),
    # The XLA side's mode (`XlaMode`); its option and choices are the XLA lever's words.
    Setting("xla", "jit", "xla", "how the XLA side turns XLA on", "--xla"),
    # The interleaved speed measurement that starts every comparison: at most this long, or
    # until the interval is within ± `target_percent`. Its option's default is planned from
    # the arms (`arms.default_budget`).
    Setting("budget_seconds", 120, "budget", "seconds of interleaved measuring at most, for this "
            "comparison (a sweep's --budget is for its whole grid)",
            "--budget", "Speed budget", " s", low=10, high=3600, group="measurement"),
    Setting("target_percent", 3.0, "target", "stop measuring once the 95%% interval is "
            "within ± this percent", "--target", "Precision goal", " %",
            low=TARGET_PERCENT_RANGE[0], high=TARGET_PERCENT_RANGE[1], group="measurement"),
    # Calibrated on this project's 2-core machine (BENCHMARKS.md, "What a busy machine looks
    # like", run twice): quiet, anything else used 0.5–0.7% of the cores in the median block,
    # at most 9.5% in any block; beside one busy core, 48.8–49.2% in the median block. 10 sits
    # between them: a quiet block's rare spike sets one round aside, which costs a round; a
    # neighbour missed would move the answer.
    Setting("busy_percent", _busy_percent_default(), "busy percentage",
            "a timed block or epoch during which anything else (other programs, the "
            "hypervisor's steal) used more than this percentage of the machine's cores is "
            "disturbed: set aside from the estimate, and an answer with too few undisturbed "
            "rounds is marked as measured on a busy machine", "--busy-percent", "Busy above",
            " %", low=1, high=100, group="measurement"),
    Setting("repeats", 1, "repeats", "training runs of each side, repeat r with seed + r - 1",
            "--repeats", "Repeats", low=1, high=20, group="measurement"),
    Setting("seed", 0, "seed", "the seed of training (weights, shuffling, augmentation) and "
            "of the validation hold-out", "--seed", "Seed", low=0, high=2**31 - 1,
            group="measurement"),
    Setting("holdout_percent", 20, "held-out percentage",
            "percent held out for validation when there is no test folder", "--holdout",
            "Held out", " %", low=5, high=50, group="measurement"),
    Setting("quick", False, "quick", "measure speed only (interleaved), without the training "
            "runs", "--quick"),
    Setting("check", False, "check", "also measure the baseline against an identical second "
            "baseline worker, interleaved like an arm (an A/A check of the instrument: its "
            "ratio should be 1.00)", "--check", "Check the measurement (A/A)",
            group="measurement"),
    Setting("explain", True, "explain", "skip the why: the untimed profile of each arm (where "
            "each step's time goes) and its parity steps, after the speed answer (default: "
            "explained)", "--no-explain", "Explain why", group="measurement",
            aside="untimed, after the answer"),
)
SETTING = {one.name: one for one in SETTINGS}

# Views of the table: each number's range, and every default (plus the arms', which are a
# list: `RunConfig.arms`).
RANGES: dict[str, Range] = {
    one.name: one.range for one in SETTINGS if one.range is not None
}
DEFAULTS: dict[str, Any] = {one.name: one.default for one in SETTINGS} | {"arms": ()}


def register(one: Setting) -> None:
    """One more setting, in one line: its entry joins the table and its views (`SETTING`,
    `DEFAULTS`, `RANGES`). What is made from the table as a module loads (the command line's
    options, the window's fields, a sweep's axes) has it when it is registered before that
    module is imported; `RunConfig` needs a field of the same name (`config.py`)."""
    global SETTINGS
    if one.name in SETTING:
        raise ValueError(f"a setting is already called {one.name!r}")
    SETTINGS = (*SETTINGS, one)
    SETTING[one.name] = one
    DEFAULTS[one.name] = one.default
    if one.range is not None:
        RANGES[one.name] = one.range


# Each arm measured besides the first adds this much to the default speed budget: every arm
# needs pairs of its own, and the rounds are shared. At 150 px on 2 cores, with jit and bf16,
# 120 s in all left the bf16 interval at ±5–9%; 210 s gave ±3.0–3.5% in 250 s of wall time;
# 180 s keeps the whole comparison near 4 minutes (BENCHMARKS.md, "Arms on this machine").
EXTRA_ARM_BUDGET_SECONDS = 60


def default_budget_seconds(measured_arms: int) -> int:
    """The speed budget a comparison gets unless the user sets one: `DEFAULTS["budget_seconds"]`
    for the XLA side alone, plus `EXTRA_ARM_BUDGET_SECONDS` for every further arm."""
    extra = max(0, measured_arms - 1) * EXTRA_ARM_BUDGET_SECONDS
    return min(RANGES["budget_seconds"].high, int(DEFAULTS["budget_seconds"]) + extra)


