"""Whether the numbers stay the same, in words (issue 29): each arm's parity kind against the
baseline over the same first steps (`same`, `precision_drift`, `diverges`), with its figures.
One wording for the window's "Why" tab, the PNG, the Markdown and `xlagui inspect`.

The figures come from `why_data.ParityView` (the saved `parity.<arm>`).
"""

from __future__ import annotations

from collections.abc import Mapping

from xlagui.present.explain import arm_short, arm_words, sentence_start
from xlagui.present.levels import Level
from xlagui.present.units import DASH
from xlagui.present.why_data import ParityView

KIND_WORDS = {
    "same": "the same within float32 rounding",
    "precision_drift": "drifts as its lower precision would",
    "diverges": "diverges from the baseline: worth reporting",
}
KIND_LEVELS = {"same": Level.OK, "precision_drift": Level.INFO, "diverges": Level.ERROR}
PARITY_COLUMNS = ("arm", "parity", "steps", "largest loss difference",
                  "largest output difference")
HOW = ("Same seed, the same first batches in the same order, no augmentation: the loss step by "
       "step on both sides, and the outputs on one fixed batch after the last step. The "
       "baseline trained again from weights nudged by one float32 ulp, and with each batch's "
       "images in another order (the same sums, reassociated), says how far rounding alone "
       "drifts.")


def kind_words(kind: str) -> str:
    return KIND_WORDS.get(kind, kind.replace("_", " "))


def kind_level(kind: str) -> Level:
    return KIND_LEVELS.get(kind, Level.WARNING)


def relative(value: float | None) -> str:
    """A relative difference: 2.1e-06, 0.31%, 12%."""
    if value is None:
        return DASH
    if value == 0:
        return "0"
    if abs(value) < 1e-3:
        return f"{value:.1e}"
    return f"{value:.2%}" if abs(value) < 0.1 else f"{value:.0%}"


def parity_sentence(p: ParityView) -> str:
    """"XLA jit_compile is the same within float32 rounding over 20 steps (largest relative
    loss difference 2.1e-06, outputs 3.4e-06)." """
    who = sentence_start(arm_words(p.arm))
    steps = f" over {p.steps} steps" if p.steps else ""
    return (f"{who} {'is ' if p.kind == 'same' else ''}{kind_words(p.kind)}"
            f"{steps} (largest relative loss difference {relative(p.max_rel_loss_diff)}, "
            f"outputs {relative(p.max_rel_output_diff)}).")


def parity_rows(parity: Mapping[str, ParityView]) -> list[tuple[str, ...]]:
    return [(arm_short(p.arm), kind_words(p.kind), DASH if p.steps is None else str(p.steps),
             relative(p.max_rel_loss_diff), relative(p.max_rel_output_diff))
            for p in parity.values()]


def parity_lines(parity: Mapping[str, ParityView]) -> list[str]:
    return [parity_sentence(p) for p in parity.values()]
