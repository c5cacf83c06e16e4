"""How figures read on screen and in the PNG report: seconds, bytes, ratios, XLA evidence.

Formatting only; every figure itself comes from `xlagui.core.analysis.stats` or a run's summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.analysis.pairs import InstrumentCheck, InterleavedSummary, widest_arm
from xlagui.core.analysis.stats import NO_SPEED, NOT_COMPARED, CompileBasis
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.identity import Role, RunStatus, StopReason
from xlagui.present import levers as lever_words
from xlagui.present import verdicts
from xlagui.present.costs import DASH as DASH  # one dash, one `seconds`: re-exported
from xlagui.present.costs import arm_compile_cost, extra_compile_words
from xlagui.present.costs import seconds as seconds
from xlagui.present.evidence import evidence_words
from xlagui.present.intervals import (
    block_words,
    interval_method,
    pairs_noun,
    speed_range,
    speed_words,
    step_interval,
)
from xlagui.present.model_files import error_text
from xlagui.present.problems import arm_problems, comparison_problems
from xlagui.present.units import created as created  # re-exported, as `seconds`
from xlagui.present.units import duration as duration
from xlagui.present.units import size_bytes as size_bytes

if TYPE_CHECKING:
    from xlagui.core.analysis.pairs import ArmResult
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.protocol.events import RunSummary
    from xlagui.core.protocol.record import RunEntry
    from xlagui.core.results.report import ComparisonReport

def runs_done(finished: int, interrupted: int, *, pairs: int | None = None) -> str:
    """Saved training runs: "2", "1 + 1 interrupted", or none: "speed only, 8 pairs"."""
    if finished == interrupted == 0 and pairs is not None:
        return f"speed only, {pairs} pair{'' if pairs == 1 else 's'}"
    return f"{finished} + {interrupted} interrupted" if interrupted else str(finished)


def mode_words(variant: str, xla_mode: str) -> str:
    """What a run changes, in a column's subtitle and the report: "jit_compile=True"."""
    if variant == Role.BASELINE:
        return lever_words.mode_words(XlaMode.OFF).words
    if variant != Role.XLA:
        return lever_words.arm_label(parse_arm(variant))  # another arm: what it changes
    return lever_words.mode_words(XlaMode(xla_mode)).words


def overhead(value: float | None) -> str:
    """A first epoch's extra time; at or below zero it was no slower than the steady median,
    i.e. the overhead is lost in the epoch-to-epoch noise: never shown as a negative cost."""
    if value is None:
        return DASH
    if value <= 0:
        return "not measurable"
    return seconds(value)


def percent(value: float | None) -> str:
    return DASH if value is None else f"{value:.1%}"


def evidence(summary: RunSummary | None) -> str:
    """What shows that XLA compiled (or did not) in one run, in words."""
    return evidence_words(summary.xla_evidence) if summary is not None else DASH


def interval_words(value: float, low: float | None, high: float | None,
                   adjusted_for: int = 0) -> str:
    """“2.00× faster (95% CI 1.90–2.10×)” or “2.47× slower (95% CI 2.30–2.60×)” for a speed-up
    `value` (above 1: faster); a slow-down is said as one, its interval too. `adjusted_for`:
    the interval is Bonferroni-adjusted for that many arms, and says so."""
    adjusted = f", Bonferroni-adjusted for {adjusted_for} arms" if adjusted_for > 1 else ""
    if low is not None and high is not None and low != high:
        if low <= 1 <= high:
            return (f"no clear difference ({speed_words(value)}, 95% CI "
                    f"{speed_range(low, high)}{adjusted})")
        if value >= 1:
            return f"{value:.2f}× faster (95% CI {low:.2f}–{high:.2f}×{adjusted})"
        return f"{1 / value:.2f}× slower (95% CI {1 / high:.2f}–{1 / low:.2f}×{adjusted})"
    words = f"{value:.2f}× faster" if value >= 1 else f"{1 / value:.2f}× slower"
    return words + " (no interval: a single measurement)"


def speedup(c: Comparison) -> str:
    """The headline speed-up in words, with its interval."""
    s = c.speedup
    if s is None:
        return DASH
    low, high, adjusted_for = step_interval(c)
    return interval_words(s.value, low, high, adjusted_for)


def speedup_epochs(c: Comparison) -> str:
    """The epoch-level speed-up; where it and the step-level one differ (the step's interval
    leaves the epoch's figure out), why, in the same place: printed bare side by side they
    contradicted each other."""
    s = c.speedup_epochs or (c.speedup if c.interleaved is None else None)
    if s is None:
        return DASH
    words = interval_words(s.value, s.low, s.high)
    step = c.speedup if c.interleaved is not None else None
    low, high, _ = step_interval(c)
    if step is not None and low is not None and high is not None and not (
            low <= s.value <= high):
        words += (f"; per step it was {speed_words(step.value)}: an epoch also times the "
                  "validation pass, the input pipeline and any recompile (a last partial "
                  "batch's), which the interleaved steps leave out")
    return words


