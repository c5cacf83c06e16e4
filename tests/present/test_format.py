"""Figures and comparison rows in words: one wording for the CLI, the window and the PNG."""

from __future__ import annotations

import pytest

from xlagui.core.analysis.pairs import ArmTiming, InterleavedSummary
from xlagui.core.analysis.stats import Comparison, Interval
from xlagui.core.protocol.events import RunSummary
from xlagui.core.xla.evidence import XlaEvidence
from xlagui.present import format as fmt
from xlagui.present.arm_bars import arm_bars


def test_figures_in_words() -> None:
    assert fmt.seconds(0.5) == "0.50 s" and fmt.seconds(12.34) == "12.3 s"
    assert fmt.seconds(None) == fmt.DASH
    assert fmt.duration(42) == "42 s" and fmt.duration(187) == "3:07"
    assert fmt.duration(3723) == "1:02:03"
    assert fmt.size_bytes(500 * 2**20) == "500 MB" and fmt.size_bytes(1536) == "1.5 KB"
    c = Comparison(speedup=Interval(2.0, 1.8, 2.2, "95% CI across repeats"))
    assert fmt.speedup(c) == "2.00× faster (95% CI 1.80–2.20×)"
    c = Comparison(speedup=Interval(0.5, None, None, "epochs"))
    assert fmt.speedup(c) == "2.00× slower (no interval: a single measurement)"
    c = Comparison(speedup=Interval(0.4, 0.38, 0.42, "pairs"))
    # A slow-down is said as one, and so is its interval.
    assert fmt.speedup(c) == "2.50× slower (95% CI 2.38–2.63×)"
    c = Comparison(speedup=Interval(0.98, 0.9, 1.05, "pairs"))
    assert fmt.speedup(c).startswith("no clear difference")
    c = Comparison(total_time_ratio=0.75, xla_total_seconds=3.0, baseline_total_seconds=4.0)
    assert fmt.total_time(c) == "3.00 s with XLA vs 4.00 s without (25% less)"
    none = RunSummary(xla_evidence=XlaEvidence(compiled=False))
    assert fmt.evidence(none) == "none: XLA compiled nothing"
    assert fmt.evidence(None) == fmt.DASH
    some = RunSummary(xla_evidence=XlaEvidence(hlo_modules=2, fusions=9, compiled_log_line=True))
    assert fmt.evidence(some) == "2 HLO modules, 9 fusions; log: “Compiled cluster using XLA”"


def interleaved_comparison(**kw: object) -> Comparison:
    i = InterleavedSummary(
        ratio=2.5,
        low=2.4,
        high=2.6,
        pairs=30,
        block_steps=1,
        half_width=0.04,
        stopped_by="budget",
        measuring_seconds=120.0,
        baseline=ArmTiming("baseline", "off", steady_step_seconds=0.8),
        xla=ArmTiming("xla", "jit", steady_step_seconds=2.0),
    )
    c = Comparison(
        speedup=Interval(0.4, 1 / 2.6, 1 / 2.4, "pairs"),
        interleaved=i,
        baseline_steady_step_seconds=0.8,
        xla_steady_step_seconds=2.0,
        runs_compared={"baseline": 0, "xla": 0, "interleaved_pairs": 30},
    )
    for k, v in kw.items():
        setattr(c, k, v)
    return c


def test_a_speed_only_comparison_has_the_measurement_rows_and_no_training_rows() -> None:
    rows = dict(fmt.comparison_rows(interleaved_comparison()))
    assert rows["Speed per training step"] == "2.50× slower (95% CI 2.40–2.60×)"
    assert rows["Measured on"] == "from 30 interleaved pairs of 1-step blocks"
    assert rows["Steady step"] == "2.00 s with XLA vs 0.80 s without"
    assert rows["Measurement"].startswith("budget spent after 30 pairs, 120 s of measuring")
    assert rows["Compile cost"] == "not measurable"
    assert rows["Runs compared"] == "30 interleaved pairs"
    for training_only in ("Total wall time", "Break-even", "Accuracy", "Speed per steady epoch"):
        assert training_only not in rows
    assert set(rows) <= set(fmt.COMPARISON_ROW_NAMES)


def test_compile_cost_is_never_negative() -> None:
    assert fmt.compile_cost(interleaved_comparison(extra_compile_seconds=3.25)) == (
        "+3.25 s over the baseline's first step"
    )
    assert fmt.overhead(-0.26) == "not measurable"
    assert fmt.overhead(0.0) == "not measurable"
    assert fmt.overhead(1.5) == "1.50 s"


