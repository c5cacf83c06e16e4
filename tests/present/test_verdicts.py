"""The verdicts in words: each kind of verdict, break-even, accuracy verdict and recommendation
said from the core's data, word for word as the CLI, the window, the PNG and the Markdown show
it; the window's short verdict and the History list from the same data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.reports import comparison_report
from xlagui.core.analysis.accuracy import AccuracyKind, AccuracyVerdict
from xlagui.core.analysis.pairs import (
    ArmResult,
    InterleavedSummary,
    PassedOver,
    Recommendation,
    RecommendationKind,
)
from xlagui.core.analysis.ranking import recommendation
from xlagui.core.analysis.stats import (
    CAUGHT_UP,
    EXTRAPOLATED,
    NEVER,
    NO_EPOCHS,
    NO_SPEED,
    NOT_COMPARED,
    NOT_WITHIN,
    SPEED_MEASURED,
    BreakEven,
    Comparison,
    Interval,
)
from xlagui.core.protocol.problems import Problem, ProblemKind
from xlagui.core.results import history
from xlagui.present import format as fmt
from xlagui.present.format import measurement_end
from xlagui.present.verdicts import (
    accuracy_source,
    accuracy_words,
    break_even_words,
    history_verdict,
    recommendation_sentence,
    short_verdict,
    stop_sentence,
    verdict_sentence,
)

TRAINED = {"baseline": 1, "xla": 1}


def trained(speedup: Interval | None, **figures: object) -> Comparison:
    """A comparison of one training run a side, its speed from the epochs."""
    return Comparison(speedup=speedup, runs_compared=dict(TRAINED),
                      verdict_kind=SPEED_MEASURED if speedup else NO_SPEED,
                      **figures)  # type: ignore[arg-type]


def test_faster_with_its_compile_paid_back() -> None:
    c = trained(Interval(2.0, 1.8, 2.2, "m"), extra_compile_seconds=6.0,
                break_even=BreakEven(EXTRAPOLATED, 7, 3), total_time_ratio=1.4)
    assert verdict_sentence(c) == (
        "XLA was 2.00× faster per epoch (95% CI 1.80–2.20×, from epochs); its 6.0 s compile is "
        "paid back by epoch 7 (extrapolated from the steady epoch times). Total wall time: 40% "
        "more than the baseline."
    )


def test_slower_never_pays_back_its_compile() -> None:
    c = trained(Interval(10 / 21, 0.45, 0.5, "m"), extra_compile_seconds=27.0,
                break_even=BreakEven(NEVER, measured_epochs=3), total_time_ratio=2.0)
    assert verdict_sentence(c) == (
        "XLA was 2.10× slower per epoch (95% CI 2.00–2.22×, from epochs) and never pays back "
        "its 27 s compile. Total wall time: 100% more than the baseline."
    )


def test_no_clear_difference_and_a_compile_not_paid_back() -> None:
    c = trained(Interval(1.05, 0.9, 1.2, "m"), extra_compile_seconds=3.0,
                break_even=BreakEven(NOT_WITHIN, measured_epochs=4))
    assert verdict_sentence(c) == (
        "XLA made no clear difference per epoch (1.05× faster, 95% CI 1.11× slower to 1.20× "
        "faster, from epochs: the interval includes no difference); its 3.0 s compile was not "
        "paid back within the measured epochs."
    )


def test_a_single_measurement_and_a_compile_too_small_to_see() -> None:
    c = trained(Interval(2.0, None, None, "m"), break_even=BreakEven(CAUGHT_UP, 1, 2))
    assert verdict_sentence(c) == (
        "XLA was 2.00× faster per epoch (too few epochs for an interval: a single "
        "measurement); its extra compile time was not measurable."
    )


def test_interleaved_speed_only_with_how_the_measurement_ended() -> None:
    i = InterleavedSummary(ratio=2.5, pairs=10, block_steps=5, stopped_by="stopped",
                           half_width=0.021)
    c = Comparison(speedup=Interval(0.4, 0.38, 0.42, "m"), interleaved=i,
                   extra_compile_seconds=1.2, runs_compared={"baseline": 0, "xla": 0},
                   verdict_kind=SPEED_MEASURED)
    assert verdict_sentence(c) == (
        "XLA was 2.50× slower per training step (95% CI 2.38–2.63×, from 10 interleaved pairs "
        "of 5-step blocks); compiling cost it 1.2 s once. The measurement was stopped after 10 "
        "pairs (±2.1%)."
    )
    i.stopped_by, i.pairs, i.half_width = "error", 4, 0.05
    assert verdict_sentence(c).endswith(
        " A worker failed after 4 pairs; the pairs before it are kept (±5.0%).")
    i.stopped_by = "target"  # reached: nothing to add
    assert verdict_sentence(c).endswith("compiling cost it 1.2 s once.")


def test_a_spent_budget_names_the_arm_whose_interval_held_it() -> None:
    # The stopping rule waits for the widest interval: with XLA at ±2.9% and bf16 at ±5.1%, the
    # sentence must not read as if ±2.9% had missed a ±3% target.
    arms = [
        ArmResult(arm="jit", variant="xla", ratio=2.1, half_width=0.029),
        ArmResult(arm="bf16", variant="bf16", ratio=0.55, half_width=0.051),
    ]
    i = InterleavedSummary(
        ratio=2.1, pairs=40, stopped_by="budget", half_width=0.029, target=0.03, arms=arms
    )
    assert stop_sentence(i) == (
        "The time budget ran out before every arm's interval reached ±3% (widest: bf16 ±5.1%)."
    )
    assert measurement_end(Comparison(interleaved=i)).endswith("(widest: bf16 ±5.1%)")
    # XLA alone: its own precision, as before.
    alone = InterleavedSummary(
        ratio=2.1, pairs=40, stopped_by="budget", half_width=0.05, target=0.03, arms=arms[:1]
    )
    assert stop_sentence(alone) == (
        "The time budget ran out before the ±3% precision was reached (±5.0%)."
    )


def test_an_accuracy_that_differs_and_an_invalid_comparison_are_said_in_the_verdict() -> None:
    worse = AccuracyVerdict(AccuracyKind.WORSE, arm=0.61, baseline=0.91, images=200, seeds=3,
                            difference=-0.30, noise=0.02, epochs=3, arm_runs=3)
    c = trained(Interval(2.0, 1.8, 2.2, "m"), extra_compile_seconds=6.0,
                break_even=BreakEven(CAUGHT_UP, 1, 3), accuracy=worse, accuracy_differs=True,
                valid=False, problems=[
                    Problem(ProblemKind.XLA_COMPILED_NOTHING, "02-xla-r1", asked="jit")])
    assert verdict_sentence(c) == (
        "NOT A VALID COMPARISON: run 02-xla-r1 asked for XLA (jit) but XLA compiled nothing: it "
        "is not an XLA run and is not compared as one. XLA was 2.00× faster per epoch (95% CI "
        "1.80–2.20×, from epochs). Accuracy differs beyond noise: validation accuracy: learns "
        "worse: 61.0% vs 91.0% baseline after 3 epochs, 30.0% below, beyond the ±2.0% over 3 "
        "seeds and 200 images."
    )


def test_nothing_to_compare_says_why() -> None:
    none = Comparison(verdict_kind=NO_SPEED, runs_compared=dict(TRAINED),
                      problems=[Problem(ProblemKind.TOO_FEW_EPOCHS)])
    assert verdict_sentence(none) == (
        "Not enough measurements to compare steady-state speed. too few epochs for a "
        "steady-state time: run at least 2"
    )
    lone = Comparison(verdict_kind=NOT_COMPARED, valid=False, problems=[
        Problem(ProblemKind.NO_RUNS_TO_COMPARE)])
    assert verdict_sentence(lone) == (
        "Not compared: a comparison needs at least one finished baseline and one XLA run."
    )
    assert fmt.question_verdict(lone) == verdict_sentence(lone)


def test_the_windows_short_verdict_comes_from_the_data_not_from_splitting_the_sentence() -> None:
    """What the window says when a comparison finishes: the speed and the compile, or why
    there is no valid answer, whole, even when a problem has a full stop inside it (the
    sentence split at its first ". " would cut it there)."""
    c = trained(Interval(2.0, 1.8, 2.2, "m"), extra_compile_seconds=6.0,
                break_even=BreakEven(EXTRAPOLATED, 7, 3), total_time_ratio=1.4)
    assert short_verdict(c) == (
        "XLA was 2.00× faster per epoch (95% CI 1.80–2.20×, from epochs); its 6.0 s compile is "
        "paid back by epoch 7 (extrapolated from the steady epoch times)."
    )
    c.valid = False
    # Problems as an older comparison kept them, in words.
    c.problems = [Problem.from_saved("run 02 crashed. Its log says why"),
                  Problem.from_saved("baseline run 01 shows XLA compiling")]
    assert short_verdict(c) == (
        "NOT A VALID COMPARISON: run 02 crashed. Its log says why; baseline run 01 shows XLA "
        "compiling."
    )
    c.speedup = None
    assert short_verdict(c) == "Not enough measurements to compare steady-state speed."


@pytest.mark.parametrize(
    ("break_even", "words"),
    [
        (BreakEven(CAUGHT_UP, 2, 3), "epoch 2"),
        (BreakEven(EXTRAPOLATED, 4, 2), "epoch 4 (extrapolated from the steady epoch times)"),
        (BreakEven(NEVER, measured_epochs=3), "never"),
        (BreakEven(NOT_WITHIN, measured_epochs=4),
         "not within the 4 measured epochs (XLA is not clearly faster per epoch, so it may "
         "never catch up)"),
        (BreakEven(NO_EPOCHS), "unknown (no epochs)"),
        (None, ""),
    ],
)
def test_break_even_in_words(break_even: BreakEven | None, words: str) -> None:
    assert break_even_words(break_even) == words
    c = trained(Interval(2.0, 1.8, 2.2, "m"), break_even=break_even)
    assert dict(fmt.comparison_rows(c))["Break-even"] == (words or fmt.DASH)


def test_every_accuracy_verdict_in_words() -> None:
    early = AccuracyVerdict(AccuracyKind.TOO_EARLY, arm=0.875, baseline=0.985, images=200,
                            steps=115, arm_runs=1)
    assert accuracy_words(early) == (
        "not enough training to compare accuracy (115 steps): 87.5% vs 98.5% baseline; early "
        "in training one seed's luck can outweigh any arm"
    )
    assert accuracy_source(early) == "after the 115 steps of the measurement"
    assert accuracy_words(AccuracyVerdict(AccuracyKind.NONFINITE, arm=0.5, nonfinite=3)) == (
        "its loss was not finite in 3 measured block(s)"
    )
    assert accuracy_words(AccuracyVerdict(AccuracyKind.NO_DATA)) == (
        "no validation accuracy to compare")
    assert accuracy_words(AccuracyVerdict(AccuracyKind.UNEQUAL_STEPS, 0.92, 0.98, steps=34)) == (
        "not compared: 92.0% vs 98.0% baseline, after unequal training (this slower arm sat "
        "out rounds)"
    )
    chance = AccuracyVerdict(AccuracyKind.AT_CHANCE, 0.9, 0.51, images=100, epochs=2,
                             chance=0.5)
    assert accuracy_words(chance) == (
        "not trained enough to compare: 90.0% vs 51.0% baseline after 2 epochs, the baseline at "
        "chance level (50%)"
    )
    one = AccuracyVerdict(AccuracyKind.ONE_SEED, 0.85, 1.0, images=200, seeds=1, epochs=5,
                          p_value=1.9e-9, arm_runs=1)
    assert accuracy_words(one) == (
        "85.0% vs 100.0% baseline after 5 epochs on 200 images, one seed each: the seed-to-seed "
        "spread of training is not measured, so no verdict (--repeats 2 or more measures it); "
        "McNemar on these images p = 1.9e-09 (the two models differ here, but one seed cannot "
        "pin that on the arm)"
    )
    assert accuracy_source(one) == "training runs (5 epochs)"
    same = AccuracyVerdict(AccuracyKind.SAME, 0.91, 0.9, images=200, seeds=2, difference=0.01,
                           noise=0.03, epochs=1, arm_runs=2)
    assert accuracy_words(same) == (
        "91.0% vs 90.0% baseline after 1 epoch, within the ±3.0% over 2 seeds and 200 images")
    assert accuracy_source(same) == "training runs (1 epoch, 2 seeds)"
    better = AccuracyVerdict(AccuracyKind.BETTER, 0.95, 0.9, images=200, seeds=3,
                             difference=0.05, noise=0.02)
    assert accuracy_words(better) == (
        "learns better: 95.0% vs 90.0% baseline, 5.0% above, beyond the ±2.0% over 3 seeds "
        "and 200 images"
    )
    assert accuracy_words(None) == accuracy_source(None) == ""
    # An arm's accuracy column: the verdict, and what it was measured on once it is one.
    arm = ArmResult(arm="bf16", variant="bf16", accuracy_ok=True, accuracy=same)
    assert fmt.arm_accuracy(arm) == f"as well: {accuracy_words(same)} (training runs (1 epoch, " \
        "2 seeds))"
    assert fmt.arm_accuracy(ArmResult(arm="bf16", variant="bf16", accuracy=early)) == (
        accuracy_words(early))
    assert fmt.arm_accuracy(ArmResult(arm="bf16", variant="bf16")) == fmt.DASH


EARLY = AccuracyVerdict(AccuracyKind.TOO_EARLY, arm=0.6, baseline=0.9, images=200, steps=40)


@pytest.mark.parametrize(
    ("rec", "sentence"),
    [
        (Recommendation(RecommendationKind.RECOMMENDED, arm="bf16",
                        speedup=2.0, low=1.9, high=2.1, adjusted_for=3),
         "On this machine, the fastest configuration that learns as well is bf16 "
         "(mixed_bfloat16), 2.00× faster per step (95% CI 1.90–2.10×, Bonferroni-adjusted for 3 "
         "arms)."),
        (Recommendation(RecommendationKind.TIED, arm="bf16",
                        speedup=2.0, low=1.85, high=2.17, adjusted_for=3,
                        tied=("jit+bf16", "bf16"), simpler=True),
         "On this machine, jit+bf16 and bf16 are tied (their adjusted intervals overlap); bf16 "
         "is simpler: 2.00× faster per step (95% CI 1.85–2.17×, Bonferroni-adjusted for 3 "
         "arms)."),
        (Recommendation(RecommendationKind.TIED, arm="jit",
                        speedup=2.2, low=2.0, high=2.4, adjusted_for=3,
                        tied=("jit", "autocluster", "auto"), simpler=False),
         "On this machine, jit, autocluster and auto are tied (their adjusted intervals "
         "overlap); jit is the fastest estimate: 2.20× faster per step (95% CI 2.00–2.40×, "
         "Bonferroni-adjusted for 3 arms)."),
        (Recommendation(RecommendationKind.ACCURACY_UNKNOWN, arm="fp16",
                        speedup=2.5, low=2.4, high=2.6, accuracy=EARLY),
         "On this machine, the fastest configuration is fp16 (mixed_float16), 2.50× faster per "
         "step (95% CI 2.40–2.60×); whether it learns as well is not known: not enough training "
         "to compare accuracy (40 steps): 60.0% vs 90.0% baseline; early in training one seed's "
         "luck can outweigh any arm."),
        (Recommendation(RecommendationKind.NONE_FASTER),
         "On this machine, no configuration measured was clearly faster than the baseline."),
        (Recommendation(RecommendationKind.NONE_RECOMMENDABLE, passed_over=(
            PassedOver("fp16", 1 / 0.3, valid=False, problems=(
                Problem.from_saved("m4: asked for fp16 but float32"),
                Problem.from_saved("m4: no loss scale"))),
            PassedOver("bf16", 2.0, accuracy=AccuracyVerdict(
                AccuracyKind.NONFINITE, nonfinite=2)))),
         "On this machine, no configuration that was clearly faster can be recommended. fp16 "
         "was faster (3.33×) but is not recommended: m4: asked for fp16 but float32; m4: no loss "
         "scale. bf16 was faster (2.00×) but is not recommended: its loss was not finite in 2 "
         "measured block(s)."),
    ],
    ids=lambda v: v.kind.value if isinstance(v, Recommendation) else None,
)
def test_each_kind_of_recommendation_in_words(rec: Recommendation, sentence: str) -> None:
    assert recommendation_sentence(rec) == sentence
    # As comparison.json keeps it, and reads it back.
    assert Recommendation.from_dict(json.loads(json.dumps(Comparison(
        recommendation=rec).to_dict()))["recommendation"]) == rec


def test_no_recommendation_says_nothing() -> None:
    assert recommendation_sentence(None) == ""


def test_the_ranking_rule_in_words() -> None:
    def adjusted(name: str, ratio: float, adj: tuple[float, float]) -> ArmResult:
        return ArmResult(arm=name, variant=name, ratio=ratio, low=adj[0] * 1.01,
                         high=adj[1] * 0.99, adjusted_low=adj[0], adjusted_high=adj[1], pairs=30,
                         accuracy_ok=True)

    text = recommendation_sentence(recommendation([
        adjusted("jit", 2.2, (2.1, 2.3)), adjusted("bf16", 0.50, (0.46, 0.54)),
        adjusted("jit+bf16", 0.48, (0.44, 0.52))]))
    assert text == (
        "On this machine, jit+bf16 and bf16 are tied (their adjusted intervals overlap); bf16 is "
        "simpler: 2.00× faster per step (95% CI 1.85–2.17×, Bonferroni-adjusted for 3 arms)."
    )


def _in_old_words(data: dict[str, Any]) -> str:
    """`data` (a comparison.json) as versions before verdicts were data wrote it: sentences,
    nothing typed. The verdict written is the one its record gives, so a reader can tell it
    from one said again."""
    comp = data["comparison"]
    words = "OLD: " + verdict_sentence(Comparison.from_dict(comp))
    rec = comp.pop("recommendation")
    comp["recommendation"] = recommendation_sentence(
        Recommendation.from_dict(rec)) if rec else ""
    for arm in comp["interleaved"]["arms"]:
        verdict = arm.pop("accuracy")
        arm["accuracy_text"] = "in words" if verdict else ""
        arm["accuracy_from"] = "after the 40 steps of the measurement"
    comp.pop("break_even")
    comp.pop("accuracy")
    comp.update(verdict=words, accuracy_text="", break_even_text="", break_even_epoch=None)
    return words


def test_history_says_a_new_verdict_from_its_record_and_keeps_an_old_ones_sentence(
    tmp_path: Path,
) -> None:
    report = comparison_report(arms=("bf16",), training=True, jitter=0.05, rounds=12)
    c = report.comparison
    assert c is not None and c.recommendation is not None
    new, old = tmp_path / "new", tmp_path / "old"
    history.save(report, new)
    data = json.loads((new / "comparison.json").read_text(encoding="utf-8"))
    words = _in_old_words(data)
    old.mkdir()
    (old / "comparison.json").write_text(json.dumps(data), encoding="utf-8")
    items = {i.folder.name: i for i in history.list_items(tmp_path)}
    assert set(items) == {"new", "old"}
    assert items["new"].comparison is not None and items["new"].saved_verdict == ""
    assert history_verdict(items["new"]) == verdict_sentence(c)
    assert items["old"].comparison is None and history_verdict(items["old"]) == words
    # Reopened, the old one is derived from its events again: the same data as the new one.
    again = history.load(items["old"]).comparison
    assert again is not None and again.recommendation == c.recommendation
    assert again.interleaved is not None and c.interleaved is not None
    assert [a.accuracy for a in again.interleaved.arms] == [a.accuracy for a in c.interleaved.arms]
    assert verdict_sentence(again) == verdict_sentence(c)
    assert recommendation_sentence(again.recommendation) == recommendation_sentence(
        c.recommendation)
