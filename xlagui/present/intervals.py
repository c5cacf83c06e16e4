"""What a speed-up was measured on, in words: the interleaved measurement's blocks
(`block_words`) and how an interval was obtained (`interval_method`), from the kinds and counts
the core keeps (`xlagui.core.analysis.stats.Interval`)."""

from __future__ import annotations

from xlagui.core.analysis.pairs import InterleavedSummary
from xlagui.core.analysis.stats import Comparison, Interval, IntervalBasis
from xlagui.core.protocol.identity import Role


def block_words(i: InterleavedSummary) -> str:
    """“1-step blocks”, or “blocks of 2 (baseline) and 1 steps” when the sides' K differ."""
    b, a = i.baseline_block_steps, i.block_steps
    if not b or b == a:
        return f"{a}-step blocks"
    return f"blocks of {b} (baseline) and {a} steps"


def speed_words(value: float) -> str:
    """A speed-up (baseline ÷ arm time: above 1 faster) the one way every plot and table says
    it: "2.00× faster", "1.46× slower", never a ratio below 1."""
    return f"{value:.2f}× faster" if value >= 1 else f"{1 / value:.2f}× slower"


def speed_range(low: float, high: float) -> str:
    """An interval of speed-ups in the same words: "1.90–2.10× faster", "1.38–1.56× slower",
    "1.10× slower to 1.05× faster" for one that includes no difference."""
    if low >= 1:
        return f"{low:.2f}–{high:.2f}× faster"
    if high <= 1:
        return f"{1 / high:.2f}–{1 / low:.2f}× slower"
    return f"{1 / low:.2f}× slower to {high:.2f}× faster"


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
