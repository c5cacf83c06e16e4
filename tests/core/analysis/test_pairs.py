"""Interleaved statistics: known ratios recovered through drift, intervals, outliers, stopping."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from xlagui.core.analysis import pairs
from xlagui.core.measure.interleave import round_order

# The second block of a round runs this much slower than the first (the heat the first one left,
# the caches it evicted): drift within a pair, which no ratio of the pair cancels.
SECOND_PLACE_SLOWDOWN = 0.12


def drifting_pairs(
    ratio: float, n: int, *, seed: int = 1, noise: float = 0.05, alternate: bool = True
) -> list[float]:
    """Per-round ratios (arm ÷ baseline) of blocks timed one after the other while the machine's
    speed drifts by ±40% over minutes (a slow sine plus step changes) and within every round
    (`SECOND_PLACE_SLOWDOWN`), each block with its own ±noise.

    Every block has its own time slot, so nothing cancels inside a pair: the two blocks of a
    round meet different machines. Rounds alternate who goes first as the measurement does
    (`interleave.round_order`: A B, B A, …), or with `alternate` False the baseline always goes
    first."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        order = round_order(2, i) if alternate else [0, 1]
        seconds = [0.0, 0.0]
        for place, side in enumerate(order):
            t = 2 * i + place  # the block's slot on the timeline
            machine = 1 + 0.4 * math.sin(t / 14) + (0.3 if t % 34 > 25 else 0.0)
            machine *= 1 + SECOND_PLACE_SLOWDOWN * place
            work = ratio if side == 1 else 1.0
            seconds[side] = 0.8 * work * machine * math.exp(rng.gauss(0, noise))
        out.append(seconds[1] / seconds[0])
    return out


@pytest.mark.parametrize("ratio", [0.47, 1.0, 2.47])
def test_known_ratio_recovered_through_drift(ratio: float) -> None:
    ratios = drifting_pairs(ratio, 60)
    # The drift is in the pairs: a round where the arm went second says it is >8% slower than
    # it is, one where it went first >8% faster. No single pair is the answer.
    went_second = [r for i, r in enumerate(ratios) if round_order(2, i)[1] == 1]
    went_first = [r for i, r in enumerate(ratios) if round_order(2, i)[0] == 1]
    assert statistics.median(went_second) > ratio * 1.08
    assert statistics.median(went_first) < ratio / 1.08
    # Pairing with the order alternated takes it out.
    est = pairs.estimate_ratio(ratios)
    assert est.low is not None and est.high is not None
    assert est.low <= ratio <= est.high
    assert est.ratio == pytest.approx(ratio, rel=0.03)
    assert est.half_width is not None and est.half_width < 0.05


def test_pairs_in_a_fixed_order_would_keep_the_drift() -> None:
    """The same drift with the baseline always first: every pair errs the same way, and the
    estimate with it, which is why the rounds alternate."""
    est = pairs.estimate_ratio(drifting_pairs(2.0, 60, alternate=False))
    assert est.ratio > 2.0 * 1.08
    assert est.low is not None and est.low > 2.0  # confidently wrong


def test_sequential_whole_runs_would_not_recover_it() -> None:
    # The same drift, timed as two whole runs one after the other: the drift lands on one side.
    rng = random.Random(3)
    machine = [1 + 0.4 * math.sin(i / 7) for i in range(60)]
    base = sum(0.8 * m * math.exp(rng.gauss(0, 0.05)) for m in machine[:30])
    arm = sum(0.8 * 2.0 * m * math.exp(rng.gauss(0, 0.05)) for m in machine[30:])
    assert abs(arm / base - 2.0) > 0.2
    assert pairs.estimate_ratio(drifting_pairs(2.0, 60, seed=3)).ratio == pytest.approx(
        2.0, rel=0.03
    )