def measured_on(c: Comparison) -> str:
    """What the headline figure was measured on."""
    i = c.interleaved
    if i is not None:
        return f"from {i.pairs} interleaved {pairs_noun(i.pairs)} of {block_words(i)}"
    return interval_method(c, c.speedup) if c.speedup is not None else ""


def budget_cut(i: InterleavedSummary) -> str:
    """What a slow set-up took from the rounds' budget (`interleave.rounds_budget`), in
    words: " (set-up and warm-up took 52 s; the 27 s beyond 25 s came out of the 120 s
    budget)"; "" when it took nothing."""
    budget, rounds, setup = i.budget_seconds, i.rounds_budget_seconds, i.setup_seconds
    if budget is None or rounds is None or setup is None or rounds >= budget - 0.5:
        return ""
    cut = budget - rounds
    return (f" (set-up and warm-up took {setup:.0f} s; the {cut:.0f} s beyond "
            f"{setup - cut:.0f} s came out of the {budget:.0f} s budget)")


def measurement_end(c: Comparison) -> str:
    """How the interleaved measurement ended, in words."""
    i = c.interleaved
    if i is None:
        return DASH
    hw = f"±{i.half_width:.1%}" if i.half_width is not None else "no interval yet"
    n = f"{i.pairs} {pairs_noun(i.pairs)}"
    took = f", {seconds(i.measuring_seconds)} of measuring" if i.measuring_seconds else ""
    took += budget_cut(i)
    ends: dict[str, str] = {
        StopReason.TARGET: f"precision reached ({hw}) after {n}{took}",
        StopReason.BUDGET: f"budget spent after {n}{took}; precision {hw}"
        + (
            f" (widest: {w.arm} ±{w.half_width:.1%})"
            if (w := widest_arm(i)) is not None and w.half_width is not None
            else ""
        ),
        StopReason.STOPPED: f"stopped by the user after {n} ({hw}); the pairs are kept",
        StopReason.ERROR: f"a worker failed after {n} ({hw}); the pairs are kept",
    }
    text = ends.get(i.stopped_by, f"{n} so far ({hw})")
    if i.outliers:
        text += (f"; {i.outliers} outlier {pairs_noun(i.outliers)} flagged and kept")
    return text


def total_time(c: Comparison) -> str:
    if c.total_time_ratio is None:
        return DASH
    pct = (1 - c.total_time_ratio) * 100
    change = f"{abs(pct):.0f}% {'less' if pct >= 0 else 'more'}"
    return (
        f"{seconds(c.xla_total_seconds)} with XLA vs {seconds(c.baseline_total_seconds)} "
        f"without ({change})"
    )


def compile_cost(c: Comparison) -> str:
    """XLA's extra compile time over the baseline's, never negative: below the noise it is
    not measurable."""
    if c.extra_compile_seconds is None:
        return "not measurable" if c.compile_measured_on or c.interleaved else DASH
    basis = c.compile_measured_on or (
        CompileBasis.FIRST_STEP if c.interleaved is not None else CompileBasis.FIRST_EPOCH)
    return extra_compile_words(c.extra_compile_seconds, basis)


def memory(c: Comparison) -> str:
    parts = []
    # A share of the baseline's, never a bare ratio below 1 with "×" (one convention: "×" is
    # for speed, said as faster or slower).
    if c.memory_ratio is not None:
        parts.append(f"RAM {c.memory_ratio:.0%} of the baseline's")
    if c.device_memory_ratio is not None:
        parts.append(f"GPU memory {c.device_memory_ratio:.0%} of the baseline's")
    return ", ".join(parts) or DASH


def comparison_rows(c: Comparison) -> list[tuple[str, str]]:
    """The comparison as (what, value) rows: the one table the CLI, the window and the PNG
    report all show. Each figure says what it was measured on."""
    rows: list[tuple[str, str]] = []
    trained = bool(c.runs_compared.get(Role.BASELINE) and c.runs_compared.get(Role.XLA))
    if c.interleaved is not None:
        rows += [
            ("Speed per training step", speedup(c)),
            ("Measured on", measured_on(c)),
            (
                "Steady step",
                f"{seconds(c.xla_steady_step_seconds)} with XLA vs "
                f"{seconds(c.baseline_steady_step_seconds)} without",
            ),
            ("Measurement", measurement_end(c)),
        ]
    if trained:
        rows += [
            ("Speed per steady epoch", speedup_epochs(c)),
            (
                "Steady epoch",
                f"{seconds(c.xla_steady_seconds)} with XLA vs "
                f"{seconds(c.baseline_steady_seconds)} without",
            ),
            ("Total wall time", total_time(c)),
        ]
    rows.append(("Compile cost", compile_cost(c)))
    if trained:
        rows.append(("Break-even", verdicts.break_even_words(c.break_even) or DASH))
    rows.append(("Peak memory", memory(c)))
    if trained:
        rows.append(("Accuracy", verdicts.comparison_accuracy(c) or DASH))
    if c.interleaved is not None and c.interleaved.check is not None:
        rows.append(("Instrument check (A/A)", instrument_check(c.interleaved.check)))
    rows.append(("Runs compared", runs_compared(c)))
    return rows


