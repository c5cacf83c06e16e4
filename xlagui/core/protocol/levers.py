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
`modes` and `precision`) and its name added to `LEVERS` (or `register(...)` from a module of
its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import combinations, product

from xlagui.core.protocol import xla_flags
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.settings import ConfigError

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
class OpenValues:
    """How a lever whose values are not a closed list (a thread count, a string of XLA flags)
    answers for a value or a part no table lists: `make` turns a stored value into its entry
    (`ConfigError` for one it refuses, its message saying why), `value_of_part` reads the value
    an arm's name writes as a part (None: not one of this lever's; `ConfigError`: this lever's
    but refused, "t0")."""

    make: Callable[[str], LeverValue]
    value_of_part: Callable[[str], str | None]


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
    # Values beyond the table's (None: the table is every value).
    open: OpenValues | None = None
    # Several parts of it in one arm's name join into one value ("jit+xnnpack+fastmath": the
    # XLA flags); "" refuses a second part ("names two precisions").
    joins: str = ""
    # Levers one of which must be off its baseline's value for this lever's values to mean
    # anything (XLA's flags without XLA, from TensorFlow or from JAX): such an arm is refused,
    # and never offered.
    needs: tuple[str, ...] = ()
    # The Keras backends (`BACKEND`'s values) on which the worker applies this lever's values
    # off its baseline's: an arm on another backend that changes it is refused by name. A new
    # backend lists itself in the levers it takes.
    backends: tuple[str, ...] = ("tf",)

    @property
    def default(self) -> LeverValue:
        """The baseline's value."""
        return self.values[0]

    def of(self, value: str) -> LeverValue:
        """The entry of a stored value (`ValueError` for a value not in the table)."""
        for v in self.values:
            if v.value == value:
                return v
        if self.open is not None:
            return self.open.make(str(value))
        raise ValueError(f"{value!r} is not a value of the {self.name} lever")

    def by_part(self, part: str) -> LeverValue | None:
        """The value an arm's name writes as `part` (None: none of this lever's; `ConfigError`
        for a part of this lever's that it refuses)."""
        found = next((v for v in self.values if v.part and v.part == part), None)
        if found is None and self.open is not None:
            value = self.open.value_of_part(part)
            if value is not None:
                return self.open.make(value)
        return found


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
    # JAX always compiles its step with XLA: its arm is `jax` alone (the backend lever).
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
    backends=("tf", "jax"),  # a Keras dtype policy: every backend's
    colour="precision",
    words="precision",
)


# --- runtime settings: values a count or a string, not a closed list ---------------------------

# The baseline's value of a lever whose baseline sets nothing (TensorFlow's own choice).
DEFAULT = "default"
# The most steps Keras runs per call that an arm may ask for: far above any gain (keras #20451
# saw 2x at 8 to 32) and below an epoch's steps of a real dataset.
MAX_STEPS_PER_EXECUTION = 4096
MAX_THREADS = 1024


def _count(lever: str, text: str, low: int, high: int) -> int:
    """`text` as a whole number within [low, high] (`ConfigError` naming the lever)."""
    if not text.isdigit() or not low <= int(text) <= high:
        raise ConfigError(f"{lever} must be a whole number from {low} to {high}, got {text!r}")
    return int(text)


def _numbered(prefix: str, lever: str, low: int, high: int) -> Callable[[str], str | None]:
    """The value of a part written `<prefix><digits>` ("t4" -> "4"; None for another part;
    `ConfigError` for a number out of [low, high]: "spe1" is the baseline's, no arm)."""
    def value_of_part(part: str) -> str | None:
        rest = part[len(prefix):]
        if not (part.startswith(prefix) and rest.isdigit()):
            return None
        return str(_count(lever, rest, low, high))
    return value_of_part


_ALL_THREADS = LeverValue(DEFAULT)  # TensorFlow's choice: every core
_ONE_STEP = LeverValue("1")  # Keras' default: one step per call
_NO_FLAGS = LeverValue("")  # none of the arm's own (a dump's flags are the recipe's)


