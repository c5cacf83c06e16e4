"""The levers: every axis an arm can change against the baseline, in one registry (`LEVERS`).

An arm (`xlagui.core.protocol.arms.Arm`) takes one value of every lever; the baseline takes
each lever's first. A lever declares:

- its `name` (`Arm`'s keyword for it, its key in a record's `levers`), the type of its values
  (`kind`: an enum, or plain `str`) and, for the two levers from before records carried
  `levers`, the record's own field for it (`record_field`: `RunEntry.xla_mode`, `.precision`);
- its `values`, the baseline's first, each with the `part` an arm's name uses for it ("jit",
  "bf16"; "" for the baseline's), whether the window offers it alone under "Also measure"
  (`offered`) and joined with the other levers' values (`combined`: "jit+bf16");
- how the worker applies a value, as data of a few generic kinds, so that a lever needs no
  worker code of its own: `env`, the variables set before TensorFlow loads (the parent's
  environment recipe, `xlagui.core.measure.transports.environment`); `tf_config`, calls on
  `tf.config` before the model is built; `policy`, the Keras global dtype policy; `compile`,
  keyword arguments of `model.compile` (`xlagui.core.worker.levers` applies them). A lever that
  must prove it engaged (XLA: read back from the compiled model) has a check registered by its
  name there (`CHECKS`);
- the keys of its colour (`colour`: `xlagui.ui.shared.theme`) and of its words (`words`:
  `xlagui.present.levers`), for the lever and for each value. Both are optional: a value
  without them gets a colour of the theme's fallback palette and plain words built from its
  names and what it sets.

Arm names, `parse_arm`, `--arms`, the arms the window offers (`arms.offered_arms`) and the
records' `levers` are built from this registry; everything reads it through `registered()`.
A new lever is one `Lever(...)` here (a module of its own if its values need facts, like
`modes` and `precision`) and its name added to `LEVERS`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, product

from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision

# A call on `tf.config` the worker makes before the model is built: its dotted name under
# `tf.config` and its arguments (`("optimizer.set_jit", ("autoclustering",))`).
TfConfigCall = tuple[str, tuple[object, ...]]


@dataclass(frozen=True)
class LeverValue:
    """One value of a lever, with everything the app needs of it (see the module's docstring)."""

    value: str  # as records store it: `XlaMode.JIT`, `Precision.BF16`, "2"
    part: str = ""  # in an arm's name ("jit", "bf16"); "" for the baseline's value
    offered: bool = False  # offered alone under "Also measure"
    combined: bool = False  # offered joined with the other levers' combined values
    env: tuple[tuple[str, str], ...] = ()  # variables set before TensorFlow loads
    tf_config: tuple[TfConfigCall, ...] = ()  # `tf.config` calls before the model is built
    policy: str = ""  # the Keras global dtype policy ("" leaves Keras' own)
    compile: tuple[tuple[str, object], ...] = ()  # keyword arguments of `model.compile`
    colour: str = ""  # key of its colour ("" for none of its own: the fallback palette's)
    words: str = ""  # key of its words ("" for none of its own: plain words)

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def compile_arguments(self) -> dict[str, object]:
        return dict(self.compile)


@dataclass(frozen=True)
class Lever:
    """One axis an arm can change against the baseline (see the module's docstring)."""

    name: str
    values: tuple[LeverValue, ...]  # the baseline's first
    # In a refusal of an arm that names two of its values ("names two XLA modes").
    plural: str
    kind: type[str] = str
    record_field: str = ""  # the records' own field for it, from before `levers` ("" for none)
    colour: str = ""  # key of its colour
    words: str = ""  # key of its words (its heading in the settings)

    @property
    def default(self) -> LeverValue:
        """The baseline's value."""
        return self.values[0]

    def of(self, value: str) -> LeverValue:
        """The entry of a stored value (`ValueError` for a value not in the table)."""
        for v in self.values:
            if v.value == value:
                return v
        raise ValueError(f"{value!r} is not a value of the {self.name} lever")

    def by_part(self, part: str) -> LeverValue | None:
        """The value an arm's name writes as `part` (None: none of this lever's)."""
        return next((v for v in self.values if v.part and v.part == part), None)


def _mode(mode: XlaMode, *, offered: bool = False, combined: bool = False) -> LeverValue:
    facts = mode.facts
    return LeverValue(
        mode,
        part=mode.value if mode.asks_for_xla else "",
        offered=offered,
        combined=combined,
        env=(("TF_XLA_FLAGS", facts.tf_xla_flags),) if facts.tf_xla_flags else (),
        # The article's switch, said either way: a baseline must not inherit it. On CPU it only
        # engages with the TF_XLA_FLAGS above.
        tf_config=(("optimizer.set_jit", ("autoclustering" if facts.autoclusters else False,)),),
        # Always passed: Keras 3's default "auto" turns XLA on whenever a GPU is visible.
        compile=(("jit_compile", facts.jit_compile),),
        colour=mode.value if mode.asks_for_xla else "",
        words=f"xla.{mode.value}",
    )


def _precision(precision: Precision, part: str = "") -> LeverValue:
    return LeverValue(
        precision,
        part=part,
        offered=bool(part),
        combined=bool(part),
        # Set before the model is built: a policy applies to the layers built after it.
        policy=precision.value,
        colour=part,
        words=f"precision.{precision.value}",
    )


XLA = Lever(
    name="xla",
    kind=XlaMode,
    values=(
        _mode(XlaMode.OFF),
        # The XLA side's own mode (the user's question): joined with the precisions.
        _mode(XlaMode.JIT, combined=True),
        _mode(XlaMode.AUTOCLUSTER, offered=True),
        _mode(XlaMode.AUTO),
    ),
    plural="XLA modes",
    record_field="xla_mode",
    colour="xla",
    words="xla",
)
PRECISION = Lever(
    name="precision",
    kind=Precision,
    values=(
        _precision(Precision.FLOAT32),
        _precision(Precision.BF16, "bf16"),
        _precision(Precision.FP16, "fp16"),
    ),
    plural="precisions",
    record_field="precision",
    colour="precision",
    words="precision",
)
# The registry: an arm's name lists its values in this order.
LEVERS: tuple[Lever, ...] = (XLA, PRECISION)


def registered() -> tuple[Lever, ...]:
    """Every lever, in the registry's order (read at each call: a test may register its own)."""
    return LEVERS


def lever(name: str) -> Lever:
    """The lever called `name` (`KeyError` for none)."""
    for one in registered():
        if one.name == name:
            return one
    raise KeyError(name)


def parts() -> Iterator[tuple[Lever, LeverValue]]:
    """Every value an arm's name can hold, with its lever, in the registry's order."""
    for one in registered():
        for value in one.values:
            if value.part:
                yield one, value


def offered_choices() -> list[dict[str, LeverValue]]:
    """What the window offers under "Also measure", in the order shown, each as the values it
    sets by lever name: every value offered alone, then every pair of combined values of two
    levers."""
    out = [{one.name: value} for one, value in parts() if value.offered]
    for a, b in combinations(registered(), 2):
        for va, vb in product(a.values, b.values):
            if va.combined and vb.combined:
                out.append({a.name: va, b.name: vb})
    return out


def variables() -> tuple[str, ...]:
    """Every environment variable a lever's value sets: a child's environment never inherits
    them, so that a value that sets none gets TensorFlow's default, not the shell's."""
    names = (name for one in registered() for value in one.values for name, _ in value.env)
    return tuple(dict.fromkeys(names))
