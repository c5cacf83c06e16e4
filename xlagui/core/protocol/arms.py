"""Arms: the training configurations a comparison measures against the baseline.

An arm differs from the baseline (`off`: XLA off, float32) in one documented way, or in a
combination written with `+`:

- `jit`: `model.compile(jit_compile=True)`;
- `autocluster`: the article's `tf.config.optimizer.set_jit`, with the CPU flag;
- `bf16`: the Keras policy `mixed_bfloat16` (the output layer stays float32);
- `fp16`: the Keras policy `mixed_float16`, with Keras' dynamic loss scaling;
- `jit+bf16`, `autocluster+fp16`, ...: one XLA lever and one precision lever together.

The levers and their values are one registry (`xlagui.core.protocol.levers`); arms, their names,
the arms offered and what a record keeps of an arm (`record_fields`, `record_arm`) are built
from it.

Asking is not proof: each worker reads back what is in effect after compiling (the policy, the
compute and variable dtypes, the loss scaling, the XLA evidence) and an arm that did not engage
is marked NOT VALID. The hardware notes say when an arm runs on hardware without native support
for its number format, where the interleaved figures then show the cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from xlagui.core.protocol.identity import Role, StrEnum
from xlagui.core.protocol.levers import (
    BACKEND,
    PRECISION,
    TF_BACKEND,
    XLA,
    XLA_LEVERS,
    Lever,
    LeverValue,
    backend_of,
    lever,
    missing_backend,
    off_backend,
    offered_choices,
    satisfied,
)
from xlagui.core.protocol.levers import parts as lever_parts
from xlagui.core.protocol.levers import registered as registered_levers
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision as Precision  # re-exported: its old home
from xlagui.core.protocol.settings import ConfigError, default_budget_seconds

# A backend's name in a refusal ("an arm on JAX cannot change ...").
BACKEND_NAMES = {"tf": "TensorFlow", "jax": "JAX"}


@dataclass(frozen=True, init=False)
class Arm:
    """One configuration: a value of every lever (`xlagui.core.protocol.levers.registered`),
    given in the registry's order or by the lever's name (`Arm(XlaMode.JIT, Precision.BF16)`,
    `Arm(precision=Precision.BF16)`); a lever not given keeps the baseline's value. `name` is
    canonical (`jit+bf16`). An arm is what it changes (`changes`), so the baseline is the same
    arm whatever levers are registered."""

    # (lever name, value) of each lever it changes against the baseline, in the registry's order
    changes: tuple[tuple[str, str], ...]

    def __init__(self, *values: str, **by_lever: str) -> None:
        table = registered_levers()
        if len(values) > len(table):
            raise TypeError(f"an arm takes at most {len(table)} values, got {len(values)}")
        chosen = {one.name: value for one, value in zip(table, values, strict=False)}
        names = [one.name for one in table]
        for name, value in by_lever.items():
            if name not in names:
                raise TypeError(f"no lever called {name!r}: the levers are {', '.join(names)}")
            chosen[name] = value
        changes = []
        for one in table:
            if one.name in chosen:
                typed = one.of(chosen[one.name]).value  # ValueError for a value not in it
                if typed != one.default.value:
                    changes.append((one.name, typed))
        if not satisfied(dict(changes)):
            needs = [f"{one.name} needs {' or '.join(one.needs)}" for one in table
                     if one.needs and one.name in dict(changes)]
            raise ConfigError(f"an arm with {', '.join(needs)}: join it with an XLA mode "
                              "(for example jit+xla_cpu_use_xnnpack=false)")
        refused = off_backend(dict(changes))
        if refused:
            backend = backend_of(dict(changes))
            takes = [one.plural for one in table
                     if one.name != BACKEND.name and backend in one.backends]
            raise ConfigError(
                f"an arm on {BACKEND_NAMES.get(backend, backend)} cannot change "
                f"{' or '.join(one.plural for one in refused)}: "
                f"{'they are' if len(refused) > 1 else 'it is'} TensorFlow's (on "
                f"{BACKEND_NAMES.get(backend, backend)} an arm may change "
                f"{', '.join(takes) or 'nothing else'})")
        object.__setattr__(self, "changes", tuple(changes))

    def value(self, lever: Lever) -> LeverValue:
        """This arm's value of `lever`, with its entry in the table."""
        return lever.of(dict(self.changes).get(lever.name, lever.default.value))

    @property
    def values(self) -> tuple[str, ...]:
        """Its value of every lever, in the registry's order."""
        return tuple(self.value(one).value for one in registered_levers())

    @property
    def levers(self) -> dict[str, str]:
        """The levers it changes, by name, with their values: what a record keeps
        (`record_fields`)."""
        return {name: str(value) for name, value in self.changes}

    @property
    def pulled(self) -> tuple[tuple[Lever, LeverValue], ...]:
        """The levers this arm changes against the baseline, with their values, in order."""
        return tuple((one, one.of(value)) for one, value in
                     ((lever(name), value) for name, value in self.changes))

    @property
    def xla(self) -> XlaMode:
        return XlaMode(self.value(XLA).value)

    @property
    def precision(self) -> Precision:
        return Precision(self.value(PRECISION).value)

    @property
    def backend(self) -> str:
        """Its Keras backend (`levers.BACKEND`'s value: "tf", "jax")."""
        return self.value(BACKEND).value

    @property
    def compiles_with_xla(self) -> bool:
        """Whether its training step is compiled by XLA: an XLA mode on TensorFlow, or a
        backend that always compiles (JAX's `jax.jit`)."""
        return self.xla.asks_for_xla or self.backend != TF_BACKEND

    @property
    def name(self) -> str:
        return "+".join(value.part for _lever, value in self.pulled) or XlaMode.OFF.value

    @property
    def is_baseline(self) -> bool:
        return not self.changes

    def every_value(self) -> tuple[tuple[Lever, LeverValue], ...]:
        """Every lever with this arm's value of it (the baseline's where it changes none), in
        the registry's order: what a worker applies."""
        return tuple((one, self.value(one)) for one in registered_levers())

    def environment(self) -> dict[str, str]:
        """The variables a worker of this arm needs set before TensorFlow loads (every lever's,
        `LeverValue.env`); two levers that set one variable (a list of flags) are joined."""
        env: dict[str, str] = {}
        for _lever, value in self.every_value():
            for name, text in value.env:
                env[name] = f"{env[name]} {text}" if env.get(name) else text
        return env

    def compile_arguments(self) -> dict[str, Any]:
        """The keyword arguments of `model.compile` its levers ask for (`LeverValue.compile`)."""
        out: dict[str, Any] = {}
        for _lever, value in self.every_value():
            out.update(value.compile)
        return out

    def effective(self, config: HasLevers) -> Arm:
        """The arm a worker of this arm applies in a comparison of `config`: the comparison's
        settings for every worker (`RunConfig.levers`, the baseline's too), this arm's own
        values winning. Its `every_value()` is every lever's value the worker applies, its
        `levers` those off the baseline's; records keep `self` (what was compared)."""
        return Arm(**{**dict(config.levers), **self.levers})


