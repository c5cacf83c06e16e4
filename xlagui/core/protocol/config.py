"""What a user asks for: the settings of one run or one comparison, with their allowed ranges."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlagui.core.protocol.arms import parse_arm, parse_arms, shared_levers

# Re-exported: the modes, ranges and defaults live below `arms`, which needs them; everyone
# else keeps importing them from here.
from xlagui.core.protocol.modes import ModeFacts as ModeFacts
from xlagui.core.protocol.modes import XlaMode as XlaMode
from xlagui.core.protocol.settings import DEFAULTS as DEFAULTS
from xlagui.core.protocol.settings import EXTRA_ARM_BUDGET_SECONDS as EXTRA_ARM_BUDGET_SECONDS
from xlagui.core.protocol.settings import MIN_IMAGE_SIZE as MIN_IMAGE_SIZE
from xlagui.core.protocol.settings import RANGES as RANGES
from xlagui.core.protocol.settings import SETTING as SETTING
from xlagui.core.protocol.settings import SETTINGS as SETTINGS
from xlagui.core.protocol.settings import SMALLEST_IMAGE_SIZE as SMALLEST_IMAGE_SIZE
from xlagui.core.protocol.settings import TARGET_PERCENT_RANGE as TARGET_PERCENT_RANGE
from xlagui.core.protocol.settings import ConfigError as ConfigError
from xlagui.core.protocol.settings import Range as Range
from xlagui.core.protocol.settings import Setting as Setting
from xlagui.core.protocol.settings import default_budget_seconds as default_budget_seconds


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
class ModelChoice:
    """Which model a comparison trains: `source` names the model source (`builtin`, `keras`,
    `python`: the registry `xlagui.core.model.sources`), `name` the model. It travels inside
    `RunConfig` to every worker and into `comparison.json` (`config.model`); a comparison saved
    before models could be chosen has none and is the article's CNN.

    `file` is an absolute path and `sha256` its content's hash when the choice was made (the
    file may change later: the hash says which one was measured). `params` is the parameter
    count once the model was built (None before). `new_head`: a `.keras` whose output does not
    match the class count gets its last layer replaced.

    Only the record's own shape is checked here. Whether a source can build it (a known source,
    a built-in's name, a file it needs) is the registry's check (`sources.check`), which the
    parent runs where a choice is made or reopened and the worker before it builds: the
    protocol sits below the model room and cannot know its sources, and a record from another
    version still opens (it is refused only when it is to be built)."""

    source: str = "builtin"
    name: str = "cnn"
    file: str = ""
    sha256: str = ""
    params: int | None = None
    new_head: bool = False

    def __post_init__(self) -> None:
        if self.params is not None and (isinstance(self.params, bool) or self.params < 0):
            raise ConfigError(f"model params must be a count, got {self.params!r}")

    @property
    def is_article_cnn(self) -> bool:
        return self.source == "builtin" and self.name == "cnn"

    @property
    def min_image_size(self) -> int:
        """The smallest image the model takes: the article's CNN's (three unpadded 5x5
        convolutions), else the smallest any model here takes (`keras.applications`')."""
        return MIN_IMAGE_SIZE if self.is_article_cnn else SMALLEST_IMAGE_SIZE

    @property
    def label(self) -> str:
        """The model in a title or a message: "the article's CNN", "mobilenetv2", "net.keras"
        (a model from a file by its file's name)."""
        if self.is_article_cnn:
            return "the article's CNN"
        return Path(self.file).name if self.file else self.name

    @property
    def argument(self) -> str:
        """What `--model` takes to choose this model again: its file, else its name."""
        return self.file or self.name

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
    # A timed block or epoch during which anything else used more than this percentage of the
    # machine's cores is disturbed: set aside from the estimate (`protocol.interference`).
    busy_percent: int = DEFAULTS["busy_percent"]
    quick: bool = DEFAULTS["quick"]
    # Arms measured besides the baseline and the XLA side (`jit+bf16`, `bf16`, ...; see
    # `xlagui.core.protocol.arms`), canonical names in the order asked.
    arms: tuple[str, ...] = DEFAULTS["arms"]
    # The A/A check: an identical second baseline worker measured like an arm
    # (`comparison.interleaved.check`).
    check: bool = DEFAULTS["check"]
    # After the speed answer, one untimed worker per arm says why: where each step's time goes
    # (the profiler), and whether the numbers stay the same (parity steps). `--no-explain`.
    explain: bool = DEFAULTS["explain"]
    extra: dict[str, Any] = field(default_factory=dict)
    # The model trained (the article's CNN unless chosen; see `ModelChoice`).
    model: ModelChoice = field(default_factory=ModelChoice)
    # Validation batches drop the last partial one (the training batches always do): XLA then
    # compiles the evaluation once, not once more for the last batch's size. The dropped
    # images (fewer than a batch) are not evaluated.
    drop_remainder: bool = DEFAULTS["drop_remainder"]
    # Runtime settings every worker of the comparison takes, the baseline too (lever name ->
    # value: {"threads": "1", "onednn": "off"}), an arm's own values winning
    # (`Arm.effective`); XLA's own levers are the arms'. A sweep's runtime axes set it.
    levers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.model, dict):
            object.__setattr__(self, "model", ModelChoice.from_dict(self.model, "config.model"))
        elif not isinstance(self.model, ModelChoice):
            raise ConfigError(f"model must be a model choice, got {self.model!r}")
        for one in SETTINGS:  # each against its entry: kind and range (the image's: below)
            if one.name != "image_size":
                object.__setattr__(self, one.name, one.check(getattr(self, one.name)))
        object.__setattr__(self, "image_size", check_image_size(self.image_size, self.model))
        object.__setattr__(self, "device", check_device(self.device))
        try:
            object.__setattr__(self, "xla", XlaMode(self.xla))
        except ValueError:
            raise ConfigError(
                f"xla must be one of {', '.join(m.value for m in XlaMode)}, got {self.xla!r}"
            ) from None
        if isinstance(self.arms, str) or not isinstance(self.arms, (list, tuple)):
            raise ConfigError(f"arms must be a list of arm names, got {self.arms!r}")
        object.__setattr__(self, "arms", parse_arms(self.arms))
        object.__setattr__(self, "levers", shared_levers(self.levers))
        for name in self.arms:  # each arm as its worker applies it: a lever its backend takes
            parse_arm(name).effective(self)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["xla"] = self.xla.value
        d["arms"] = list(self.arms)
        d["levers"] = dict(self.levers)
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