def _threads(text: str) -> LeverValue:
    if text == DEFAULT:
        return _ALL_THREADS
    n = _count("threads", text, 1, MAX_THREADS)
    return LeverValue(
        str(n), part=f"t{n}",
        # Before anything runs: TensorFlow refuses it once its runtime has started.
        tf_config=(("threading.set_intra_op_parallelism_threads", (n,)),),
        # No colour or words of their own: any N is a value (the fallback palette's colour,
        # plain words: "threads=2", what it sets).
    )


def _steps_per_execution(text: str) -> LeverValue:
    if text == "1":
        return _ONE_STEP
    n = _count("steps per execution", text, 2, MAX_STEPS_PER_EXECUTION)
    return LeverValue(str(n), part=f"spe{n}", compile=(("steps_per_execution", n),))


def _flags(text: str) -> LeverValue:
    if text == "":
        return _NO_FLAGS
    flags = xla_flags.canonical(text)
    canonical = xla_flags.text(flags)
    named = next((n for n in xla_flags.NAMED if len(flags) == 1 and (n.flag, n.value) == flags[0]),
                 None)
    return LeverValue(
        canonical,
        part="+".join(xla_flags.part(name, value) for name, value in flags),
        combined=bool(named and named.offered),
        env=xla_flags.variables(flags),
        # A named flag reads in its own words; free text in plain words (what it sets).
        words=f"xla_flags.{named.part}" if named else "",
    )


THREADS = Lever(
    name="threads",
    values=(_ALL_THREADS,),
    plural="thread counts",
    colour="threads",
    words="threads",
    open=OpenValues(_threads, _numbered("t", "threads", 1, MAX_THREADS)),
)
# oneDNN's baseline leaves `TF_ENABLE_ONEDNN_OPTS` unset (the variable is the levers', so never
# the shell's: `variables`): TensorFlow's default, on for x86 builds, off for most others. "on"
# sets it to 1 and "off" to 0, so that either says what it says on any build; the baseline
# stays what a user gets who sets nothing, as it was before this lever.
ONEDNN_VARIABLE = "TF_ENABLE_ONEDNN_OPTS"
ONEDNN = Lever(
    name="onednn",
    values=(
        LeverValue(DEFAULT),
        LeverValue("on", part="dnn", env=((ONEDNN_VARIABLE, "1"),), colour="dnn",
                   words="onednn.on"),
        LeverValue("off", part="nodnn", env=((ONEDNN_VARIABLE, "0"),), colour="nodnn",
                   words="onednn.off"),
    ),
    plural="oneDNN settings",
    colour="onednn",
    words="onednn",
)
SPE = Lever(
    name="spe",
    values=(_ONE_STEP,),
    plural="steps-per-execution values",
    backends=("tf", "jax"),  # `model.compile`'s: every backend's
    colour="spe",
    words="spe",
    open=OpenValues(_steps_per_execution,
                    _numbered("spe", "steps per execution", 2, MAX_STEPS_PER_EXECUTION)),
)
XLA_FLAGS = Lever(
    name="xla_flags",
    # The named flags the window offers (`xla_flags.NAMED`, `offered`) are in the table, so
    # that `offered_choices` pairs them with the XLA modes.
    values=(_NO_FLAGS, *(_flags(f"--{n.flag}={n.value}") for n in xla_flags.NAMED if n.offered)),
    plural="XLA flag strings",
    colour="xla_flags",
    words="xla_flags",
    open=OpenValues(_flags, xla_flags.flag_of_part),
    joins=" ",
    needs=("xla", "backend"),
    backends=("tf", "jax"),  # XLA_FLAGS is read by JAX's XLA too
)

# --- the Keras backend: the same model on another framework's path into XLA -------------------

# Keras 3 reads its backend from this variable when it is first imported, once per process: each
# arm's worker is its own process, so an arm can run on another backend.
KERAS_BACKEND_VARIABLE = "KERAS_BACKEND"
TF_BACKEND = "tf"
JAX_BACKEND = "jax"
# What `pip install` adds for a backend, and the module whose presence says it is installed.
BACKEND_REQUIRES = {JAX_BACKEND: ("jax", "pip install 'xlagui[jax]'")}