def test_signed_rank_ranks_match_the_published_table() -> None:
    # Published two-sided 5% critical values of Wilcoxon's T: n=10 → 8, n=20 → 52, n=30 → 137,
    # n=50 → 434; the interval's lower rank among the Walsh averages is that value + 1. Below 6
    # rounds no interval reaches 95%.
    assert pairs.signed_rank_interval(5) is None
    assert pairs.signed_rank_interval(6) == (1, 21)
    assert pairs.signed_rank_interval(10) == (9, 55 + 1 - 9)
    assert pairs.signed_rank_interval(20) == (53, 210 + 1 - 53)
    assert pairs.signed_rank_interval(30) == (138, 465 + 1 - 138)
    assert pairs.signed_rank_interval(50) == (435, 1275 + 1 - 435)
    # Past the exact table, the normal approximation lands within a rank of the exact value.
    n = pairs.EXACT_SIGNED_RANK_MAX
    exact = pairs.signed_rank_interval(n)
    pairs.EXACT_SIGNED_RANK_MAX = 0
    try:
        pairs.signed_rank_interval.cache_clear()
        approx = pairs.signed_rank_interval(n)
    finally:
        pairs.EXACT_SIGNED_RANK_MAX = n
        pairs.signed_rank_interval.cache_clear()
    assert exact is not None and approx is not None and abs(exact[0] - approx[0]) <= 1


def test_estimate_and_bounds_come_from_the_walsh_averages() -> None:
    ratios = [2.0, 2.1, 1.9, 2.05, 2.2, 1.8, 2.15, 1.95, 2.02, 2.3]
    est = pairs.estimate_ratio(ratios)
    logs = [math.log(r) for r in ratios]
    walsh = sorted((logs[i] + logs[j]) / 2 for i in range(10) for j in range(i, 10))
    assert len(walsh) == 55
    assert est.ratio == pytest.approx(math.exp(walsh[27]))  # the median of 55
    assert (est.low, est.high) == (
        pytest.approx(math.exp(walsh[8])),
        pytest.approx(math.exp(walsh[46])),
    )
    assert est.pairs == 10


