from __future__ import annotations

import dataclasses
import json
import math

import pytest

from tests.helpers.streams import run_events
from xlagui.core.analysis.accuracy import AccuracyKind
from xlagui.core.analysis.notes import RunNote
from xlagui.core.analysis.stats import (
    CAUGHT_UP,
    EXTRAPOLATED,
    NEVER,
    NOT_WITHIN,
    SPEED_MEASURED,
    BreakEven,
    Comparison,
    IntervalBasis,
    RunRecord,
    break_even,
    compare_runs,
    epoch_events,
    ratio_interval,
    steady_epochs,
    summarize_epochs,
)
from xlagui.core.protocol.events import EpochEvent
from xlagui.core.protocol.omissions import Omission, OmissionKind
from xlagui.core.protocol.problems import Problem, ProblemKind
from xlagui.core.xla.evidence import XlaEvidence
from xlagui.present.notes import comparison_notes
from xlagui.present.problems import comparison_problem, comparison_problems


def record(
    variant: str,
    secs: tuple[float, ...],
    *,
    repeat: int = 1,
    rss: int = 100,
    acc: float = 0.9,
    compiled: bool | None = None,
    val_count: int = 200,
) -> RunRecord:
    mode = "off" if variant == "baseline" else "jit"
    events = run_events(
        variant=variant,
        xla_mode=mode,
        epoch_seconds=secs,
        val_accuracy=[acc] * len(secs),
        peak_rss=rss,
        compiled=compiled,
    )
    summary = dataclasses.replace(
        summarize_epochs(epoch_events(events)),
        peak_rss_bytes=rss,
        xla_evidence=XlaEvidence(compiled=(mode != "off") if compiled is None else compiled),
    )
    return RunRecord(f"{variant}{repeat}", variant, repeat, mode, summary, val_count)


def test_run_summary_known_answers() -> None:
    s = summarize_epochs(epoch_events(run_events(epoch_seconds=(10.0, 2.0, 4.0, 3.0))))
    assert s.total_seconds == pytest.approx(19.0)
    assert s.first_epoch_seconds == 10.0
    assert s.steady_epoch_seconds == 3.0  # median of 2, 4, 3
    assert s.compile_overhead_seconds == pytest.approx(7.0)
    assert s.steady_epoch_stdev == pytest.approx(1.0)
    assert s.cumulative_seconds == (10.0, 12.0, 16.0, 19.0)


def test_speedup_across_epochs_with_interval() -> None:
    c = compare_runs([record("baseline", (3, 2, 2.2, 1.8)), record("xla", (9, 1, 1.1, 0.9))])
    assert c.speedup is not None
    assert c.speedup.value == pytest.approx(2.0, rel=0.02)
    assert c.speedup.low is not None and c.speedup.high is not None
    assert c.speedup.low < 2.0 < c.speedup.high
    assert c.speedup.basis == IntervalBasis.EPOCHS and c.speedup.method == ""
    assert c.total_time_ratio == pytest.approx(12 / 9)
    assert c.verdict_kind == SPEED_MEASURED and c.interleaved is None  # said per epoch


def test_speedup_across_repeats_when_repeated() -> None:
    runs = [
        record("baseline", (3, 2, 2), repeat=1),
        record("xla", (5, 1, 1), repeat=1),
        record("baseline", (3, 2.2, 2.2), repeat=2),
        record("xla", (5, 1.1, 1.1), repeat=2),
    ]
    c = compare_runs(runs)
    assert c.speedup is not None
    assert (c.speedup.basis, c.speedup.count) == (IntervalBasis.REPEATS, 2)
    assert c.speedup.value == pytest.approx(2.0, rel=0.01)


def test_identical_samples_give_a_degenerate_interval() -> None:
    iv = ratio_interval([2.0, 2.0], [1.0, 1.0], IntervalBasis.EPOCHS)
    assert (iv.value, iv.low, iv.high) == (2.0, 2.0, 2.0)


def test_interval_known_answer_worked_by_hand() -> None:
    """Geometric means 2 and 1, so the ratio is 2. On the log scale both sides are ln 2 ± ln 2:
    each mean's variance is (ln 2)², the standard error √2·ln 2 = 0.9803, Welch's df is exactly
    2, and the t table's 97.5% point for 2 df is 4.303. Half-width 4.303 × 0.9803 = 4.218, so
    the interval is 2·e^∓4.218 = 0.02946 to 135.8."""
    iv = ratio_interval([4.0, 1.0], [2.0, 0.5], IntervalBasis.EPOCHS)
    assert iv.value == pytest.approx(2.0)
    assert iv.low == pytest.approx(0.02946, rel=1e-3)
    assert iv.high == pytest.approx(135.8, rel=1e-3)