BACKEND = Lever(
    name="backend",
    values=(
        # Sets nothing: a child's environment never inherits `KERAS_BACKEND` (`variables`), and
        # its KERAS_HOME is xlagui's own folder, whose keras.json is Keras' default: TensorFlow.
        LeverValue(TF_BACKEND),
        # Keras on JAX with its own compiled training step (`jax.jit`, so XLA): the backend
        # and the mode together. `jit_compile=False` would run JAX eagerly, which nobody asks.
        # This lever is after XLA's in the registry, so its `jit_compile` wins.
        LeverValue(JAX_BACKEND, part="jax", offered=True,
                   env=((KERAS_BACKEND_VARIABLE, "jax"),),
                   compile=(("jit_compile", True),), colour="jax", words="backend.jax"),
        # A PyTorch arm would be one more entry here (KERAS_BACKEND=torch, `jit_compile` for
        # torch.compile), the levers it takes listing "torch" in their `backends`, and its
        # stepper in `xlagui.core.worker.backends` (ARCHITECTURE.md).
    ),
    plural="Keras backends",
    colour="backend",
    words="backend",
    backends=("tf", "jax"),
)

# The registry: an arm's name lists its values in this order.
LEVERS: tuple[Lever, ...] = (XLA, PRECISION, THREADS, ONEDNN, SPE, XLA_FLAGS, BACKEND)
# The levers a comparison's settings may not give every worker, the baseline too
# (`RunConfig.levers`): XLA's own and the backend, which make the question. A sweep's
# `--set backend=tf,jax` measures the JAX arm in the cells that name it.
XLA_LEVERS = ("xla", "xla_flags", "backend")


def registered() -> tuple[Lever, ...]:
    """Every lever, in the registry's order (read at each call: a test may register its own)."""
    return LEVERS


def register(one: Lever) -> None:
    """One more lever, in one line, from a module of its own (a plugin's; the shipped levers
    are in `LEVERS`): the registry's last. Everything that reads the registry has it from then
    on: arm names, `--arms`, "Also measure", `--set NAME=…` and a worker's application of it
    (a worker must import the module that registers it too, as it imports this one)."""
    global LEVERS
    if any(x.name == one.name for x in LEVERS):
        raise ValueError(f"a lever is already called {one.name!r}")
    LEVERS = (*LEVERS, one)


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
            if va.combined and vb.combined and satisfied({a.name: va.value, b.name: vb.value}):
                out.append({a.name: va, b.name: vb})
    return out


def satisfied(values: dict[str, str]) -> bool:
    """Whether every lever that `values` (lever name -> value) changes has the lever it needs
    (`Lever.needs`) changed too."""
    for one in registered():
        if one.needs and values.get(one.name, one.default.value) != one.default.value:
            needed = [lever(name) for name in one.needs]
            if all(values.get(n.name, n.default.value) == n.default.value for n in needed):
                return False
    return True


def backend_of(values: dict[str, str]) -> str:
    """The backend of an arm whose levers take `values` (lever name -> value)."""
    return values.get(BACKEND.name, BACKEND.default.value)


def off_backend(values: dict[str, str]) -> list[Lever]:
    """The levers `values` changes that its backend does not take (`Lever.backends`)."""
    backend = backend_of(values)
    return [one for one in registered() if one.name in values and one.name != BACKEND.name
            and values[one.name] != one.default.value and backend not in one.backends]


def missing_backend(values: dict[str, str]) -> tuple[str, str] | None:
    """(the backend, its install line) when an arm of `values` needs a backend this Python
    cannot import; None when it is here (`importlib.util.find_spec`: nothing is imported)."""
    import importlib.util  # lazy: only an arm off TensorFlow asks

    needed = BACKEND_REQUIRES.get(backend_of(values))
    if needed is None:
        return None
    module, install = needed
    return None if importlib.util.find_spec(module) is not None else (module, install)


def variables() -> tuple[str, ...]:
    """Every environment variable a lever's value sets: a child's environment never inherits
    them, so that a value that sets none gets TensorFlow's default, not the shell's."""
    names = (name for one in registered() for value in one.values for name, _ in value.env)
    return tuple(dict.fromkeys(names))
