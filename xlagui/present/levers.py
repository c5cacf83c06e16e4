"""What the app says of each lever's values (`xlagui.core.protocol.levers`) and of an arm made
of them: a run's heading, an arm's label and what it changes, a column's subtitle.

Keyed by the values' word keys (`LeverValue.words`): the core's table says what a value is and
does, this one how it reads. A value without words fails `tests/present/test_levers.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.core.protocol.arms import Arm
from xlagui.core.protocol.levers import LEVERS, XLA, LeverValue
from xlagui.core.protocol.modes import XlaMode


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
}
# A lever's heading in the settings (`Lever.words`); the precisions are offered as arms
# under "Also measure" and have none yet.
LEVER_WORDS: dict[str, str] = {"xla": "XLA", "precision": ""}

BASELINE_LABEL = "Baseline (XLA off, float32)"
BASELINE_DESCRIPTION = "jit_compile=False, no auto-clustering, float32"


def value_words(value: LeverValue) -> ValueWords:
    return VALUE_WORDS[value.words]


def mode_words(mode: XlaMode) -> ValueWords:
    """The words of an XLA mode."""
    return value_words(XLA.of(mode))


def arm_label(arm: Arm) -> str:
    """What a person reads in a column heading or a table: "XLA jit_compile + mixed_bfloat16"."""
    if arm.is_baseline:
        return BASELINE_LABEL
    return " + ".join(value_words(value).short for _lever, value in arm.pulled)


def arm_description(arm: Arm) -> str:
    """How an arm differs from the baseline, in one line."""
    return "; ".join(value_words(value).how for _lever, value in arm.pulled) or (
        BASELINE_DESCRIPTION
    )


def every_value() -> list[LeverValue]:
    """Every value of every lever (what `VALUE_WORDS` must cover)."""
    return [value for lever in LEVERS for value in lever.values]