def test_interval_agrees_with_scipys_welch_test() -> None:
    """Unequal sizes and spreads, checked against SciPy's own Welch t-test on the logs."""
    import numpy as np
    from scipy import stats

    b, x = [2.0, 2.2, 1.9], [1.0, 1.3]
    welch = stats.ttest_ind(np.log(b), np.log(x), equal_var=False).confidence_interval(0.95)
    iv = ratio_interval(b, x, IntervalBasis.EPOCHS)
    assert iv.value == pytest.approx((2.0 * 2.2 * 1.9) ** (1 / 3) / (1.0 * 1.3) ** (1 / 2))
    assert iv.low == pytest.approx(math.exp(welch.low))
    assert iv.high == pytest.approx(math.exp(welch.high))


def test_xla_slower_never_breaks_even() -> None:
    c = compare_runs([record("baseline", (10, 10, 10)), record("xla", (48, 21, 21))])
    assert c.break_even_epoch is None and c.break_even == BreakEven(NEVER, measured_epochs=3)
    assert c.speedup is not None and c.speedup.value == pytest.approx(10 / 21)
    assert c.extra_compile_seconds == pytest.approx(27)


@pytest.mark.parametrize(
    ("base", "xla", "expected"),
    [
        # caught up at epoch 2 (equal counts)
        ([10, 20, 30], [15, 20, 25], BreakEven(CAUGHT_UP, 2, 3)),
        ([10, 20, 30], [5, 10, 15], BreakEven(CAUGHT_UP, 1, 3)),
        # Behind by 30 - 20 = 10 s after epoch 2, gaining 10 - 5 = 5 s per epoch: caught up
        # 2 epochs later, beyond what was measured.
        ([10, 20], [25, 30], BreakEven(EXTRAPOLATED, 4, 2)),
        ([10, 20], [25, 40], BreakEven(NEVER, None, 2)),  # slower per epoch
    ],
)
def test_break_even(base: list[float], xla: list[float], expected: BreakEven) -> None:
    steady_b = base[-1] - base[-2]
    steady_x = xla[-1] - xla[-2]
    assert break_even(base, xla, steady_b, steady_x) == expected


def test_no_extrapolation_when_xla_is_not_clearly_faster() -> None:
    """Medians a little in XLA's favour, a speed-up interval that includes 1: the break-even
    must not be extrapolated from noise."""
    c = compare_runs([record("baseline", (33, 30, 40, 45)), record("xla", (59, 33, 40, 39))])
    assert c.speedup is not None and c.speedup.low is not None and c.speedup.high is not None
    assert c.speedup.low < 1 < c.speedup.high
    assert c.break_even_epoch is None
    assert c.break_even == BreakEven(NOT_WITHIN, measured_epochs=4)


def test_extrapolation_when_xla_is_clearly_faster() -> None:
    c = compare_runs([record("baseline", (10, 10, 10.2, 9.8)), record("xla", (30, 5, 5.1, 4.9))])
    assert c.speedup is not None and c.speedup.low is not None and c.speedup.low > 1
    # 5 s behind after 4 epochs (45 vs 40), gaining 5 s per epoch: caught up one epoch later
    assert c.break_even_epoch == 5 and c.break_even == BreakEven(EXTRAPOLATED, 5, 4)


def test_run_that_asked_for_xla_and_got_none_is_not_compared_silently() -> None:
    c = compare_runs([record("baseline", (3, 2, 2)), record("xla", (3, 2, 2), compiled=False)])
    assert not c.valid
    assert c.problems[0] == Problem(ProblemKind.XLA_COMPILED_NOTHING, "xla1", asked="jit")
    assert "compiled nothing" in comparison_problem(c.problems[0])
    assert c.verdict_kind == SPEED_MEASURED  # a speed, but from no XLA run: `valid` says so


def test_one_seed_a_side_gives_no_accuracy_verdict_however_large_the_gap() -> None:
    """A single seed a side cannot tell the arm from the seed: 60% vs 90% is reported, not
    judged (the old rule, validation sampling noise alone, called it worse)."""
    for acc in (0.91, 0.60):
        c = compare_runs(
            [record("baseline", (3, 2, 2), acc=0.90), record("xla", (3, 1, 1), acc=acc)]
        )
        assert not c.accuracy_differs and c.accuracy_kind == "one_seed"
        assert c.accuracy is not None and c.accuracy.kind is AccuracyKind.ONE_SEED
        assert c.accuracy.ok is None and c.accuracy.seeds == 1 and c.accuracy.images == 200
        assert c.xla_val_accuracy == pytest.approx(acc)


def _seeds(variant: str, accs: tuple[float, ...]) -> list[RunRecord]:
    secs = (3, 2, 2) if variant == "baseline" else (3, 1, 1)
    return [record(variant, secs, repeat=r, acc=a) for r, a in enumerate(accs, start=1)]


