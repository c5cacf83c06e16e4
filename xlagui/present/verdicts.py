"""The verdicts in words: the answer on XLA, the break-even, the accuracy verdicts and the
recommendation among the arms.

The core decides and keeps the decision as data (`Comparison.verdict_kind` with its figures,
`BreakEven`, `AccuracyVerdict`, `Recommendation`); this module alone says it, once for the
CLI, the window, the PNG, the Markdown and the History list. Nothing reads these sentences
back: code that needs to know what was concluded reads the data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.analysis.accuracy import AccuracyKind, AccuracyVerdict
from xlagui.core.analysis.pairs import (
    InterleavedSummary,
    Recommendation,
    RecommendationKind,
    widest_arm,
)
from xlagui.core.analysis.stats import (
    EXTRAPOLATED,
    NEVER,
    NO_EPOCHS,
    NOT_COMPARED,
    NOT_WITHIN,
    BreakEven,
    Comparison,
)
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.identity import Role, StopReason
from xlagui.present.intervals import (
    block_words,
    pairs_noun,
    speed_range,
    speed_words,
    step_interval,
)
from xlagui.present.levers import arm_label
from xlagui.present.problems import arm_problems, comparison_problem, comparison_problems

if TYPE_CHECKING:
    from xlagui.core.results.history import HistoryItem


def seconds_words(s: float) -> str:
    """A compile cost in a sentence: "27 s", "3.1 s"."""
    return f"{s:.0f} s" if abs(s) >= 10 else f"{s:.1f} s"


def speed_sentence(c: Comparison) -> str:
    """The headline speed figure in words, saying what it was measured on."""
    if c.speedup is None:
        return ""
    s = c.speedup
    unit = "per training step" if c.interleaved is not None else "per epoch"
    i = c.interleaved
    basis = (
        f"from {i.pairs} interleaved {pairs_noun(i.pairs)} of {block_words(i)}"
        if i is not None
        else "from epochs"
    )
    low, high, adjusted_for = step_interval(c)
    # A point (every pair the same ratio) is no interval, as `format.interval_words` says too.
    has_ci = low is not None and high is not None and low != high
    if not has_ci:
        few = "pairs" if i is not None else "epochs"
        basis = f"too few {few} for an interval: a single measurement"
    if adjusted_for:
        basis += f", Bonferroni-adjusted for {adjusted_for} arms"
    if has_ci and low <= 1 <= high:  # type: ignore[operator]
        text = (
            f"XLA made no clear difference {unit} ({speed_words(s.value)}, 95% CI "
            f"{speed_range(low, high)}, {basis}: the interval includes no difference)"  # type: ignore[arg-type]
        )
    elif s.value >= 1:
        ci = f"95% CI {low:.2f}–{high:.2f}×, " if has_ci else ""
        text = f"XLA was {s.value:.2f}× faster {unit} ({ci}{basis})"
    else:
        # Said as a slow-down, so the interval is too: 1 / speed-up, bounds swapped.
        ci = f"95% CI {1 / high:.2f}–{1 / low:.2f}×, " if has_ci else ""  # type: ignore[operator]
        text = f"XLA was {1 / s.value:.2f}× slower {unit} ({ci}{basis})"
    return text


def stop_sentence(i: InterleavedSummary) -> str:
    """How the interleaved measurement ended, in words ("" when it reached its target)."""
    hw = f"±{i.half_width:.1%}" if i.half_width is not None else "no interval yet"
    if i.stopped_by == StopReason.BUDGET:
        target = f" ±{i.target:.0%}" if i.target is not None else ""
        widest = widest_arm(i)
        if widest is not None and widest.half_width is not None:
            # The stopping rule waits for the widest interval, which need not be XLA's.
            return (
                f"The time budget ran out before every arm's interval reached{target} "
                f"(widest: {widest.arm} ±{widest.half_width:.1%})."
            )
        return f"The time budget ran out before the{target} precision was reached ({hw})."
    if i.stopped_by == StopReason.STOPPED:
        return f"The measurement was stopped after {i.pairs} {pairs_noun(i.pairs)} ({hw})."
    if i.stopped_by == StopReason.ERROR:
        return (f"A worker failed after {i.pairs} {pairs_noun(i.pairs)}; the pairs before it are "
                f"kept ({hw}).")
    return ""


def break_even_words(b: BreakEven | None) -> str:
    """When XLA's cumulative time catches up with the baseline's ("" before training runs)."""
    if b is None:
        return ""
    if b.kind == NO_EPOCHS:
        return "unknown (no epochs)"
    if b.kind == NEVER:
        return "never"
    if b.kind == NOT_WITHIN:
        return (
            f"not within the {b.measured_epochs} measured epochs (XLA is not clearly faster "
            "per epoch, so it may never catch up)"
        )
    if b.kind == EXTRAPOLATED:
        return f"epoch {b.epoch} (extrapolated from the steady epoch times)"
    return f"epoch {b.epoch}"


def _compile_part(c: Comparison) -> str:
    """What XLA's compile cost comes to, after the speed sentence."""
    extra = c.extra_compile_seconds
    b = c.break_even
    if extra is None:
        return "; its extra compile time was not measurable"
    if b is not None and b.kind == NEVER:
        return f" and never pays back its {seconds_words(extra)} compile"
    if c.break_even_epoch is None and c.runs_compared.get(Role.XLA):
        return (
            f"; its {seconds_words(extra)} compile was not paid back within the measured epochs"
        )
    if c.break_even_epoch is not None and c.break_even_epoch > 1:
        return f"; its {seconds_words(extra)} compile is paid back by {break_even_words(b)}"
    if not c.runs_compared.get(Role.XLA):
        return f"; compiling cost it {seconds_words(extra)} once"
    return ""


