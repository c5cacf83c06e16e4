"""What a user asks for: the settings of one run or one comparison, with their allowed ranges."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

# With its three unpadded 5x5 convolutions and 2x2 poolings, the article's CNN needs
# ((s - 4) // 2 - 4) // 2 - 4 >= 1, i.e. s >= 36.
MIN_IMAGE_SIZE = 36


class XlaMode(str, enum.Enum):
    """How (and whether) XLA is switched on for a run.

    Everything the app says or sets per mode is in `_XLA_MODE_FACTS` below; how a worker
    switches a mode on and proves it engaged is in `xlagui.core.worker._setup`. Those two
    places (and `OFFERED` in `xlagui.core.arms`, to offer it in the window) are all a new mode
    needs.
    """

    OFF = "off"  # jit_compile=False explicitly, no auto-clustering: the baseline
    JIT = "jit"  # model.compile(jit_compile=True): the recommended way
    AUTOCLUSTER = "autocluster"  # the article's tf.config.optimizer.set_jit(True)
    AUTO = "auto"  # model.compile(jit_compile="auto"): what Keras 3 does when not told

    @property
    def asks_for_xla(self) -> bool:
        return self is not XlaMode.OFF

    @property
    def label(self) -> str:
        """A run's heading: "XLA (jit_compile=True)"."""
        return _XLA_MODE_FACTS[self].label

    @property
    def facts(self) -> ModeFacts:
        """Everything said or set for this mode: `label`, `short` (inside an arm's name: "XLA
        jit_compile"), `words` (a column's subtitle: "jit_compile=True"), `how` (in code words)
        and `tf_xla_flags` (set before TensorFlow loads, "" for none)."""
        return _XLA_MODE_FACTS[self]


@dataclass(frozen=True)
class ModeFacts:
    label: str
    short: str
    words: str
    how: str
    tf_xla_flags: str = ""


_XLA_MODE_FACTS = {
    XlaMode.OFF: ModeFacts(
        "Baseline (XLA off)",
        "XLA off",
        "XLA off (jit_compile=False)",
        "jit_compile=False, no auto-clustering",
    ),
    XlaMode.JIT: ModeFacts(
        "XLA (jit_compile=True)",
        "XLA jit_compile",
        "jit_compile=True",
        "model.compile(jit_compile=True)",
    ),
    XlaMode.AUTOCLUSTER: ModeFacts(
        "XLA (auto-clustering, set_jit)",
        "XLA auto-clustering",
        "auto-clustering (set_jit, the article's way)",
        "tf.config.optimizer.set_jit with TF_XLA_FLAGS=--tf_xla_cpu_global_jit",
        # set_jit(True) alone compiles nothing on CPU; these flags make auto-clustering engage.
        tf_xla_flags="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
    ),
    XlaMode.AUTO: ModeFacts(
        'XLA (Keras\' jit_compile="auto")',
        "Keras auto XLA",
        'jit_compile="auto" (Keras decides)',
        'model.compile(jit_compile="auto"), Keras 3\'s default: XLA on when a GPU is visible, '
        "off on a CPU-only machine (then the arm does not engage)",
    ),
}


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


RANGES: dict[str, Range] = {
    "epochs": Range(1, 1000),
    "batch_size": Range(1, 4096),
    "image_size": Range(MIN_IMAGE_SIZE, 1024),
    "repeats": Range(1, 20),
    "seed": Range(0, 2**31 - 1),
    "holdout_percent": Range(5, 50),
    "budget_seconds": Range(10, 3600),
}
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


# The interleaved measurement's precision goal: stop at a 95% interval of ±target percent.
TARGET_PERCENT_RANGE = (0.5, 50.0)

DEFAULTS: dict[str, Any] = {
    "epochs": 50,
    "batch_size": 64,
    "image_size": 150,
    "repeats": 1,
    "seed": 0,
    "holdout_percent": 20,
    "device": "cpu",
    "xla": "jit",
    "augment": True,
    "budget_seconds": 120,
    "target_percent": 3.0,
    "quick": False,
    "arms": (),
}


def check_device(value: str) -> str:
    """`cpu`, `gpu` (= gpu:0), `gpu:N` or `all` (every GPU through MirroredStrategy)."""
    v = str(value).strip().lower()
    if v in ("cpu", "all"):
        return v
    if v == "gpu":
        return "gpu:0"
    if v.startswith("gpu:") and v[4:].isdigit():
        return v
    raise ConfigError(f"device must be cpu, gpu, gpu:N or all, got {value!r}")