def test_the_interval_covers_and_is_narrower_than_the_sign_tests() -> None:
    """Over 400 simulated measurements of 30 rounds (log-normal noise, sd 20%), the 95% interval
    holds the true ratio about 95% of the time, and is on average under 0.9 of the width of the
    sign test's interval of the median on the same rounds (the estimator used before)."""
    from scipy.stats import binom

    rng = random.Random(7)
    n, trials = 30, 400
    k = next(k for k in range(n // 2, 0, -1) if 1 - 2 * binom.cdf(k - 1, n, 0.5) >= 0.95)
    covered, width, sign_width = 0, 0.0, 0.0
    for _ in range(trials):
        ratios = [0.45 * math.exp(rng.gauss(0, 0.2)) for _ in range(n)]
        est = pairs.estimate_ratio(ratios)
        assert est.low is not None and est.high is not None
        covered += est.low <= 0.45 <= est.high
        width += est.high - est.low
        ordered = sorted(ratios)
        sign_width += ordered[n - k] - ordered[k - 1]
    assert 0.93 <= covered / trials <= 0.98
    assert width / sign_width < 0.9


def test_a_stall_now_and_then_moves_the_estimate_little() -> None:
    # One round in 15 stalls the arm's block by 60%: the estimate moves by a few percent only.
    rng = random.Random(11)
    ratios = [
        0.45 * math.exp(rng.gauss(0, 0.1)) * (1.6 if rng.random() < 1 / 15 else 1.0)
        for _ in range(60)
    ]
    assert pairs.estimate_ratio(ratios).ratio == pytest.approx(0.45, rel=0.04)


def test_too_few_pairs_have_no_interval() -> None:
    est = pairs.estimate_ratio([2.0, 2.1, 1.9])
    assert est.low is None and est.high is None and est.half_width is None


def test_the_running_estimate_is_every_prefix_estimated_from_scratch() -> None:
    """Built round on round, yet exactly (to the last bit) what estimating the rounds so far
    from scratch gives: with drift, with ties (identical rounds), with stalls flagged as
    outliers, and past the exact signed-rank table."""
    ratios = drifting_pairs(0.6, 40)
    ratios[5:9] = [ratios[4]] * 4  # ties
    ratios[20] *= 3.0  # a stall
    ratios += [0.5] * 7 + drifting_pairs(0.5, pairs.EXACT_SIGNED_RANK_MAX - 40, seed=4)
    running = pairs.RunningEstimate()
    for n, ratio in enumerate(ratios, start=1):
        est = running.add(ratio)
        if n <= 60 or n % 50 == 0 or n > pairs.EXACT_SIGNED_RANK_MAX:
            assert est == pairs.estimate_ratio(ratios[:n]), n
    assert running.pairs == len(ratios) > pairs.EXACT_SIGNED_RANK_MAX
    assert pairs.running_estimates(ratios[:60]) == [
        pairs.estimate_ratio(ratios[:n]) for n in range(1, 61)]
    assert sum(1 for n in range(1, 61) if pairs.estimate_ratio(ratios[:n]).outliers) > 0
    with pytest.raises(ValueError, match="positive and finite"):
        running.add(0.0)
    assert running.pairs == len(ratios)  # a refused ratio is not kept


@pytest.mark.parametrize("kind", ["drift", "ties"])
def test_the_running_estimate_is_exact_far_past_the_exact_table(kind: str) -> None:
    """Long measurements (the estimate's averages are searched for, not formed): every prefix
    checked from about 900 rounds on, with drift and stalls, or with most rounds tied."""
    rng = random.Random(8)
    if kind == "drift":
        ratios = drifting_pairs(0.7, 1000, seed=9)
        for i in range(0, 1000, 37):
            ratios[i] *= 60.0  # far enough out for hyperfine's rule
    else:
        ratios = [rng.choice([0.5, 0.5, 0.55, 0.6]) for _ in range(1000)]
    running = pairs.RunningEstimate()
    for n, ratio in enumerate(ratios, start=1):
        est = running.add(ratio)
        if n >= 990 or n % 97 == 0:
            assert est == pairs.estimate_ratio(ratios[:n]), n
    assert est.outliers > 0 or kind == "ties"


def test_outliers_follow_hyperfine() -> None:
    # hyperfine's own test cases (src/outlier_detection.rs).
    assert sum(pairs.outlier_flags([-0.2, 0.0, 0.2, 4.0])) == 1
    assert sum(pairs.outlier_flags([0.5, 0.30, 0.29, 0.31, 0.30])) == 1
    assert sum(pairs.outlier_flags([10.0] * 7 + [100.0, 100.0])) == 2
    assert sum(pairs.outlier_flags([-0.2, 0.0, 0.2])) == 0


def test_outliers_are_flagged_and_kept() -> None:
    ratios = [2.0, 2.01, 1.99, 2.02, 1.98, 2.0, 2.01, 9.0]  # one block stalled
    est = pairs.estimate_ratio(ratios)
    assert est.outliers == 1
    assert est.pairs == 8
    assert est.ratio == pytest.approx(2.005, rel=1e-3)  # the stalled block barely moves it


def test_stop_reason() -> None:
    narrow = pairs.RatioEstimate(2.0, 1.95, 2.05, pairs=10, outliers=0)
    wide = pairs.RatioEstimate(2.0, 1.5, 2.5, pairs=10, outliers=0)
    assert narrow.half_width == pytest.approx(0.025)
    kw = {"budget": 120.0, "target": 0.03, "min_pairs": 8}
    assert pairs.stop_reason(narrow, elapsed=10, **kw) == "target"
    assert pairs.stop_reason(wide, elapsed=10, **kw) is None
    assert pairs.stop_reason(wide, elapsed=121, **kw) == "budget"
    early = pairs.RatioEstimate(2.0, 1.99, 2.01, pairs=6, outliers=0)
    assert pairs.stop_reason(early, elapsed=10, **kw) is None


def test_compile_cost_is_never_negative() -> None:
    assert pairs.compile_seconds(5.0, [1.0, 1.1, 0.9]) == pytest.approx(4.0)
    # A first step within the steady steps' spread (or faster) is not measurable, not negative.
    assert pairs.compile_seconds(1.05, [1.0, 1.2, 0.9]) is None
    assert pairs.compile_seconds(0.5, [1.0, 1.0, 1.0]) is None
    assert pairs.compile_seconds(3.0, []) is None
