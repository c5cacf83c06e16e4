"""What the app says of each lever's values (`xlagui.core.protocol.levers`) and of an arm made
of them: a run's heading, an arm's label and what it changes, a column's subtitle, and what is
known of how the hardware runs it.

Keyed by the values' word keys (`LeverValue.words`): the core's table says what a value is and
does, this one how it reads. A lever that brings no words of its own (its values' `words` left
"") reads in plain words built from its name, its values and what they set (`plain_words`), so
a new lever needs no row here; a value whose key has no row fails `tests/present/test_levers.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.core.machine import cpu as machine_cpu
from xlagui.core.protocol import xla_flags
from xlagui.core.protocol.arms import Arm, HardwareFit, hardware_fit
from xlagui.core.protocol.levers import (
    XLA,
    XLA_FLAGS,
    Lever,
    LeverValue,
    offered_choices,
    registered,
)
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision


@dataclass(frozen=True)
class ValueWords:
    """The words of one lever value ("" where a value has none of that kind)."""

    label: str = ""  # a run's heading: "XLA (jit_compile=True)"
    short: str = ""  # inside an arm's label: "XLA jit_compile", "mixed_bfloat16"
    words: str = ""  # a column's subtitle: "jit_compile=True"
    how: str = ""  # what it does, in code words
    brief: str = ""  # in a row label of the limits table: "XLA jit, steady step"
    # The settings' choice of the XLA side's mode: the radio button and its tooltip.
    choice: str = ""
    tip: str = ""


VALUE_WORDS: dict[str, ValueWords] = {
    "xla.off": ValueWords(
        "Baseline (XLA off)",
        "XLA off",
        "XLA off (jit_compile=False)",
        "jit_compile=False, no auto-clustering",
        brief="XLA off",
    ),
    "xla.jit": ValueWords(
        "XLA (jit_compile=True)",
        "XLA jit_compile",
        "jit_compile=True",
        "model.compile(jit_compile=True)",
        brief="XLA jit",
        choice="jit_compile=True (recommended)",
        tip="model.compile(jit_compile=True): XLA compiles the whole training step, on CPU and "
        "GPU",
    ),
    "xla.autocluster": ValueWords(
        "XLA (auto-clustering, set_jit)",
        "XLA auto-clustering",
        "auto-clustering (set_jit, the article's way)",
        "tf.config.optimizer.set_jit with TF_XLA_FLAGS=--tf_xla_cpu_global_jit",
        brief="XLA auto-clustering",
        choice="Auto-clustering (the article's set_jit)",
        tip="tf.config.optimizer.set_jit(True): XLA compiles the clusters it chooses; on CPU it "
        "needs extra flags, which xlagui sets",
    ),
    "xla.auto": ValueWords(
        'XLA (Keras\' jit_compile="auto")',
        "Keras auto XLA",
        'jit_compile="auto" (Keras decides)',
        'model.compile(jit_compile="auto"), Keras 3\'s default: XLA on when a GPU is visible, '
        "off on a CPU-only machine (then the arm does not engage)",
        brief="Keras auto XLA",
    ),
    "precision.float32": ValueWords(short="float32", how="float32"),
    "precision.mixed_bfloat16": ValueWords(
        short="mixed_bfloat16",
        how="keras.mixed_precision policy mixed_bfloat16, output layer float32",
    ),
    "precision.mixed_float16": ValueWords(
        short="mixed_float16",
        how="keras.mixed_precision policy mixed_float16 with dynamic loss scaling, "
        "output layer float32",
    ),
    "onednn.on": ValueWords(
        short="oneDNN on", how="TF_ENABLE_ONEDNN_OPTS=1: TensorFlow's oneDNN kernels, said "
        "outright (the baseline takes TensorFlow's default: on for x86 builds)"),
    "onednn.off": ValueWords(
        short="oneDNN off", how="TF_ENABLE_ONEDNN_OPTS=0: TensorFlow's own Eigen kernels "
        "instead of oneDNN's"),
    # XLA's CPU flags by name (`xla_flags.NAMED`): one line each, what it changes from TF
    # 2.21's XLA defaults.
    "xla_flags.noxnnpack": ValueWords(
        short="XNNPACK off", how="XLA_FLAGS=--xla_cpu_use_xnnpack=false: XLA emits its own "
        "code where it would call XNNPACK's kernels (on by default)"),
    "xla_flags.xladnn": ValueWords(
        short="XLA oneDNN", how="XLA_FLAGS=--xla_cpu_use_onednn=true: XLA calls oneDNN for "
        "the matrix products and convolutions it can (off by default)"),
    "xla_flags.dnncall": ValueWords(
        short="oneDNN custom calls", how="XLA_FLAGS=--xla_cpu_experimental_onednn_custom_"
        "call=true: XLA rewrites supported ops into oneDNN custom calls (experimental)"),
    "xla_flags.noynn": ValueWords(
        short="YNNPACK off", how="XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type="
        "-individual_dot: single dots no longer go to YNNPACK (its default)"),
    "xla_flags.ynndot": ValueWords(
        short="YNNPACK dot fusions", how="XLA_FLAGS=--xla_cpu_experimental_ynn_fusion_type=dot:"
        " YNNPACK takes dot fusions, not only single dots (experimental; it changed speed in "
        "BENCHMARKS.md's flag measurement)"),
    "xla_flags.fastmath": ValueWords(
        short="fast math", how="XLA_FLAGS=--xla_cpu_enable_fast_math=true: LLVM may reorder "
        "and approximate float math (results may differ slightly)"),
    "xla_flags.noeigenmt": ValueWords(
        short="single-threaded Eigen", how="XLA_FLAGS=--xla_cpu_multi_thread_eigen=false: "
        "the Eigen calls XLA makes run on one thread"),
    "xla_flags.vec512": ValueWords(
        short="512-bit vectors", how="XLA_FLAGS=--xla_cpu_prefer_vector_width=512: LLVM "
        "prefers AVX-512's full width (256 by default)"),
    "xla_flags.memsched": ValueWords(
        short="memory-saving schedule", how="XLA_FLAGS=--xla_cpu_enable_concurrency_"
        "optimized_scheduler=false: XLA orders the step's work to hold the least memory "
        "instead of running independent work at once (its default), for a model that does "
        "not fit"),
    "backend.jax": ValueWords(
        label="Keras on JAX (jax.jit, XLA)",
        short="Keras on JAX",
        words="KERAS_BACKEND=jax, jit_compile=True",
        how="the same Keras model on JAX (KERAS_BACKEND=jax) with its compiled training step "
        "(jax.jit, so XLA), from the baseline's initial weights on the same batches; its "
        "worker's memory includes TensorFlow's runtime too (Keras and the tf.data pipeline "
        "import it)",
        brief="JAX (XLA)",
    ),
}
# A lever's heading in the settings (`Lever.words`); the precisions are offered as arms
# under "Also measure" and have none yet.
LEVER_WORDS: dict[str, str] = {
    "xla": "XLA", "precision": "", "threads": "Threads", "onednn": "oneDNN",
    "spe": "Steps per execution", "xla_flags": "XLA flags", "backend": "Keras backend",
}
# One of a lever's values, in a sentence ("one XLA mode and one precision"); a lever without a
# row is called by its name.
LEVER_NOUNS: dict[str, str] = {
    "xla": "XLA mode", "precision": "precision", "threads": "thread count",
    "onednn": "oneDNN setting", "spe": "steps_per_execution", "xla_flags": "set of XLA flags",
    "backend": "Keras backend",
}

BASELINE_LABEL = "Baseline (XLA off, float32)"
BASELINE_DESCRIPTION = "jit_compile=False, no auto-clustering, float32"


def value_words(lever: Lever, value: LeverValue) -> ValueWords:
    """The words of one of `lever`'s values: its row of `VALUE_WORDS`, the words of each of
    its parts for a value joined from several (`Lever.joins`: "XLA oneDNN + oneDNN custom
    calls"), or plain words."""
    if value.words:
        return VALUE_WORDS[value.words]
    pieces = value.part.split("+") if lever.joins else []
    if len(pieces) > 1:
        found = [lever.by_part(piece) for piece in pieces]
        each = [value_words(lever, one) if one else plain_words(lever, value) for one in found]
        return ValueWords(*(
            (" + " if field in ("label", "short", "brief") else "; ").join(
                getattr(w, field) for w in each)
            for field in ("label", "short", "words", "how", "brief")))
    return plain_words(lever, value)


def plain_words(lever: Lever, value: LeverValue) -> ValueWords:
    """The words of a value whose lever brings none: "threads=2", and what it sets in code
    words ("tf.config.threading.set_intra_op_parallelism_threads(2)")."""
    name = f"{lever.name}={value.value}"
    sets = [f"{key}={text}" for key, text in value.env]
    sets += [f"tf.config.{call}({', '.join(repr(a) for a in args)})"
             for call, args in value.tf_config]
    sets += [f"keras.mixed_precision policy {value.policy}"] if value.policy else []
    sets += [f"model.compile({key}={arg!r})" for key, arg in value.compile]
    return ValueWords(label=name, short=name, words=name, how=", ".join(sets) or name,
                      brief=name)


def mode_words(mode: XlaMode) -> ValueWords:
    """The words of an XLA mode."""
    return value_words(XLA, XLA.of(mode))


def comparison_line(mode: XlaMode) -> str:
    """What "Run comparison" switches on, in the XLA group's one line: the same model trained
    with XLA off on one side and in `mode` on the other."""
    return (f"Run comparison trains the model twice: the baseline with "
            f"{mode_words(XlaMode.OFF).how}, and XLA with {mode_words(mode).words}.")


def arm_label(arm: Arm) -> str:
    """What a person reads in a column heading or a table: "XLA jit_compile + mixed_bfloat16"."""
    if arm.is_baseline:
        return BASELINE_LABEL
    return " + ".join(value_words(lever, value).short for lever, value in arm.pulled)


def arm_description(arm: Arm) -> str:
    """How an arm differs from the baseline, in one line."""
    return "; ".join(value_words(lever, value).how for lever, value in arm.pulled) or (
        BASELINE_DESCRIPTION
    )


def xla_choices() -> list[tuple[XlaMode, ValueWords]]:
    """The modes the settings offer for the XLA side, in the lever table's order, with their
    words: each value of the XLA lever whose words have a `choice` (its radio button)."""
    return [(XlaMode(value.value), value_words(XLA, value)) for value in XLA.values
            if value_words(XLA, value).choice]


def every_value() -> list[LeverValue]:
    """Every value of every lever (what `VALUE_WORDS` must cover where it has a key), with
    every named XLA flag (`xla_flags.NAMED`, offered or not)."""
    named = [XLA_FLAGS.of(f"--{n.flag}={n.value}") for n in xla_flags.NAMED]
    listed = [value for lever in registered() for value in lever.values]
    return listed + [value for value in named if value not in listed]


def lever_noun(lever: Lever) -> str:
    return LEVER_NOUNS.get(lever.words) or lever.name


def arms_words() -> str:
    """The arms `--arms` takes, as its help lists them: every value offered alone or joined
    ("bf16 (mixed_bfloat16)"), then how the levers join ("one XLA mode and one precision
    joined with + (jit+bf16)")."""
    # A lever that needs another (XLA's flags) is said with the runtime parts, never alone.
    alone = [lever for lever in registered() if not lever.needs]
    names = [value.part if value.part == value.value else f"{value.part} ({value.value})"
             for lever in alone for value in lever.values
             if value.part and (value.offered or value.combined)]
    names_alone = {lever.name for lever in alone}
    joined = [choice for choice in offered_choices()
              if len(choice) > 1 and set(choice) <= names_alone]
    if joined:
        joining = [lever for lever in alone if any(lever.name in c for c in joined)]
        nouns = [f"one {lever_noun(lever)}" for lever in joining]
        example = "+".join(value.part for value in joined[0].values())
        names.append(f"or {', '.join(nouns[:-1])} and {nouns[-1]} joined with + ({example})")
    return ", ".join(names) + "; " + RUNTIME_ARMS_WORDS


# The runtime levers' parts, which take any number or flag (`--arms`' help, the sweep's).
RUNTIME_ARMS_WORDS = (
    "runtime settings join any arm: tN (N intra-op threads), dnn or nodnn (oneDNN on or off), "
    "speN (Keras steps_per_execution N, N >= 2), and with an XLA mode XLA flags written "
    "name=value (jit+xla_cpu_use_xnnpack=false) or by name ("
    + ", ".join(n.part for n in xla_flags.NAMED) + ")"
)


# The instructions that compute a format natively on a CPU, as a person reads them.
_NATIVE_INSTRUCTIONS = {
    Precision.BF16: "AVX512-BF16 or AMX-BF16",
    Precision.FP16: "AVX512-FP16 or AMX-FP16",
}


def hardware_words(fit: str, precision: Precision) -> str:
    """A `HardwareFit` of an arm of `precision` in words ("" when nothing is known)."""
    fmt = precision.compute_dtype
    if fit == HardwareFit.GPU_BF16:
        return "bfloat16 runs natively on GPUs from compute capability 8.0 (Ampere) on"
    if fit == HardwareFit.CPU_FP16:
        return (
            "TensorFlow has few native float16 kernels on CPUs (even with AVX512-FP16), so "
            "mixed_float16 is mostly emulated there: expect it much slower"
        )
    if fit == HardwareFit.CPU_FLAGS_UNKNOWN:
        return f"could not read this CPU's flags to tell whether it computes {fmt} natively"
    if fit == HardwareFit.CPU_NOT_NATIVE:
        return (
            f"this CPU has no native {fmt} ({_NATIVE_INSTRUCTIONS[precision]}): {fmt} is "
            "emulated, so expect it slower; the interleaved figures show the cost"
        )
    return ""


def hardware_note(arm: Arm, device_kind: str, flags: frozenset[str] | None = None) -> str:
    """A note when the hardware is known to run `arm` poorly ("" when nothing is known):
    `device_kind` "CPU" or "GPU", `flags` the CPU's feature flags (this machine's when None)."""
    flags = machine_cpu.cpu_flags() if flags is None else flags
    return hardware_words(hardware_fit(arm, device_kind, flags), arm.precision)


def shared_levers_words(levers: dict[str, str]) -> str:
    """A comparison's levers for every worker (`RunConfig.levers`) in a line: "every worker:
    mixed_bfloat16, threads=1, oneDNN off" ("" for none)."""
    if not levers:
        return ""
    words = [value_words(one, one.of(levers[one.name])).short
             for one in registered() if one.name in levers]
    return "every worker: " + ", ".join(words)