def check_image_size(value: Any) -> int:
    try:
        return RANGES["image_size"].check("image size", value)
    except ConfigError as exc:
        with contextlib.suppress(ValueError, TypeError):
            value = int(str(value), 10)
        if isinstance(value, int) and value < MIN_IMAGE_SIZE:
            raise ConfigError(
                f"image size {value} is too small: the article's CNN has three unpadded 5x5 "
                f"convolutions each followed by 2x2 pooling, so the smallest image it accepts is "
                f"{MIN_IMAGE_SIZE}x{MIN_IMAGE_SIZE}"
            ) from None
        raise exc


def check_batch_fits(batch_size: int, train_count: int) -> None:
    """Refuse a batch larger than the training set: training takes full batches only (a partial
    one would make XLA compile a second program), so such a run would have no step at all."""
    if batch_size > train_count:
        raise ConfigError(
            f"batch size {batch_size} is larger than the training set ({train_count:,} images): "
            f"choose a batch size of at most {train_count:,}"
        )


@dataclass(frozen=True)
class RunConfig:
    """The settings shared by both sides of a comparison (everything but the XLA mode)."""

    epochs: int = DEFAULTS["epochs"]
    batch_size: int = DEFAULTS["batch_size"]
    image_size: int = DEFAULTS["image_size"]
    device: str = DEFAULTS["device"]
    augment: bool = DEFAULTS["augment"]
    seed: int = DEFAULTS["seed"]
    repeats: int = DEFAULTS["repeats"]
    xla: XlaMode = XlaMode.JIT  # the mode of the XLA side; the baseline is always OFF
    holdout_percent: int = DEFAULTS["holdout_percent"]
    # The interleaved speed measurement that starts every comparison: at most `budget_seconds`
    # of measuring, or until the interval is within ±`target_percent`. `quick`: nothing else
    # (no training runs afterwards).
    budget_seconds: int = DEFAULTS["budget_seconds"]
    target_percent: float = DEFAULTS["target_percent"]
    quick: bool = DEFAULTS["quick"]
    # Arms measured besides the baseline and the XLA side (`jit+bf16`, `bf16`, ...; see
    # `xlagui.core.arms`), canonical names in the order asked.
    arms: tuple[str, ...] = DEFAULTS["arms"]
    # The A/A check: an identical second baseline worker measured like an arm
    # (`comparison.interleaved.check`).
    check: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "epochs", RANGES["epochs"].check("epochs", self.epochs))
        object.__setattr__(
            self, "batch_size", RANGES["batch_size"].check("batch size", self.batch_size)
        )
        object.__setattr__(self, "image_size", check_image_size(self.image_size))
        object.__setattr__(self, "repeats", RANGES["repeats"].check("repeats", self.repeats))
        object.__setattr__(self, "seed", RANGES["seed"].check("seed", self.seed))
        object.__setattr__(
            self,
            "holdout_percent",
            RANGES["holdout_percent"].check("held-out percentage", self.holdout_percent),
        )
        object.__setattr__(self, "device", check_device(self.device))
        try:
            object.__setattr__(self, "xla", XlaMode(self.xla))
        except ValueError:
            raise ConfigError(
                f"xla must be one of {', '.join(m.value for m in XlaMode)}, got {self.xla!r}"
            ) from None
        if not isinstance(self.augment, bool):
            raise ConfigError(f"augment must be true or false, got {self.augment!r}")
        if not isinstance(self.quick, bool):
            raise ConfigError(f"quick must be true or false, got {self.quick!r}")
        if not isinstance(self.check, bool):
            raise ConfigError(f"check must be true or false, got {self.check!r}")
        object.__setattr__(
            self, "budget_seconds", RANGES["budget_seconds"].check("budget", self.budget_seconds)
        )
        low, high = TARGET_PERCENT_RANGE
        try:
            target = float(self.target_percent)
        except (TypeError, ValueError):
            raise ConfigError(f"target must be a number, got {self.target_percent!r}") from None
        if isinstance(self.target_percent, bool) or not low <= target <= high:
            raise ConfigError(
                f"target must be between {low:g} and {high:g} percent, got {self.target_percent!r}"
            )
        object.__setattr__(self, "target_percent", target)
        from xlagui.core.arms import parse_arms

        if isinstance(self.arms, str) or not isinstance(self.arms, (list, tuple)):
            raise ConfigError(f"arms must be a list of arm names, got {self.arms!r}")
        object.__setattr__(self, "arms", parse_arms(self.arms))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["xla"] = self.xla.value
        d["arms"] = list(self.arms)
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        return cls(**data)

    def replace(self, **changes: Any) -> RunConfig:
        return dataclasses.replace(self, **changes)
