"""Arms: the training configurations a comparison measures against the baseline.

An arm differs from the baseline (`off`: XLA off, float32) in one documented way, or in a
combination written with `+`:

- `jit`: `model.compile(jit_compile=True)`;
- `autocluster`: the article's `tf.config.optimizer.set_jit`, with the CPU flag;
- `bf16`: the Keras policy `mixed_bfloat16` (the output layer stays float32);
- `fp16`: the Keras policy `mixed_float16`, with Keras' dynamic loss scaling;
- `jit+bf16`, `autocluster+fp16`, ...: one XLA lever and one precision lever together.

The levers and their values are one table (`xlagui.core.protocol.levers`); arms, their names and
the arms offered are built from it.

Asking is not proof: each worker reads back what is in effect after compiling (the policy, the
compute and variable dtypes, the loss scaling, the XLA evidence) and an arm that did not engage
is marked NOT VALID. The hardware notes say when an arm runs on hardware without native support
for its number format, where the interleaved figures then show the cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xlagui.core.protocol.identity import Role, StrEnum
from xlagui.core.protocol.levers import LEVERS, PRECISION, XLA, Lever, LeverValue, offered_choices
from xlagui.core.protocol.levers import parts as lever_parts
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision as Precision  # re-exported: its old home
from xlagui.core.protocol.ranges import ConfigError, default_budget_seconds


@dataclass(frozen=True, init=False)
class Arm:
    """One configuration: a value of every lever (`xlagui.core.protocol.levers.LEVERS`), given
    in the table's order or by the lever's name (`Arm(XlaMode.JIT, Precision.BF16)`,
    `Arm(precision=Precision.BF16)`); a lever not given keeps the baseline's value. `name` is
    canonical (`jit+bf16`)."""

    values: tuple[StrEnum, ...]  # one per lever, in the table's order

    def __init__(self, *values: str, **by_lever: str) -> None:
        if len(values) > len(LEVERS):
            raise TypeError(f"an arm takes at most {len(LEVERS)} values, got {len(values)}")
        chosen: list[str] = [one.default.value for one in LEVERS]
        chosen[: len(values)] = values
        names = [one.name for one in LEVERS]
        for name, value in by_lever.items():
            if name not in names:
                raise TypeError(f"no lever called {name!r}: the levers are {', '.join(names)}")
            chosen[names.index(name)] = value
        typed = tuple(one.kind(value) for one, value in zip(LEVERS, chosen, strict=True))
        object.__setattr__(self, "values", typed)

    def value(self, lever: Lever) -> LeverValue:
        """This arm's value of `lever`, with its entry in the table."""
        return lever.of(self.values[LEVERS.index(lever)])

    @property
    def pulled(self) -> tuple[tuple[Lever, LeverValue], ...]:
        """The levers this arm changes against the baseline, with their values, in order."""
        out = []
        for one, value in zip(LEVERS, self.values, strict=True):
            if value != one.default.value:
                out.append((one, one.of(value)))
        return tuple(out)

    @property
    def xla(self) -> XlaMode:
        return XlaMode(self.values[LEVERS.index(XLA)])

    @property
    def precision(self) -> Precision:
        return Precision(self.values[LEVERS.index(PRECISION)])

    @property
    def name(self) -> str:
        return "+".join(value.part for _lever, value in self.pulled) or XlaMode.OFF.value

    @property
    def is_baseline(self) -> bool:
        return not self.pulled

    def environment(self) -> dict[str, str]:
        """The variables a worker of this arm needs set before TensorFlow loads (every lever's,
        `LeverValue.env`)."""
        env: dict[str, str] = {}
        for one in LEVERS:
            env.update(self.value(one).environment)
        return env

    def setup(self) -> dict[str, dict[str, object]]:
        """What the worker's set-up steps do for this arm: each lever's step (`Lever.setup`)
        with its arguments (`LeverValue.setup`)."""
        return {one.setup: self.value(one).arguments for one in LEVERS}


BASELINE = Arm()
# The variant of the A/A check's second baseline worker (`--check`): measured like an arm (it
# is the baseline again), never ranked, charted or counted as one.
CHECK_VARIANT = Role.CHECK
# The arms the window offers under "Also measure", in the order shown (built from the levers'
# table: `levers.offered_choices`).
OFFERED = tuple(
    Arm(**{name: value.value for name, value in choice.items()}).name
    for choice in offered_choices()
)


