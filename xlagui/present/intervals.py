"""What a speed-up was measured on, in words: the interleaved measurement's blocks
(`block_words`) and how an interval was obtained (`interval_method`), from the kinds and counts
the core keeps (`xlagui.core.analysis.stats.Interval`)."""

from __future__ import annotations

from xlagui.core.analysis.pairs import InterleavedSummary
from xlagui.core.analysis.stats import Comparison, Interval, IntervalBasis
from xlagui.core.protocol.identity import Role
from xlagui.present.units import speed_range as speed_range  # re-exported
from xlagui.present.units import speed_words as speed_words


def block_words(i: InterleavedSummary) -> str:
    """“1-step blocks”, or “blocks of 2 (baseline) and 1 steps” when the sides' K differ."""
    b, a = i.baseline_block_steps, i.block_steps
    if not b or b == a:
        return f"{a}-step blocks"
    return f"blocks of {b} (baseline) and {a} steps"


def pairs_noun(n: int) -> str:
    """"pair" or "pairs", after a count of `n`."""
    return "pair" if n == 1 else "pairs"


def interval_method(c: Comparison, s: Interval) -> str:
    """How `s`, one of `c`'s speed-ups, was obtained: "from 30 interleaved pairs of 1-step
    blocks, 95% CI", "95% CI across 3 repeats"; a comparison saved before the core kept it
    as data says it in its own words."""
    if not s.basis:
        return s.method
    i = c.interleaved
    if s.basis == IntervalBasis.INTERLEAVED:
        blocks = f" of {block_words(i)}" if i is not None else ""
        return f"from {s.count} interleaved {pairs_noun(s.count or 0)}{blocks}" + (
            ", 95% CI" if s.high is not None else " (too few pairs for an interval)"
        )
    few = " (too few values for an interval)" if s.low is None else ""
    if s.basis == IntervalBasis.REPEATS:
        return f"95% CI across {s.count} repeats{few}"
    return f"95% CI across epochs after the first{few}"


def step_interval(c: Comparison) -> tuple[float | None, float | None, int]:
    """XLA's per-step speed-up interval as every place on a page says it: (low, high, the
    number of arms it is Bonferroni-adjusted for, 0 when it is not). With several arms it is
    the adjusted one the arms are ranked by, so the headline, the summary and the arms table
    show one interval for XLA, not a plain one here and an adjusted one there."""
    s, i = c.speedup, c.interleaved
    if s is None:
        return None, None, 0
    arms = i.arms if i is not None else []
    xla = next((a for a in arms if a.variant == Role.XLA), None)
    if len(arms) > 1 and xla is not None and xla.adjusted_low and xla.adjusted_high:
        return 1 / xla.adjusted_high, 1 / xla.adjusted_low, len(arms)
    return s.low, s.high, 0
