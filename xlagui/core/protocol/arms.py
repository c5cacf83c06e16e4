"""Arms: the training configurations a comparison measures against the baseline.

An arm differs from the baseline (`off`: XLA off, float32) in one documented way, or in a
combination written with `+`:

- `jit`: `model.compile(jit_compile=True)`;
- `autocluster`: the article's `tf.config.optimizer.set_jit`, with the CPU flag;
- `bf16`: the Keras policy `mixed_bfloat16` (the output layer stays float32);
- `fp16`: the Keras policy `mixed_float16`, with Keras' dynamic loss scaling;
- `jit+bf16`, `autocluster+fp16`, ...: one XLA lever and one precision lever together.

Asking is not proof: each worker reads back what is in effect after compiling (the policy, the
compute and variable dtypes, the loss scaling, the XLA evidence) and an arm that did not engage
is marked NOT VALID. The hardware notes say when an arm runs on hardware without native support
for its number format, where the interleaved figures then show the cost.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.ranges import ConfigError, default_budget_seconds


class Precision(str, enum.Enum):
    """The Keras dtype policy of an arm."""

    FLOAT32 = "float32"
    BF16 = "mixed_bfloat16"
    FP16 = "mixed_float16"

    @property
    def short(self) -> str:
        return {Precision.FLOAT32: "", Precision.BF16: "bf16", Precision.FP16: "fp16"}[self]

    @property
    def compute_dtype(self) -> str:
        return {
            Precision.FLOAT32: "float32",
            Precision.BF16: "bfloat16",
            Precision.FP16: "float16",
        }[self]


_XLA_PARTS = {mode.value: mode for mode in XlaMode if mode.asks_for_xla}
_PRECISION_PARTS = {"bf16": Precision.BF16, "fp16": Precision.FP16}
# The arms the window offers under "Also measure", in the order shown.
OFFERED = ("autocluster", "bf16", "fp16", "jit+bf16", "jit+fp16")


@dataclass(frozen=True)
class Arm:
    """One configuration: an XLA mode and a dtype policy. `name` is canonical (`jit+bf16`)."""

    xla: XlaMode = XlaMode.OFF
    precision: Precision = Precision.FLOAT32

    @property
    def name(self) -> str:
        parts = [self.xla.value] if self.xla is not XlaMode.OFF else []
        if self.precision is not Precision.FLOAT32:
            parts.append(self.precision.short)
        return "+".join(parts) or "off"

    @property
    def is_baseline(self) -> bool:
        return self.xla is XlaMode.OFF and self.precision is Precision.FLOAT32

    @property
    def label(self) -> str:
        """What a person reads in a column heading or a table."""
        if self.is_baseline:
            return "Baseline (XLA off, float32)"
        parts = [self.xla.facts.short] if self.xla is not XlaMode.OFF else []
        if self.precision is not Precision.FLOAT32:
            parts.append(self.precision.value)
        return " + ".join(parts)

    @property
    def description(self) -> str:
        """How it differs from the baseline, in one line."""
        parts = [self.xla.facts.how] if self.xla is not XlaMode.OFF else []
        if self.precision is Precision.BF16:
            parts.append("keras.mixed_precision policy mixed_bfloat16, output layer float32")
        elif self.precision is Precision.FP16:
            parts.append(
                "keras.mixed_precision policy mixed_float16 with dynamic loss scaling, "
                "output layer float32"
            )
        return "; ".join(parts) or "jit_compile=False, no auto-clustering, float32"


BASELINE = Arm()
# The variant of the A/A check's second baseline worker (`--check`): measured like an arm (it
# is the baseline again), never ranked, charted or counted as one.
CHECK_VARIANT = "check"


def parse_arm(text: str) -> Arm:
    """`jit`, `bf16`, `jit+bf16`, `off`, ... (case and spaces ignored, parts in any order)."""
    raw = str(text).strip().lower().replace(" ", "")
    if raw in ("", "off", "baseline"):
        return BASELINE
    xla = XlaMode.OFF
    precision = Precision.FLOAT32
    for part in raw.split("+"):
        if part in _XLA_PARTS:
            if xla is not XlaMode.OFF:
                raise ConfigError(f"arm {text!r} names two XLA modes; an arm takes at most one")
            xla = _XLA_PARTS[part]
        elif part in _PRECISION_PARTS:
            if precision is not Precision.FLOAT32:
                raise ConfigError(f"arm {text!r} names two precisions; an arm takes at most one")
            precision = _PRECISION_PARTS[part]
        else:
            known = ", ".join([*_XLA_PARTS, *_PRECISION_PARTS])
            raise ConfigError(
                f"unknown arm part {part!r} in {text!r}: arms are built from {known}, "
                "joined with + (for example jit+bf16)"
            )
    return Arm(xla, precision)


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
    out = [("baseline", BASELINE), ("xla", xla_arm)]
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


def arm_of(variant: str, xla_mode: str, precision: str = "float32") -> Arm:
    """The arm of a run entry, from what the entry records."""
    return Arm(XlaMode(xla_mode), Precision(precision or "float32"))


# --- hardware ---------------------------------------------------------------------------------


def native_support(precision: Precision, flags: frozenset[str]) -> bool | None:
    """Whether this CPU computes in `precision` natively (None: unknown, no flags readable)."""
    if precision is Precision.FLOAT32:
        return True
    if not flags:
        return None
    if precision is Precision.BF16:
        return bool(flags & {"avx512_bf16", "amx_bf16"})
    return bool(flags & {"avx512_fp16", "amx_fp16"})


def hardware_note(arm: Arm, device_kind: str, flags: frozenset[str]) -> str:
    """A note when the hardware is known to run `arm` poorly ("" when nothing is known);
    `flags`: the CPU's (`xlagui.core.machine.cpu.cpu_flags`)."""
    if arm.precision is Precision.FLOAT32:
        return ""
    if device_kind.upper() == "GPU":
        if arm.precision is Precision.BF16:
            return "bfloat16 runs natively on GPUs from compute capability 8.0 (Ampere) on"
        return ""
    if arm.precision is Precision.FP16:
        # Measured on a Xeon with AVX512-FP16 and AMX: a float16 step of the article's CNN was
        # over 100x slower than float32, since TensorFlow's CPU kernels fall back to emulation.
        return (
            "TensorFlow has few native float16 kernels on CPUs (even with AVX512-FP16), so "
            "mixed_float16 is mostly emulated there: expect it much slower"
        )
    native = native_support(arm.precision, flags)
    fmt = "bfloat16" if arm.precision is Precision.BF16 else "float16"
    needs = (
        "AVX512-BF16 or AMX-BF16" if arm.precision is Precision.BF16 else "AVX512-FP16 or AMX-FP16"
    )
    if native is None:
        return f"could not read this CPU's flags to tell whether it computes {fmt} natively"
    if not native:
        return (
            f"this CPU has no native {fmt} ({needs}): {fmt} is emulated, so expect it slower; "
            "the interleaved figures show the cost"
        )
    return ""


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


def policy_problems(
    arm: Arm, read_back: Mapping[str, object], *, measured: bool = True
) -> list[str]:
    """Why the read-back shows `arm` did not engage as asked (empty: it did)."""
    problems = []
    policy = str(read_back.get("policy") or "")
    compute = str(read_back.get("compute_dtype") or "")
    if not policy:
        return ["the worker did not report its dtype policy"] if measured else []
    if policy != arm.precision.value:
        problems.append(f"asked for the {arm.precision.value} policy but {policy} was in effect")
    elif compute and compute != arm.precision.compute_dtype:
        problems.append(
            f"the {policy} policy computed in {compute}, not {arm.precision.compute_dtype}"
        )
    if arm.precision is Precision.FP16 and not read_back.get("loss_scale"):
        problems.append("mixed_float16 ran without loss scaling")
    return problems
