"""Interleaved statistics: known ratios recovered through drift, intervals, outliers, stopping."""

from __future__ import annotations

import math
import random

import pytest

from xlagui.core import pairs


def drifting_pairs(ratio: float, n: int, *, seed: int = 1, noise: float = 0.05) -> list[float]:
    """Per-round ratios of blocks timed while the machine's speed drifts by ±40% over minutes
    (a slow sine plus step changes), each block with its own ±noise."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        machine = 1 + 0.4 * math.sin(i / 7) + (0.3 if i % 17 > 12 else 0.0)
        base = 0.8 * machine * math.exp(rng.gauss(0, noise))
        arm = 0.8 * ratio * machine * math.exp(rng.gauss(0, noise))
        out.append(arm / base)
    return out


@pytest.mark.parametrize("ratio", [0.47, 1.0, 2.47])
def test_known_ratio_recovered_through_drift(ratio: float) -> None:
    est = pairs.estimate_ratio(drifting_pairs(ratio, 60))
    assert est.low is not None and est.high is not None
    assert est.low <= ratio <= est.high
    assert est.ratio == pytest.approx(ratio, rel=0.03)
    assert est.half_width is not None and est.half_width < 0.05


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


def test_median_rank_interval_matches_the_binomial_table() -> None:
    # Published sign-test ranks for a 95% interval of the median: n=6 → (1, 6), n=10 → (2, 9),
    # n=20 → (6, 15), n=30 → (10, 21). Below 6 no interval reaches 95%.
    assert pairs.median_rank_interval(5) is None
    assert pairs.median_rank_interval(6) == (1, 6)
    assert pairs.median_rank_interval(10) == (2, 9)
    assert pairs.median_rank_interval(20) == (6, 15)
    assert pairs.median_rank_interval(30) == (10, 21)


def test_interval_bounds_are_order_statistics() -> None:
    ratios = [2.0, 2.1, 1.9, 2.05, 2.2, 1.8, 2.15, 1.95, 2.02, 2.3]
    est = pairs.estimate_ratio(ratios)
    ordered = sorted(ratios)
    assert (est.low, est.high) == (ordered[1], ordered[8])
    assert est.ratio == pytest.approx((2.02 + 2.05) / 2)
    assert est.pairs == 10


def test_too_few_pairs_have_no_interval() -> None:
    est = pairs.estimate_ratio([2.0, 2.1, 1.9])
    assert est.low is None and est.high is None and est.half_width is None


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
    assert est.ratio == pytest.approx(2.005)


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