class HasLevers(Protocol):
    """What `Arm.effective` reads of a comparison's settings (`RunConfig`, which sits above
    this module): the levers every worker takes."""

    @property
    def levers(self) -> Mapping[str, str]: ...


def shared_levers(given: Mapping[str, str]) -> dict[str, str]:
    """A comparison's levers for every worker (`RunConfig.levers`: lever name -> value, a value
    as records store it or as an arm's name writes it, "8" or "spe8"), checked and canonical,
    in the registry's order; `ConfigError` names a lever that is not one, one of XLA's own
    (they make the question), or a value it refuses."""
    if not isinstance(given, Mapping):
        raise ConfigError(f"levers must map lever names to values, got {given!r}")
    names = [one.name for one in registered_levers()]
    out: dict[str, str] = {}
    for name, text in given.items():
        if not isinstance(name, str) or not isinstance(text, str):
            raise ConfigError(f"levers must map lever names to values, got {name!r}: {text!r}")
        if name in XLA_LEVERS:
            raise ConfigError(f"lever {name} is XLA's own: give it to an arm, not to every worker")
        if name not in names:
            raise ConfigError(f"no lever called {name!r}: the levers are "
                              f"{', '.join(n for n in names if n not in XLA_LEVERS)}")
        one = lever(name)
        try:
            value = one.of(text)
        except ValueError as exc:
            found = one.by_part(text.strip().lower())
            if found is None:
                raise ConfigError(str(exc)) from None
            value = found
        out[name] = str(value.value)
    return {name: out[name] for name in names if name in out}