def test_seed_paired_repeats_judge_against_the_seed_to_seed_spread() -> None:
    # Three seeds a side, XLA 30 points below on every seed: beyond any spread.
    worse = compare_runs(_seeds("baseline", (0.90, 0.92, 0.91)) + _seeds("xla", (0.60, 0.62, 0.61)))
    assert worse.accuracy_differs and worse.accuracy_kind == "worse"
    assert worse.accuracy is not None and worse.accuracy.kind is AccuracyKind.WORSE
    assert (worse.accuracy.seeds, worse.accuracy.images, worse.accuracy.epochs) == (3, 200, 3)
    assert worse.accuracy.difference == pytest.approx(-0.30)
    # The same mean gap, but the seeds disagree wildly: within the spread, no claim.
    spread = compare_runs(
        _seeds("baseline", (0.90, 0.60, 0.95)) + _seeds("xla", (0.55, 0.93, 0.67))
    )
    assert not spread.accuracy_differs and spread.accuracy_kind == "same"
    # Two seeds that agree to the last image do not shrink the noise below the sampling
    # noise of 200 images: 1 point apart is no "better".
    close = compare_runs(_seeds("baseline", (0.90, 0.90)) + _seeds("xla", (0.91, 0.91)))
    assert close.accuracy_kind == "same"


def test_memory_ratio_and_missing_side() -> None:
    c = compare_runs([record("baseline", (3, 2, 2), rss=100), record("xla", (3, 1, 1), rss=250)])
    assert c.memory_ratio == pytest.approx(2.5)
    lone = compare_runs([record("baseline", (3, 2, 2))])
    assert not lone.valid and lone.speedup is None


def test_a_single_steady_epoch_is_said_to_be_one_measurement() -> None:
    c = compare_runs([record("baseline", (3, 1.0)), record("xla", (9, 0.5))])
    assert c.speedup is not None and c.speedup.low is None and c.speedup.high is None
    assert c.speedup.value == pytest.approx(2.0)


def test_one_epoch_has_no_steady_state() -> None:
    c = compare_runs([record("baseline", (3,)), record("xla", (4,))])
    assert c.speedup is None
    assert Problem(ProblemKind.TOO_FEW_EPOCHS) in c.problems
    assert any("at least 2" in p for p in comparison_problems(c.problems))


def test_notes_of_the_runs_are_said_once_with_the_runs_they_concern() -> None:
    left_out = Omission(OmissionKind.TENSORBOARD, "TensorBoard is not installed")
    base = record("baseline", (10.0, 5.0, 5.0))
    xla = record("xla", (20.0, 4.0, 4.0))
    noted = [dataclasses.replace(r, summary=dataclasses.replace(r.summary, omissions=(left_out,)))
             for r in (base, xla)]
    c = compare_runs(noted)
    assert c.notes == [RunNote(OmissionKind.TENSORBOARD, left_out.said, ("baseline1", "xla1"))]
    assert comparison_notes(c) == [
        "TensorBoard files not written: TensorBoard is not installed (runs baseline1, xla1)"]
    assert c.valid  # a failed optional export does not invalidate the comparison
    assert compare_runs([noted[0], xla]).notes == [
        RunNote(OmissionKind.TENSORBOARD, left_out.said, ("baseline1",))]
    assert compare_runs([base, xla]).notes == []


def test_notes_in_words_keep_their_words() -> None:
    # A stream written before omissions says its note in words; a comparison saved then kept
    # its notes as sentences with their runs.
    note = "TensorBoard files not written: TensorBoard is not installed"
    base = record("baseline", (10.0, 5.0, 5.0))
    xla = record("xla", (20.0, 4.0, 4.0))
    noted = [dataclasses.replace(r, summary=dataclasses.replace(r.summary, notes=(note,)))
             for r in (base, xla)]
    c = compare_runs(noted)
    assert comparison_notes(c) == [f"{note} (runs baseline1, xla1)"]
    saved = Comparison.from_dict({"notes": [f"{note} (run baseline1)"]})
    assert comparison_notes(saved) == [f"{note} (run baseline1)"]
    again = Comparison.from_dict(json.loads(json.dumps(c.to_dict())))
    assert again.notes == c.notes


def _epochs(seconds: list[float], disturbed: set[int]) -> list[EpochEvent]:
    from xlagui.core.protocol.interference import Interference

    total, out = 0.0, []
    for n, s in enumerate(seconds, start=1):
        total += s
        out.append(EpochEvent(epoch=n, epoch_seconds=s, cumulative_seconds=total,
                              interference=Interference(seconds=s, cores=2,
                                                        other_share=0.4 if n in disturbed else 0.01,
                                                        disturbed=n in disturbed)))
    return out


def test_a_disturbed_epoch_is_not_steady_and_is_named() -> None:
    """Issue 37: epoch 3 ran beside another program (twice as slow); the steady epoch is the
    undisturbed ones' median, and the run says which epochs were disturbed."""
    s = summarize_epochs(_epochs([5.0, 1.0, 2.0, 1.1, 0.9], {3}))
    assert s.disturbed_epochs == (3,)
    assert s.steady_epoch_seconds == pytest.approx(1.0)  # median of 1.0, 1.1, 0.9
    assert s.steady_epoch_max == pytest.approx(1.1) and s.total_seconds == pytest.approx(10.0)
    every = summarize_epochs(_epochs([5.0, 2.0, 2.2], {2, 3}))
    assert every.disturbed_epochs == (2, 3)  # all disturbed: all of them, the run says so
    assert every.steady_epoch_seconds == pytest.approx(2.1)
    assert steady_epochs([5.0, 1.0, 2.0], disturbed=(3,)) == [1.0]
