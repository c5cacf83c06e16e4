"""Between worker processes (`xlagui.core.analysis.processes`): recorded estimates with known
answers, each from a fresh pair of workers."""

from __future__ import annotations

import math

import pytest

from xlagui.core.analysis.pairs import ArmResult
from xlagui.core.analysis.processes import (
    MAX_EARLIER,
    Estimate,
    ProcessSpread,
    cochran_q,
    spread,
    widen,
    widen_arms,
)

# The issue's own pair (2-core Intel VM, real camera photos at 150 px, --quick twice in a row,
# nothing else running): 6% apart, the intervals do not touch.
INTEL_FIRST = Estimate(2.013, 1.945, 2.066)
INTEL_SECOND = Estimate(1.895, 1.831, 1.942)
# BENCHMARKS.md, "Interleaved measurement: set, 150 px, 6 runs in a row, answer-issue37": six
# fresh pairs on this project's AMD VM whose spread stayed within their intervals (p = 0.597).
AMD_SIX = [Estimate(1.236, 1.197, 1.270), Estimate(1.286, 1.241, 1.344),
           Estimate(1.273, 1.226, 1.328), Estimate(1.258, 1.214, 1.300),
           Estimate(1.239, 1.200, 1.272), Estimate(1.248, 1.207, 1.292)]


def test_cochran_q_reads_the_benchmarks_six_runs_as_the_bench_did() -> None:
    q, df, p, tau2 = cochran_q(AMD_SIX)
    assert df == 5
    # From the table's rounded figures: the bench read Q 3.7, p 0.597 from the unrounded ones.
    assert q == pytest.approx(3.7, abs=0.05) and p == pytest.approx(0.597, abs=0.01)
    assert tau2 == 0  # Q below its degrees of freedom: no spread beyond the intervals


def test_two_pairs_that_disagree_widen_the_interval_to_cover_both() -> None:
    found = spread(INTEL_SECOND, [INTEL_FIRST])
    assert found is not None and found.widened and found.earlier == 1
    assert found.p < 0.01 and found.tau > 0
    low, high = widen(INTEL_SECOND.ratio, INTEL_SECOND.low, INTEL_SECOND.high, found.tau)
    assert low < INTEL_SECOND.low and high > INTEL_SECOND.high
    # Wide enough that the first pair's answer is no longer outside it.
    assert low <= INTEL_FIRST.ratio <= high or high >= INTEL_FIRST.low
    assert (found.pair_low, found.pair_high) == (INTEL_SECOND.low, INTEL_SECOND.high)


def test_pairs_that_agree_leave_the_interval_as_it_is() -> None:
    found = spread(AMD_SIX[-1], AMD_SIX[:-1])
    assert found is not None and not found.widened and found.tau == 0
    assert found.earlier == 5 and found.p > 0.05


def test_nothing_to_compare_with_says_nothing() -> None:
    assert spread(INTEL_SECOND, []) is None
    # An earlier estimate without a proper interval (zero width, a ratio outside it) is unusable.
    assert spread(INTEL_SECOND, [Estimate(2.0, 2.0, 2.0), Estimate(2.0, 2.1, 2.2)]) is None
    assert spread(Estimate(2.0, 2.0, 2.0), [INTEL_FIRST]) is None


def test_only_the_newest_earlier_ones_count() -> None:
    old = [Estimate(3.0, 2.9, 3.1)] * 20  # far off, but older than the newest MAX_EARLIER
    found = spread(AMD_SIX[0], [*AMD_SIX[1:]] * 2 + old)
    assert found is not None and found.earlier == MAX_EARLIER and not found.widened


def test_widening_adds_the_spread_to_each_side_in_log_space() -> None:
    low, high = widen(2.0, 1.8, 2.1, 0.05)
    z = 1.959963984540054
    assert math.log(2.0) - math.log(low) == pytest.approx(
        math.hypot(math.log(2.0) - math.log(1.8), z * 0.05))
    assert math.log(high) - math.log(2.0) == pytest.approx(
        math.hypot(math.log(2.1) - math.log(2.0), z * 0.05))
    assert widen(2.0, 1.8, 2.1, 0.0) == (1.8, 2.1)


def test_every_arm_widens_with_the_headline_and_its_adjusted_interval_in_proportion() -> None:
    arm = ArmResult(arm="jit", variant="xla", ratio=2.0, low=1.9, high=2.1,
                    adjusted_low=1.85, adjusted_high=2.16)
    spread_found = ProcessSpread(earlier=2, q=12.0, df=2, p=0.002, tau=0.04, widened=True,
                                 pair_low=1.9, pair_high=2.1)
    widen_arms([arm], spread_found)
    assert arm.low is not None and arm.high is not None
    assert (arm.low, arm.high) == pytest.approx(widen(2.0, 1.9, 2.1, 0.04))
    assert arm.adjusted_low is not None and arm.adjusted_high is not None
    assert arm.adjusted_low < 1.85 and arm.adjusted_high > 2.16
    assert arm.adjusted_low < arm.low and arm.adjusted_high > arm.high
    untouched = ArmResult(arm="jit", variant="xla", ratio=2.0, low=1.9, high=2.1)
    widen_arms([untouched], ProcessSpread(1, 0.1, 1, 0.7, 0.0, False, 1.9, 2.1))
    assert (untouched.low, untouched.high) == (1.9, 2.1)