def parse_arm(text: str) -> Arm:
    """`jit`, `bf16`, `jit+bf16`, `off`, ... (case and spaces ignored, parts in any order)."""
    raw = str(text).strip().lower().replace(" ", "")
    if raw in ("", XlaMode.OFF, Role.BASELINE):
        return BASELINE
    by_part = {value.part: (one, value) for one, value in lever_parts()}
    chosen: dict[str, str] = {}
    for part in raw.split("+"):
        if part not in by_part:
            raise ConfigError(
                f"unknown arm part {part!r} in {text!r}: arms are built from "
                f"{', '.join(by_part)}, joined with + (for example jit+bf16)"
            )
        one, value = by_part[part]
        if one.name in chosen:
            raise ConfigError(f"arm {text!r} names two {one.plural}; an arm takes at most one")
        chosen[one.name] = value.value
    return Arm(**chosen)


def parse_arms(texts: Iterable[str]) -> tuple[str, ...]:
    """Canonical names of the arms asked for, in order, without repeats or the baseline."""
    out: list[str] = []
    for text in texts:
        for piece in str(text).split(","):
            if not piece.strip():
                continue
            arm = parse_arm(piece)
            if not arm.is_baseline and arm.name not in out:
                out.append(arm.name)
    return tuple(out)


def comparison_arms(xla: XlaMode, extra: Sequence[str]) -> list[tuple[str, Arm]]:
    """(variant, arm) for every worker of a comparison, the baseline first, then the XLA arm
    (the user's main question, variant "xla"), then the other arms (variant = arm name)."""
    xla_arm = Arm(xla if xla is not XlaMode.OFF else XlaMode.JIT)
    out: list[tuple[str, Arm]] = [(Role.BASELINE, BASELINE), (Role.XLA, xla_arm)]
    for name in extra:
        arm = parse_arm(name)
        if arm.is_baseline or arm == xla_arm:
            continue
        out.append((arm.name, arm))
    return out


def default_budget(xla: XlaMode, extra: Sequence[str], check: bool = False) -> int:
    """The default speed budget of a comparison of these arms (`default_budget_seconds`); the
    A/A check's second baseline counts as one more arm."""
    return default_budget_seconds(len(comparison_arms(xla, extra)) - 1 + int(check))


# --- hardware ---------------------------------------------------------------------------------


def native_support(precision: Precision, flags: frozenset[str]) -> bool | None:
    """Whether this CPU computes in `precision` natively (None: unknown, no flags readable)."""
    if precision is Precision.FLOAT32:
        return True
    if not flags:
        return None
    return bool(flags & precision.native_cpu_flags)


class HardwareFit(StrEnum):
    """What is known of how a device runs an arm's number format (`hardware_fit`);
    `xlagui.present.levers.hardware_note` says it."""

    NOTHING = ""  # nothing known against it
    GPU_BF16 = "gpu_bf16"  # bfloat16 on a GPU: native from compute capability 8.0 (Ampere) on
    # float16 on a CPU: TensorFlow has few native float16 CPU kernels, so it is mostly emulated
    CPU_FP16 = "cpu_fp16"
    CPU_FLAGS_UNKNOWN = "cpu_flags_unknown"  # the CPU's flags could not be read
    CPU_NOT_NATIVE = "cpu_not_native"  # the CPU lacks the instructions for the format


def hardware_fit(arm: Arm, device_kind: str, flags: frozenset[str]) -> HardwareFit:
    """What is known of how this device (its kind, and a CPU's feature `flags`) runs `arm`'s
    number format."""
    if arm.precision is Precision.FLOAT32:
        return HardwareFit.NOTHING
    if device_kind.upper() == "GPU":
        return HardwareFit.GPU_BF16 if arm.precision is Precision.BF16 else HardwareFit.NOTHING
    if arm.precision is Precision.FP16:
        # Measured on a Xeon with AVX512-FP16 and AMX: a float16 step of the article's CNN was
        # over 100x slower than float32, since TensorFlow's CPU kernels fall back to emulation.
        return HardwareFit.CPU_FP16
    native = native_support(arm.precision, flags)
    if native is None:
        return HardwareFit.CPU_FLAGS_UNKNOWN
    return HardwareFit.NOTHING if native else HardwareFit.CPU_NOT_NATIVE


def runs_well(name: str, device_kind: str, flags: frozenset[str]) -> bool:
    """Whether an arm is known to run well on a machine with these CPU `flags` (the window
    ticks those by default)."""
    arm = parse_arm(name)
    if arm.xla is not XlaMode.OFF:
        return False  # XLA is the question being asked, not a known good
    if device_kind.upper() == "GPU":
        return arm.precision is Precision.FP16
    if arm.precision is not Precision.BF16:
        # float16 has few native CPU kernels in TensorFlow even where the CPU has AVX512-FP16:
        # offered, measured if asked, never ticked by default.
        return False
    return bool(native_support(arm.precision, flags))


def default_also(device_kind: str, flags: frozenset[str]) -> tuple[str, ...]:
    """The "Also measure" arms ticked by default on a machine with these CPU `flags`."""
    return tuple(n for n in OFFERED if runs_well(n, device_kind, flags))