def missing_backend_of(arm: Arm) -> tuple[str, str] | None:
    """(the module, its install line) when `arm` runs on a Keras backend this Python cannot
    import (`levers.missing_backend`: nothing is imported); None when it can run here."""
    return missing_backend(dict(arm.changes))


def check_backends_here(config: HasLevers, arms: Iterable[str]) -> None:
    """`ConfigError` naming the first of `arms` (canonical names) whose backend this Python
    lacks, with the line that installs it: asked of a comparison that runs on this computer
    before anything starts (a host's Python answers for itself, in its worker)."""
    for name in arms:
        arm = parse_arm(name).effective(config)
        missing = missing_backend_of(arm)
        if missing is not None:
            module, install = missing
            raise ConfigError(f"the {name} arm needs {BACKEND_NAMES.get(arm.backend, module)}, "
                              f"which this Python does not have: {install}")


BASELINE = Arm()
# The variant of the A/A check's second baseline worker (`--check`): measured like an arm (it
# is the baseline again), never ranked, charted or counted as one.
CHECK_VARIANT = Role.CHECK


def offered_arms() -> tuple[str, ...]:
    """The arms the window offers under "Also measure", in the order shown (built from the
    levers' registry: `levers.offered_choices`)."""
    return tuple(
        Arm(**{name: value.value for name, value in choice.items()}).name
        for choice in offered_choices()
    )


# --- records ----------------------------------------------------------------------------------


def record_fields(arm: Arm) -> dict[str, Any]:
    """`arm` as a record (`RunEntry`, `RunSpec`, `StartedEvent`) keeps it: the levers it
    changes in `levers`, and each lever that has a field of its own (`Lever.record_field`:
    `xla_mode`, `precision`, what readers from before read) in that field too."""
    out: dict[str, Any] = {one.record_field: arm.value(one).value
                           for one in registered_levers() if one.record_field}
    out["levers"] = arm.levers
    return out


def record_arm(fields: Mapping[str, Any], levers: Mapping[str, str] | None) -> Arm:
    """The arm a record holds (`fields`: the record's fields, `levers` its `levers`, None in a
    record from before).

    `levers` names every lever the arm changes. A lever with a field of its own
    (`Lever.record_field`) is read there when the field says other than the baseline's value:
    records from before have only the field, and a caller that changes the field
    (`dataclasses.replace(entry, precision=...)`) is heard."""
    chosen = dict(levers or {})
    for one in registered_levers():
        given = fields.get(one.record_field) if one.record_field else None
        if given and given != one.default.value:
            chosen[one.name] = given
    try:
        return Arm(**chosen)
    except TypeError as exc:  # a lever this version does not have
        raise ValueError(f"levers: {exc}") from None


def parse_arm(text: str) -> Arm:
    """`jit`, `bf16`, `jit+bf16`, `off`, ... (case and spaces ignored, parts in any order)."""
    raw = str(text).strip().lower().replace(" ", "")
    if raw in ("", XlaMode.OFF, Role.BASELINE):
        return BASELINE
    chosen: dict[str, str] = {}
    for part in raw.split("+"):
        # Each lever is asked (`Lever.by_part`): one whose values are not a closed list can
        # answer for a part no table lists.
        found = next(((one, value) for one in registered_levers()
                      if (value := one.by_part(part)) is not None), None)
        if found is None:
            raise ConfigError(
                f"unknown arm part {part!r} in {text!r}: arms are built from "
                f"{', '.join(value.part for _one, value in lever_parts())}, joined with + "
                "(for example jit+bf16)"
            )
        one, value = found
        if one.name in chosen and one.joins:
            chosen[one.name] = f"{chosen[one.name]}{one.joins}{value.value}"
        elif one.name in chosen:
            raise ConfigError(f"arm {text!r} names two {one.plural}; an arm takes at most one")
        else:
            chosen[one.name] = value.value
    for one in registered_levers():
        if one.needs and one.name in chosen and not satisfied(chosen):
            needed = [lever(name) for name in one.needs]
            raise ConfigError(
                f"arm {text!r} changes {one.plural}, which need one of the "
                f"{' or '.join(n.plural for n in needed)}: join it with one (for example "
                f"{needed[0].values[1].part}+{raw})"
            )
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
