"""An interleaved measurement summed up from its event streams (`xlagui.core.analysis.summary`)."""

from __future__ import annotations

import pytest

from xlagui.core.analysis.pairs import estimate_ratio
from xlagui.core.analysis.summary import arm_timing, pair_up, summarize
from xlagui.core.protocol.events import BlockEvent, Event, WarmupEvent


def blocks(seconds_by_seq: dict[int, float], steps: int = 10) -> list[Event]:
    return [BlockEvent(t=float(s), seq=s, steps=steps, seconds=sec)
            for s, sec in seconds_by_seq.items()]


def test_only_rounds_both_sides_completed_are_paired_per_step() -> None:
    base = blocks({0: 1.0, 1: 1.2, 2: 1.0})
    arm = blocks({0: 0.5, 2: 0.8, 3: 0.7}, steps=5)  # round 1 missing, round 3 unmatched
    arm.append(BlockEvent(t=9.0, seq=1, steps=0, seconds=0.0))  # a round it sat out
    got = [(p.seq, p.ratio) for p in pair_up(base, arm)]
    assert got == [(0, pytest.approx((0.5 / 5) / (1.0 / 10))), (2, pytest.approx((0.8 / 5) / 0.1))]


def test_the_summary_is_the_estimate_of_the_paired_ratios() -> None:
    base = blocks({s: 1.0 + 0.01 * s for s in range(8)})
    arm = blocks({s: 0.6 + 0.02 * (s % 3) for s in range(8)})
    s = summarize(("off", base), ("jit", arm), stopped_by="target", target=0.05)
    est = estimate_ratio([p.ratio for p in pair_up(base, arm)])
    assert (s.ratio, s.low, s.high, s.pairs) == (est.ratio, est.low, est.high, 8)
    assert s.stopped_by == "target" and s.block_steps == 10 and s.baseline_block_steps == 10
    assert s.xla.xla_mode == "jit" and s.baseline.xla_mode == "off"


def test_no_pairs_gives_no_ratio() -> None:
    s = summarize(("off", blocks({0: 1.0})), ("jit", blocks({1: 1.0})))
    assert s.ratio is None and s.pair_ratios == []


def test_an_arms_timing_takes_the_median_block_and_the_warm_up() -> None:
    events = [WarmupEvent(t=0.0, first_step_seconds=3.0, warm_step_seconds=[0.1, 0.1]),
              *blocks({0: 1.0, 1: 3.0, 2: 2.0})]
    t = arm_timing("xla", "jit", events)
    assert t.blocks == 3 and t.steady_step_seconds == pytest.approx(0.2)
    assert t.first_step_seconds == 3.0 and t.compile_seconds is not None
    assert t.compile_seconds > 2.5
