"""What a user asks for: the settings of one run or one comparison, with their allowed ranges."""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

# With its three unpadded 5x5 convolutions and 2x2 poolings, the article's CNN needs
# ((s - 4) // 2 - 4) // 2 - 4 >= 1, i.e. s >= 36.
MIN_IMAGE_SIZE = 36
# The smallest image any model takes: keras.applications refuse inputs under 32x32.
SMALLEST_IMAGE_SIZE = 32


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
    brief: str = ""  # in a row label of the limits table: "XLA jit, steady step"
    # How a worker switches the mode on: what `model.compile` gets for `jit_compile`, and
    # whether TensorFlow's auto-clustering (`tf.config.optimizer.set_jit`) is on.
    jit_compile: bool | Literal["auto"] = False
    autoclusters: bool = False


_XLA_MODE_FACTS = {
    XlaMode.OFF: ModeFacts(
        "Baseline (XLA off)",
        "XLA off",
        "XLA off (jit_compile=False)",
        "jit_compile=False, no auto-clustering",
        brief="XLA off",
    ),
    XlaMode.JIT: ModeFacts(
        "XLA (jit_compile=True)",
        "XLA jit_compile",
        "jit_compile=True",
        "model.compile(jit_compile=True)",
        jit_compile=True,
        brief="XLA jit",
    ),
    XlaMode.AUTOCLUSTER: ModeFacts(
        "XLA (auto-clustering, set_jit)",
        "XLA auto-clustering",
        "auto-clustering (set_jit, the article's way)",
        "tf.config.optimizer.set_jit with TF_XLA_FLAGS=--tf_xla_cpu_global_jit",
        # set_jit(True) alone compiles nothing on CPU; these flags make auto-clustering engage.
        tf_xla_flags="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
        autoclusters=True,
        brief="XLA auto-clustering",
    ),
    XlaMode.AUTO: ModeFacts(
        'XLA (Keras\' jit_compile="auto")',
        "Keras auto XLA",
        'jit_compile="auto" (Keras decides)',
        'model.compile(jit_compile="auto"), Keras 3\'s default: XLA on when a GPU is visible, '
        "off on a CPU-only machine (then the arm does not engage)",
        jit_compile="auto",
        brief="Keras auto XLA",
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
    "image_size": Range(SMALLEST_IMAGE_SIZE, 1024),
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


def check_image_size(value: Any, model: ModelChoice | None = None) -> int:
    """`value` as a whole number of pixels within range and at least `model`'s minimum (the
    article's CNN when None); the message names the model's smallest size."""
    model = model or ModelChoice()
    minimum = model.min_image_size
    try:
        number = RANGES["image_size"].check("image size", value)
    except ConfigError as exc:
        with contextlib.suppress(ValueError, TypeError):
            value = int(str(value), 10)
        if not (isinstance(value, int) and value < minimum):
            raise exc
        number = value
    if number < minimum:
        if model.is_article_cnn:
            raise ConfigError(
                f"image size {number} is too small: the article's CNN has three unpadded 5x5 "
                f"convolutions each followed by 2x2 pooling, so the smallest image it accepts is "
                f"{MIN_IMAGE_SIZE}x{MIN_IMAGE_SIZE}"
            ) from None
        raise ConfigError(
            f"image size {number} is too small for {model.label}: the smallest image it accepts "
            f"is {minimum}x{minimum}"
        ) from None
    return number


def check_batch_fits(batch_size: int, train_count: int) -> None:
    """Refuse a batch larger than the training set: training takes full batches only (a partial
    one would make XLA compile a second program), so such a run would have no step at all."""
    if batch_size > train_count:
        raise ConfigError(
            f"batch size {batch_size} is larger than the training set ({train_count:,} images): "
            f"choose a batch size of at most {train_count:,}"
        )


@dataclass(frozen=True)
class BuiltinModel:
    """A model xlagui can build by name (`xlagui.core.models.builtin` builds it)."""

    name: str
    description: str
    min_image_size: int


BUILTIN_MODELS: dict[str, BuiltinModel] = {
    m.name: m
    for m in (
        BuiltinModel("cnn", "the article's CNN: three 5x5 convolutions, two dense layers "
                     "(the default)", MIN_IMAGE_SIZE),
        BuiltinModel("mobilenetv2", "MobileNetV2 (keras.applications, untrained): depthwise "
                     "convolutions", SMALLEST_IMAGE_SIZE),
        BuiltinModel("resnet50", "ResNet50 (keras.applications, untrained): 50 layers of "
                     "convolutions with skips", SMALLEST_IMAGE_SIZE),
        BuiltinModel("efficientnetb0", "EfficientNetB0 (keras.applications, untrained): "
                     "depthwise convolutions, squeeze-excite", SMALLEST_IMAGE_SIZE),
        BuiltinModel("vit", "a small Vision Transformer: 8x8 patches, 4 blocks of "
                     "self-attention, dim 128", SMALLEST_IMAGE_SIZE),
        BuiltinModel("mixer", "a small MLP-Mixer: 8x8 patches, 4 blocks of dense token and "
                     "channel mixing, dim 128", SMALLEST_IMAGE_SIZE),
    )
}
MODEL_SOURCES = ("builtin", "keras", "python")
MODEL_FILE_SUFFIXES = {".keras": "keras", ".py": "python"}


@dataclass(frozen=True)
class ModelChoice:
    """Which model a comparison trains: a built-in by name, a saved `.keras` file, or a Python
    file defining `build_model(input_shape, num_classes)`. It travels inside `RunConfig` to
    every worker and into `comparison.json` (`config.model`); a comparison saved before models
    could be chosen has none and is the article's CNN.

    `file` is an absolute path and `sha256` its content's hash when the choice was made (the
    file may change later: the hash says which one was measured). `params` is the parameter
    count once the model was built (None before). `new_head`: a `.keras` whose output does not
    match the class count gets its last layer replaced."""

    source: str = "builtin"
    name: str = "cnn"
    file: str = ""
    sha256: str = ""
    params: int | None = None
    new_head: bool = False

    def __post_init__(self) -> None:
        if self.source not in MODEL_SOURCES:
            raise ConfigError(
                f"model source must be one of {', '.join(MODEL_SOURCES)}, got {self.source!r}"
            )
        if self.source == "builtin":
            if self.name not in BUILTIN_MODELS:
                raise ConfigError(
                    f"unknown model {self.name!r}: choose one of {', '.join(BUILTIN_MODELS)}, "
                    "or give a .keras or .py file"
                )
            if self.file:
                raise ConfigError(f"the built-in model {self.name} takes no file")
        elif not self.file:
            raise ConfigError(f"a {self.source} model needs its file")
        if self.new_head and self.source != "keras":
            raise ConfigError("--new-head replaces the last layer of a saved .keras model only")
        if self.params is not None and (isinstance(self.params, bool) or self.params < 0):
            raise ConfigError(f"model params must be a count, got {self.params!r}")

    @property
    def is_article_cnn(self) -> bool:
        return self.source == "builtin" and self.name == "cnn"

    @property
    def min_image_size(self) -> int:
        builtin = BUILTIN_MODELS.get(self.name) if self.source == "builtin" else None
        return builtin.min_image_size if builtin else SMALLEST_IMAGE_SIZE

    @property
    def label(self) -> str:
        """The model in a title or a message: "the article's CNN", "mobilenetv2", "net.keras"."""
        if self.is_article_cnn:
            return "the article's CNN"
        return self.name if self.source == "builtin" else Path(self.file).name

    @property
    def argument(self) -> str:
        """What `--model` takes to choose this model again."""
        return self.name if self.source == "builtin" else self.file

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: object, where: str = "model") -> ModelChoice:
        """A saved choice, every field's type checked; the error names the bad field."""
        if not isinstance(data, dict):
            raise ConfigError(f"{where} should be an object, got {data!r}")
        types: dict[str, tuple[type, ...]] = {
            "source": (str,), "name": (str,), "file": (str,), "sha256": (str,),
            "params": (int, type(None)), "new_head": (bool,),
        }  # fmt: skip
        for key, value in data.items():
            allowed = types.get(key)
            if allowed is None:
                raise ConfigError(f"{where}: unknown field {key!r}")
            bad_bool = isinstance(value, bool) and bool not in allowed
            if bad_bool or not isinstance(value, allowed):
                raise ConfigError(f"{where}.{key} should be {allowed[0].__name__}, got {value!r}")
        return cls(**data)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def parse_model(text: str, new_head: bool = False) -> ModelChoice:
    """`--model`'s value: a built-in's name, or a `.keras` or `.py` file (which must exist;
    its hash is taken now). Nothing is imported or loaded here: a file is read only in a worker."""
    value = str(text).strip()
    if value.lower() in BUILTIN_MODELS:
        return ModelChoice(name=value.lower(), new_head=new_head)
    path = Path(value).expanduser()
    source = MODEL_FILE_SUFFIXES.get(path.suffix.lower())
    if source is None:
        raise ConfigError(
            f"--model must be one of {', '.join(BUILTIN_MODELS)}, a .keras file or a .py file, "
            f"got {text!r}"
        )
    if not path.is_file():
        raise ConfigError(f"model file {path} does not exist")
    try:
        sha = file_sha256(path)
    except OSError as exc:
        raise ConfigError(f"cannot read the model file {path}: {exc.strerror or exc}") from None
    return ModelChoice(
        source=source, name=path.stem, file=str(path.resolve()), sha256=sha, new_head=new_head
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
    # The model trained (the article's CNN unless chosen; see `ModelChoice`).
    model: ModelChoice = field(default_factory=ModelChoice)

    def __post_init__(self) -> None:
        if isinstance(self.model, dict):
            object.__setattr__(self, "model", ModelChoice.from_dict(self.model, "config.model"))
        elif not isinstance(self.model, ModelChoice):
            raise ConfigError(f"model must be a model choice, got {self.model!r}")
        object.__setattr__(self, "epochs", RANGES["epochs"].check("epochs", self.epochs))
        object.__setattr__(
            self, "batch_size", RANGES["batch_size"].check("batch size", self.batch_size)
        )
        object.__setattr__(self, "image_size", check_image_size(self.image_size, self.model))
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