def instrument_check(k: InstrumentCheck) -> str:
    """The A/A check in words: the baseline against its identical twin."""
    if k.low is None or k.high is None:
        return (f"identical baseline ÷ baseline {k.ratio:.3f} after {k.pairs} "
                f"{pairs_noun(k.pairs)} (no interval)")
    verdict = (
        "it covers 1.00, so no position or order effect was seen"
        if k.covers_one
        else "does NOT cover 1.00: the instrument favours one worker; treat the ratios with care"
    )
    return (
        f"identical baseline ÷ baseline {k.ratio:.3f} (95% CI {k.low:.3f}–{k.high:.3f}, "
        f"{k.pairs} {pairs_noun(k.pairs)}): {verdict}"
    )


def runs_compared(c: Comparison) -> str:
    rc = c.runs_compared
    parts = []
    if "interleaved_pairs" in rc:
        parts.append(f"{rc['interleaved_pairs']} interleaved "
                     f"{pairs_noun(rc['interleaved_pairs'])}")
    if rc.get(Role.BASELINE) or rc.get(Role.XLA) or not parts:
        parts.append(
            f"{rc.get(Role.BASELINE, 0)} baseline and {rc.get(Role.XLA, 0)} XLA training runs"
        )
    return "; ".join(parts)


# Every row `comparison_rows` can give, in order (a view lays them all out once).
COMPARISON_ROW_NAMES = (
    "Speed per training step",
    "Measured on",
    "Steady step",
    "Measurement",
    "Speed per steady epoch",
    "Steady epoch",
    "Total wall time",
    "Compile cost",
    "Break-even",
    "Peak memory",
    "Accuracy",
    "Instrument check (A/A)",
    "Runs compared",
)


ARM_COLUMNS = ("rank", "arm", "speed per step", "engaged", "accuracy", "note")


def arm_label(a: ArmResult) -> str:
    """What an arm changes, in words: "XLA jit_compile + mixed_bfloat16"."""
    return lever_words.arm_label(parse_arm(a.arm))


def arm_hardware_note(a: ArmResult) -> str:
    """What is known of how the hardware runs the arm's number format ("" when nothing is):
    from its kind, or the words an older comparison kept."""
    if a.hardware:
        return lever_words.hardware_words(a.hardware, parse_arm(a.arm).precision)
    return a.note


def arm_speed(a: ArmResult, arms: int = 0) -> str:
    """An arm's speed against the baseline in words, with the one interval an arm is shown
    with: the one it is ranked by, Bonferroni-adjusted for the `arms` compared (labelled so)."""
    if a.ratio is None:
        return DASH
    low, high = arm_bounds(a)
    return interval_words(1 / a.ratio, low, high, arms if a.adjusted_high else 0)


def arm_bounds(a: ArmResult) -> tuple[float | None, float | None]:
    """The interval an arm is shown and ranked with, as speed-ups (above 1: faster): the
    Bonferroni-adjusted one (the plain 95% one in comparisons saved before it)."""
    low, high = a.ranking_interval
    return (1 / high if high else None, 1 / low if low else None)


def arm_accuracy(a: ArmResult) -> str:
    """An arm's accuracy verdict, with what it was measured on when it is one."""
    text = verdicts.accuracy_words(a.accuracy)
    if a.accuracy_ok is None:
        return text or DASH
    head = "as well" if a.accuracy_ok else "WORSE"
    source = verdicts.accuracy_source(a.accuracy)
    return f"{head}: {text}" + (f" ({source})" if source else "")


def arm_table(c: Comparison) -> list[tuple[str, ...]]:
    """Every arm against the baseline, fastest first, as rows of `ARM_COLUMNS` (the CLI, the
    window and the PNG show this same table)."""
    from xlagui.core.analysis.ranking import ranked

    if c.interleaved is None:
        return []
    rows: list[tuple[str, ...]] = []
    for rank, a in enumerate(ranked(c.interleaved.arms), start=1):
        engaged = "yes" if a.valid else "NOT VALID: " + "; ".join(arm_problems(a.problems))
        star = " ★" if c.recommended_arm == a.arm else ""
        rows.append(
            (str(rank), f"{a.arm}{star}", arm_speed(a, len(c.interleaved.arms)), engaged,
             arm_accuracy(a),
             arm_hardware_note(a))
        )
    return rows