def test_arm_bars_rank_and_mark_the_arms() -> None:
    from xlagui.core.analysis.pairs import (
        ArmResult,
        InterleavedSummary,
        Recommendation,
        RecommendationKind,
    )
    from xlagui.core.analysis.stats import Comparison
    from xlagui.present import format as fmt

    arms = [
        ArmResult(arm="jit", variant="xla", ratio=2.0, low=1.9, high=2.1),
        ArmResult(arm="bf16", variant="bf16", ratio=0.5, low=0.45, high=0.55),
        ArmResult(arm="fp16", variant="fp16", ratio=0.4, low=0.35, high=0.45, valid=False),
        ArmResult(arm="jit+bf16", variant="jit+bf16", ratio=0.8, accuracy_ok=False),
    ]
    rec = Recommendation(RecommendationKind.RECOMMENDED, arm="bf16", speedup=2.0,
                         low=1.8, high=2.2)
    c = Comparison(interleaved=InterleavedSummary(arms=arms), recommended_arm="bf16",
                   recommendation=rec, verdict_kind="speed_measured",
                   speedup=Interval(0.5, 0.45, 0.55, "pairs"))
    bars = arm_bars(c)
    assert [(b.arm, b.speedup, b.mark, b.recommended) for b in bars] == [
        ("fp16", 2.5, "NOT VALID", False), ("bf16", 2.0, "", True),
        ("jit+bf16", 1.25, "learns worse", False), ("jit", 0.5, "", False)]
    assert bars[1].low == pytest.approx(1 / 0.55) and bars[2].low is None
    assert fmt.other_arms(c)
    # The recommendation is not in the verdict: it is said after the arms table.
    assert fmt.question_verdict(c).startswith("XLA was 2.00× slower per training step")
    assert "bf16" not in fmt.question_verdict(c)
    only_xla = Comparison(interleaved=InterleavedSummary(arms=arms[:1]))
    assert not fmt.other_arms(only_xla)


def test_problems_beside_the_verdict_are_chosen_by_its_kind_not_its_text() -> None:
    from xlagui.core.analysis.stats import NO_SPEED, NOT_COMPARED, SPEED_MEASURED, Comparison
    from xlagui.core.protocol.problems import Problem
    from xlagui.present import format as fmt

    problems = ["run 02 asked for XLA but XLA compiled nothing", "too few epochs"]
    shown = {
        (kind, valid): fmt.problems_beside_verdict(
            Comparison(verdict_kind=kind, valid=valid,
                       problems=[Problem.from_saved(p) for p in problems]))
        for kind in (SPEED_MEASURED, NO_SPEED, NOT_COMPARED) for valid in (True, False)
    }
    assert shown[(SPEED_MEASURED, True)] == problems  # a valid verdict lists none of them
    assert shown[(SPEED_MEASURED, False)] == []  # "NOT A VALID COMPARISON: …" lists them all
    assert shown[(NO_SPEED, True)] == []  # "Not enough measurements … <problems>"
    assert shown[(NOT_COMPARED, False)] == problems[:1]  # "Not compared: <the last one>"


def test_the_runs_of_a_saved_comparison() -> None:
    """History's Runs column (issue 31: "Runs 0" for a speed-only comparison)."""
    assert fmt.runs_done(2, 0) == "2"
    assert fmt.runs_done(1, 1) == "1 + 1 interrupted"
    assert fmt.runs_done(0, 0, pairs=8) == "speed only, 8 pairs"
    assert fmt.runs_done(0, 0, pairs=1) == "speed only, 1 pair"
    assert fmt.runs_done(2, 0, pairs=8) == "2"


def test_an_arms_compile_cost_is_its_extra_over_the_baselines() -> None:
    """"Compile cost" means one thing: the extra over the baseline's first step (each less its
    steady step), for XLA and for every arm; never an arm's whole first step (bf16's "+9.53 s
    in its first step" was its whole compile and warm-up, its extra about 0.5 s)."""
    from tests.helpers.reports import comparison_report
    from xlagui.present.costs import arm_compile_cost

    # Each worker's first step is 3 steady steps: 0.4 s beyond for the baseline (0.2 s a
    # step), 0.2 s for XLA (0.1 s), 0.6 s for slow (0.3 s), 0.1 s for fast (0.05 s).
    c = comparison_report(arms=("bf16", "fp16"), steps={"bf16": 0.3, "fp16": 0.05}).comparison
    arms = {a.arm: a for a in c.interleaved.arms}
    assert arms["bf16"].extra_compile_seconds == pytest.approx(0.2)
    assert arm_compile_cost(arms["bf16"]) == "+0.20 s over the baseline's first step"
    assert arm_compile_cost(arms["fp16"]) == (
        "none (its first step was 0.30 s shorter than the baseline's)")
    rows = dict(fmt.arm_figures(comparison_report(arms=("bf16",), steps={"bf16": 0.3}),
                                arms["bf16"]))
    assert rows["Compile cost"] == "+0.20 s over the baseline's first step"
