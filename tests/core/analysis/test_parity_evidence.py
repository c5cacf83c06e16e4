"""The why's parity as accuracy evidence (`ranking.with_parity`): where nothing else says how an
arm learns, an arm in float32 whose first steps stay the baseline's is recommended as one that
trains the baseline's model, one whose steps diverge is passed over; a precision lever's drift
says nothing, and a verdict from training runs is never overridden."""

from __future__ import annotations

from xlagui.core.analysis.accuracy import AccuracyKind, AccuracyVerdict
from xlagui.core.analysis.pairs import ArmResult
from xlagui.core.analysis.parity import Parity, ParityKind
from xlagui.core.analysis.ranking import recommendation, with_parity
from xlagui.core.analysis.recommendation import RecommendationKind
from xlagui.core.protocol.arms import parse_arm
from xlagui.present.verdicts import accuracy_source, accuracy_words, recommendation_sentence

UNKNOWN = AccuracyVerdict(AccuracyKind.TOO_EARLY, arm=0.6, baseline=0.61, steps=40)


def parity(kind: ParityKind) -> Parity:
    return Parity(steps=20, max_rel_loss_diff=1e-4, max_rel_output_diff=1e-3, kind=kind)


def test_the_baselines_numbers_are_evidence_where_nothing_else_is() -> None:
    same = with_parity(UNKNOWN, parity(ParityKind.SAME), parse_arm("jit"))
    assert same.kind is AccuracyKind.SAME_NUMBERS and same.ok is True and same.steps == 20
    diverging = with_parity(UNKNOWN, parity(ParityKind.DIVERGES), parse_arm("autocluster"))
    assert diverging.kind is AccuracyKind.DIVERGING_NUMBERS and diverging.ok is False
    # bf16 computes another function: its drift, even "same", says nothing of its accuracy.
    for kind in ParityKind:
        assert with_parity(UNKNOWN, parity(kind), parse_arm("bf16")).kind in (
            AccuracyKind.TOO_EARLY, AccuracyKind.DIVERGING_NUMBERS)
    assert with_parity(UNKNOWN, parity(ParityKind.PRECISION_DRIFT),
                       parse_arm("jit+bf16")) is UNKNOWN
    assert with_parity(UNKNOWN, None, parse_arm("jit")) is UNKNOWN
    trained = AccuracyVerdict(AccuracyKind.WORSE, arm=0.5, baseline=0.6, epochs=5)
    assert with_parity(trained, parity(ParityKind.SAME), parse_arm("jit")) is trained


def arm(name: str, ratio: float, verdict: AccuracyVerdict) -> ArmResult:
    return ArmResult(arm=name, variant=name, ratio=ratio, low=ratio * 0.97, high=ratio * 1.03,
                     pairs=20, adjusted_low=ratio * 0.96, adjusted_high=ratio * 1.04,
                     accuracy=verdict, accuracy_ok=verdict.ok, accuracy_kind=verdict.kind.value)


def test_the_recommendation_follows_the_parity() -> None:
    before = recommendation([arm("jit", 0.5, UNKNOWN), arm("bf16", 0.9, UNKNOWN)])
    assert before is not None and before.kind is RecommendationKind.ACCURACY_UNKNOWN
    same = with_parity(UNKNOWN, parity(ParityKind.SAME), parse_arm("jit"))
    after = recommendation([arm("jit", 0.5, same), arm("bf16", 0.9, UNKNOWN)])
    assert after is not None and after.kind is RecommendationKind.RECOMMENDED
    assert after.arm == "jit" and "baseline's numbers" in recommendation_sentence(after)
    diverging = with_parity(UNKNOWN, parity(ParityKind.DIVERGES), parse_arm("jit"))
    passed = recommendation([arm("jit", 0.5, diverging), arm("bf16", 0.8, UNKNOWN)])
    assert passed is not None and passed.arm == "bf16"
    assert [p.arm for p in passed.passed_over] == ["jit"]
    assert "diverged beyond float32 rounding" in recommendation_sentence(passed)


def test_the_words_say_where_the_evidence_came_from() -> None:
    same = with_parity(UNKNOWN, parity(ParityKind.SAME), parse_arm("jit"))
    assert "first 20 steps" in accuracy_words(same)
    assert accuracy_source(same) == "the why's 20 parity steps beside the baseline's"
