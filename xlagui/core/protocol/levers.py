"""The levers: every axis an arm can change against the baseline, in one table (`LEVERS`).

An arm (`xlagui.core.protocol.arms.Arm`) takes one value of every lever; the baseline takes
each lever's first. A lever declares:

- its `name` (`Arm`'s keyword for it) and the type of its values (`kind`: the enum a record
  stores, `RunEntry.xla_mode`, `RunEntry.precision`);
- its `values`, the baseline's first, each with the `part` an arm's name uses for it ("jit",
  "bf16"; "" for the baseline's), whether the window offers it alone under "Also measure"
  (`offered`) and joined with the other levers' values (`combined`: "jit+bf16");
- how the worker applies a value: `env`, the variables set before TensorFlow loads
  (`TF_XLA_FLAGS`), and `setup`, the arguments of the lever's set-up step in the worker (the
  lever's `setup` names the step: "xla" sets `jit_compile` and auto-clustering, "dtype_policy"
  the Keras policy);
- the keys of its colour (`colour`: `xlagui.ui.theme`) and of its words (`words`:
  `xlagui.present.levers`), for the lever and for each value.

Arm names, `parse_arm`, `--arms` and the arms the window offers (`arms.OFFERED`) are built from
this table. A new lever is a module for its values (like `modes` and `precision`), an entry
here, its words in `xlagui.present.levers` and its set-up step in the worker.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations, product

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision


@dataclass(frozen=True)
class LeverValue:
    """One value of a lever, with everything the app needs of it."""

    value: StrEnum  # as records store it: `XlaMode.JIT`, `Precision.BF16`
    part: str = ""  # in an arm's name ("jit", "bf16"); "" for the baseline's value
    offered: bool = False  # offered alone under "Also measure"
    combined: bool = False  # offered joined with the other levers' combined values
    env: tuple[tuple[str, str], ...] = ()  # variables the worker needs before TensorFlow loads
    setup: tuple[tuple[str, object], ...] = ()  # the arguments of the lever's set-up step
    colour: str = ""  # key of its colour ("" for the baseline's value: the baseline's colour)
    words: str = ""  # key of its words

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def arguments(self) -> dict[str, object]:
        return dict(self.setup)


@dataclass(frozen=True)
class Lever:
    """One axis an arm can change against the baseline (see the module's docstring)."""

    name: str
    kind: type[StrEnum]
    values: tuple[LeverValue, ...]  # the baseline's first
    setup: str  # which set-up step of the worker applies it
    # In a refusal of an arm that names two of its values ("names two XLA modes").
    plural: str
    colour: str  # key of its colour
    words: str  # key of its words (its heading in the settings)

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
        setup=(("jit_compile", facts.jit_compile), ("autoclusters", facts.autoclusters)),
        colour=mode.value if mode.asks_for_xla else "",
        words=f"xla.{mode.value}",
    )


def _precision(precision: Precision, part: str = "") -> LeverValue:
    return LeverValue(
        precision,
        part=part,
        offered=bool(part),
        combined=bool(part),
        setup=(("policy", precision.value),),
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
    setup="xla",
    plural="XLA modes",
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
    setup="dtype_policy",
    plural="precisions",
    colour="precision",
    words="precision",
)
LEVERS: tuple[Lever, ...] = (XLA, PRECISION)


def lever(name: str) -> Lever:
    """The lever called `name` (`KeyError` for none)."""
    for one in LEVERS:
        if one.name == name:
            return one
    raise KeyError(name)


def parts() -> Iterator[tuple[Lever, LeverValue]]:
    """Every value an arm's name can hold, with its lever, in the table's order."""
    for one in LEVERS:
        for value in one.values:
            if value.part:
                yield one, value


def offered_choices() -> list[dict[str, LeverValue]]:
    """What the window offers under "Also measure", in the order shown, each as the values it
    sets by lever name: every value offered alone, then every pair of combined values of two
    levers."""
    out = [{one.name: value} for one, value in parts() if value.offered]
    for a, b in combinations(LEVERS, 2):
        for va, vb in product(a.values, b.values):
            if va.combined and vb.combined:
                out.append({a.name: va, b.name: vb})
    return out