def short_verdict(c: Comparison) -> str:
    """The verdict's first sentence (the window's message when a comparison finishes): the
    speed with the compile cost, or why there is no valid answer."""
    if c.verdict_kind == NOT_COMPARED:
        return _not_compared(c)
    if c.speedup is None:
        return "Not enough measurements to compare steady-state speed."
    if not c.valid:
        return "NOT A VALID COMPARISON: " + "; ".join(comparison_problems(c.problems)) + "."
    return speed_sentence(c) + _compile_part(c) + "."


def _not_compared(c: Comparison) -> str:
    # The last problem is the one that says why nothing was compared (`compare_runs`).
    if not c.problems:
        return "Not compared."
    return "Not compared: " + comparison_problem(c.problems[-1]) + "."


def verdict_sentence(c: Comparison) -> str:
    """The comparison's answer on XLA in one or two plain sentences, with how the measurement
    ended and an accuracy that differs beyond noise. The arms' recommendation is said apart
    (`recommendation_sentence`)."""
    if c.verdict_kind == NOT_COMPARED:
        return _not_compared(c)
    if c.speedup is None:
        return "Not enough measurements to compare steady-state speed. " + "; ".join(
            comparison_problems(c.problems)
        )
    text = speed_sentence(c) + _compile_part(c) + "."
    if c.total_time_ratio is not None:
        pct = (1 - c.total_time_ratio) * 100
        text += (
            f" Total wall time: {abs(pct):.0f}% {'less' if pct >= 0 else 'more'} than the baseline."
        )
    if c.interleaved is not None:
        stop = stop_sentence(c.interleaved)
        if stop:
            text += " " + stop
    if c.accuracy_differs:
        text += " Accuracy differs beyond noise: " + comparison_accuracy(c) + "."
    if not c.valid:
        text = "NOT A VALID COMPARISON: " + "; ".join(comparison_problems(c.problems)) + ". " + text
    return text


def accuracy_words(v: AccuracyVerdict | None) -> str:
    """An accuracy verdict in words ("" when there is none)."""
    if v is None:
        return ""
    if v.kind is AccuracyKind.NONFINITE:
        return f"its loss was not finite in {v.nonfinite} measured block(s)"
    if v.kind is AccuracyKind.SAME_NUMBERS:
        return (f"the baseline's numbers: its first {v.steps} steps from the same seed stayed "
                "within float32 rounding of the baseline's (the why's parity), so it trains "
                "the same model")
    if v.kind is AccuracyKind.DIVERGING_NUMBERS:
        return (f"not the baseline's numbers: its first {v.steps} steps from the same seed "
                "diverged beyond float32 rounding (the why's parity): worth reporting")
    if v.kind is AccuracyKind.NO_DATA or v.arm is None or v.baseline is None:
        return "no validation accuracy to compare"
    figures = f"{v.arm:.1%} vs {v.baseline:.1%} baseline"
    if v.kind is AccuracyKind.UNEQUAL_STEPS:
        return f"not compared: {figures}, after unequal training (this slower arm sat out rounds)"
    if v.kind is AccuracyKind.TOO_EARLY:
        return (
            f"not enough training to compare accuracy ({v.steps} steps): {figures}; early in "
            "training one seed's luck can outweigh any arm"
        )
    when = f" after {v.epochs} epoch{'s' if v.epochs != 1 else ''}" if v.epochs else ""
    if v.kind is AccuracyKind.AT_CHANCE:
        level = f" ({v.chance:.0%})" if v.chance is not None else ""
        return (
            f"not trained enough to compare: {figures}{when}, the baseline at chance level{level}"
        )
    if v.kind is AccuracyKind.ONE_SEED:
        text = (
            f"{figures}{when} on {v.images} images, one seed each: the seed-to-seed spread of "
            "training is not measured, so no verdict (--repeats 2 or more measures it)"
        )
        if v.p_value is not None:
            text += (
                f"; McNemar on these images p = {v.p_value:.2g}"
                + (" (the two models differ here, but one seed cannot pin that on the arm)"
                   if v.p_value < 0.05 else "")
            )
        return text
    assert v.noise is not None and v.difference is not None
    noise = f"±{v.noise:.1%} over {v.seeds} seeds and {v.images} images"
    if v.kind is AccuracyKind.SAME:
        return f"{figures}{when}, within the {noise}"
    return (
        f"{'learns worse' if v.kind is AccuracyKind.WORSE else 'learns better'}: {figures}{when}, "
        f"{abs(v.difference):.1%} {'below' if v.difference < 0 else 'above'}, beyond the {noise}"
    )