def other_arms(c: Comparison | None) -> bool:
    """Whether the comparison measured arms beyond the XLA side (bf16, jit+bf16, ...)."""
    return bool(
        c is not None
        and c.interleaved is not None
        and any(a.variant != Role.XLA for a in c.interleaved.arms)
    )


def problems_beside_verdict(c: Comparison) -> list[str]:
    """The problems the verdict sentence does not already list: it lists them all for an
    invalid comparison or one without a speed, and the last for one not compared."""
    if c.verdict_kind == NOT_COMPARED:
        return comparison_problems(c.problems[:-1])
    if not c.valid or c.verdict_kind == NO_SPEED:
        return []
    return comparison_problems(c.problems)


def question_verdict(c: Comparison) -> str:
    """The verdict on the user's question, XLA. The arms' recommendation is a field of its
    own (`Comparison.recommendation`), said after the arms table."""
    return verdicts.verdict_sentence(c)


# -- one arm on its own (the PNG's arm panels, the Markdown report's arms table) -------------


def arm_speedup(a: ArmResult) -> str:
    """An arm's speed per step against the baseline: "2.00× faster", "1.46× slower"; —
    before any pair."""
    return DASH if not a.ratio else speed_words(1 / a.ratio)


def arm_interval(a: ArmResult) -> str:
    """Its interval (`arm_bounds`) in the same words: "1.90–2.10× faster"; — while there is
    none (fewer than 6 pairs)."""
    low, high = arm_bounds(a)
    return DASH if low is None or high is None else speed_range(low, high)


def arm_status(a: ArmResult, entry: RunEntry | None) -> str:
    """Whether the arm was measured as asked: "engaged", "NOT VALID: …", or "failed: …" when
    its measuring worker (`entry`) ended in an error."""
    if entry is not None and entry.status == RunStatus.ERROR:
        error = entry.error
        said = error_text(error) if error is not None else ""
        return "failed: " + (said or "its worker ended in an error")
    if not a.valid:
        return "NOT VALID: " + "; ".join(arm_problems(a.problems))
    return "engaged"


def measure_entry(report: ComparisonReport, a: ArmResult) -> RunEntry | None:
    """The measuring worker of arm `a` in `report`."""
    return next((r for r in report.measure_runs if r.variant == a.variant), None)


def training_figures(summary: RunSummary | None) -> list[tuple[str, str]]:
    """A training run's figures, as the PNG shows them under each side's plots."""
    s = summary
    return [
        ("Steady epoch", seconds(s.steady_epoch_seconds if s else None)),
        ("First epoch", seconds(s.first_epoch_seconds if s else None)),
        ("Peak memory", size_bytes(s.peak_rss_bytes if s else None)),
        ("Val. accuracy", percent(s.final_val_accuracy if s else None)),
        ("XLA evidence", evidence(s)),
    ]


def extra_arms(c: Comparison | None) -> list[ArmResult]:
    """The arms measured beyond the XLA side (bf16, jit+bf16, ...), in the order measured."""
    if c is None or c.interleaved is None:
        return []
    return [a for a in c.interleaved.arms if a.variant != Role.XLA]


def arm_figures(report: ComparisonReport, a: ArmResult) -> list[tuple[str, str]]:
    """One arm against the baseline, as (what, value) rows: its speed-up with the interval,
    the pairs, its step times, whether it engaged, its accuracy verdict, and its training
    run's figures when it had one (the last repeat's)."""
    rows = [
        ("Speed per step", arm_speed(a, len(report.comparison.interleaved.arms)
                                     if report.comparison and report.comparison.interleaved
                                     else 0)),
        ("Pairs", f"{a.pairs}" + (f" ({a.outliers} outlier(s) flagged, kept)"
                                  if a.outliers else "")),
        ("Steady step", seconds(a.steady_step_seconds)),
        ("Compile cost", arm_compile_cost(a)),
        ("Status", arm_status(a, measure_entry(report, a))),
        ("Accuracy", arm_accuracy(a)),
    ]
    note = arm_hardware_note(a)
    if note:
        rows.append(("Hardware", note))
    trained = [r for r in report.runs if r.variant == a.variant]
    if trained:
        last = trained[-1]
        runs = f"{len(trained)} run{'s' if len(trained) != 1 else ''}"
        rows.append(("Training", f"{runs}, the last {last.status}"))
        rows += training_figures(last.summary)
    return rows