def comparison_accuracy(c: Comparison) -> str:
    """The training runs' accuracy verdict, as the summary's Accuracy row says it ("" when
    the comparison trained nothing to compare)."""
    return "validation accuracy: " + accuracy_words(c.accuracy) if c.accuracy is not None else ""


def accuracy_source(v: AccuracyVerdict | None) -> str:
    """What an arm's accuracy was measured on: "training runs (5 epochs, 2 seeds)" or "after
    the 40 steps of the measurement" ("" when not known)."""
    if v is None:
        return ""
    if v.kind in (AccuracyKind.SAME_NUMBERS, AccuracyKind.DIVERGING_NUMBERS):
        return f"the why's {v.steps} parity steps beside the baseline's"
    if v.steps is not None:
        return f"after the {v.steps} steps of the measurement"
    if v.epochs is not None:
        return (
            f"training runs ({v.epochs} epoch{'s' if v.epochs != 1 else ''}"
            + (f", {v.arm_runs} seeds)" if v.arm_runs > 1 else ")")
        )
    return ""


def adjusted_interval(r: Recommendation) -> str:
    """The interval the recommended arm was ranked by: "95% CI 1.90–2.10×, Bonferroni-adjusted
    for 3 arms"."""
    adjusted = f", Bonferroni-adjusted for {r.adjusted_for} arms" if r.adjusted_for else ""
    return f"95% CI {r.low:.2f}–{r.high:.2f}×{adjusted}"


def recommendation_sentence(r: Recommendation | None) -> str:
    """The recommendation among the arms in words, each faster arm passed over with why ("":
    nothing to recommend from yet)."""
    if r is None:
        return ""
    if r.kind is RecommendationKind.NONE_RECOMMENDABLE:
        text = "On this machine, no configuration that was clearly faster can be recommended."
    elif r.kind is RecommendationKind.NONE_FASTER:
        text = "On this machine, no configuration measured was clearly faster than the baseline."
    else:
        faster = f"{r.speedup:.2f}× faster per step ({adjusted_interval(r)})"
        label = arm_label(parse_arm(r.arm or ""))
        if r.kind is RecommendationKind.TIED:
            names = ", ".join(r.tied[:-1]) + f" and {r.tied[-1]}"
            pick = f"{r.arm} is simpler" if r.simpler else f"{r.arm} is the fastest estimate"
            text = (
                f"On this machine, {names} are tied (their adjusted intervals overlap); "
                f"{pick}: {faster}."
            )
        elif r.kind is RecommendationKind.RECOMMENDED:
            text = (
                f"On this machine, the fastest configuration that learns as well is "
                f"{r.arm} ({label}), {faster}."
            )
            if r.accuracy is not None and r.accuracy.kind is AccuracyKind.SAME_NUMBERS:
                text += f" It learns as well because it computes {accuracy_words(r.accuracy)}."
        else:
            text = (
                f"On this machine, the fastest configuration is {r.arm} ({label}), {faster}; "
                f"whether it learns as well is not known: {accuracy_words(r.accuracy)}."
            )
    for p in r.passed_over:
        why = "; ".join(arm_problems(p.problems)) if not p.valid else accuracy_words(p.accuracy)
        text += f" {p.arm} was faster ({p.speedup:.2f}×) but is not recommended: {why}."
    return text


def history_verdict(item: HistoryItem) -> str:
    """A saved comparison's verdict in the History list: said from its record, or the
    sentence a comparison saved before verdicts were data kept ("" when it has neither)."""
    if item.comparison is not None:
        return verdict_sentence(item.comparison)
    return item.saved_verdict
