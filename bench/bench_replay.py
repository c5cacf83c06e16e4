"""Replaying a measurement's convergence curve: the estimate after every round, n rounds.

    python bench/bench_replay.py [--rounds 300,1000,2000] [--repeat 3] [--tag "second run"]
                                 [--write]

What reopening a long measurement costs the speed-up plot (`present/traces.py: SpeedupTraces`):
the Hodges–Lehmann estimate and its Wilcoxon interval after each of n rounds, each exactly
`estimate_ratio` of the rounds so far. "Before" is the algorithm `pairs.RunningEstimate` had
until issue 22 (each round merged its n new Walsh averages into all the sorted ones kept: O(n²)
per round), kept here for the comparison; "after" is `pairs.RunningEstimate` as it is (the
sorted log ratios, and the averages the estimate needs selected among the implicit sorted ones:
O(n log n) per round; up to `walsh.KEEP_ALL_UP_TO` rounds every average kept sorted as before).
Both replay the same synthetic rounds (drifting log-normal ratios with a stall now and then) and
must give the same estimates. Each time is the best of `--repeat` replays (CPU time of this
process: other processes on the machine count less). The growth exponent is the slope of
log(time) against log(n) over the sizes run.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _common import add_write, load_average, publish, section_text

from xlagui.core.analysis import pairs, walsh


class MergingEstimate:
    """`pairs.RunningEstimate` before issue 22: each round forms its n Walsh averages (with
    itself and each earlier round), sorts them and merges them into the sorted ones kept."""

    def __init__(self, confidence: float = pairs.CONFIDENCE) -> None:
        self.confidence = confidence
        self._logs: list[float] = []
        self._walsh: Any = np.empty(0)

    def add(self, ratio: float) -> pairs.RatioEstimate:
        self._logs.append(math.log(ratio))
        logs = np.asarray(self._logs, dtype=float)
        new = (logs[-1] + logs) / 2
        new.sort()
        self._walsh = np.insert(self._walsh, np.searchsorted(self._walsh, new), new)
        return pairs._estimate_from(self._walsh, self._logs, self.confidence)


def rounds(n: int, seed: int) -> list[float]:
    """n per-round ratios about 0.45: a slow drift, ±5% noise, one round in 15 stalled."""
    rng = random.Random(seed)
    return [
        0.45 * (1 + 0.05 * math.sin(i / 40)) * math.exp(rng.gauss(0, 0.05))
        * (1.6 if rng.random() < 1 / 15 else 1.0)
        for i in range(n)
    ]


def replay(make: Callable[[], Any], ratios: Sequence[float],
           repeat: int) -> tuple[float, list[Any]]:
    """The best CPU time of `repeat` replays, and the estimates."""
    best = math.inf
    estimates: list[Any] = []
    for _ in range(repeat):
        # Each replay works out the signed-rank ranks afresh, as a reopened comparison does
        # (the one before would otherwise have left them cached).
        pairs.signed_rank_interval.cache_clear()
        pairs._last_pmf = (0, None)
        running = make()
        t0 = time.process_time()
        estimates = [running.add(r) for r in ratios]
        best = min(best, time.process_time() - t0)
    return best, estimates


def slope(ns: Sequence[int], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) against log(n)."""
    lx, ly = [math.log(n) for n in ns], [math.log(s) for s in seconds]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum(
        (a - mx) ** 2 for a in lx)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", default="300,1000,2000", help="n, comma-separated")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--repeat", type=int, default=3, help="replays of each; the best counts")
    parser.add_argument("--tag", default="", help="a second section for a rerun (run twice)")
    add_write(parser)
    args = parser.parse_args()
    load = load_average()
    ns = [int(v) for v in args.rounds.split(",")]
    pairs.signed_rank_interval(pairs.EXACT_SIGNED_RANK_MAX + 1)  # import SciPy before timing
    lines = [
        "## Replaying a measurement's curve: the estimate after every round (issue 22)"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_replay.py --rounds {args.rounds} --repeat {args.repeat}`: the "
        "Hodges–Lehmann estimate and its Wilcoxon interval after each of n rounds (what "
        "reopening a measurement of n rounds draws), exactly `estimate_ratio` of every prefix. "
        "Before: each round merged its n new Walsh averages into all the sorted ones (the "
        "algorithm until issue 22, kept in the bench; O(n²) per round). After: "
        "`pairs.RunningEstimate` now (`core/analysis/walsh.py`: the averages the estimate needs "
        "selected among the implicit sorted ones, O(n log n) per round; up to "
        f"{walsh.KEEP_ALL_UP_TO} rounds all kept sorted as before, which is faster there). "
        "Same synthetic rounds for both, the estimates compared one by one; CPU time of the "
        f"whole replay, best of {args.repeat}.",
        "",
        "| rounds | before | after | before ÷ after | per round after | same estimates |",
        "|---|---|---|---|---|---|",
    ]
    before_s, after_s = [], []
    for n in ns:
        ratios = rounds(n, args.seed)
        before, old = replay(MergingEstimate, ratios, args.repeat)
        after, new = replay(pairs.RunningEstimate, ratios, args.repeat)
        before_s.append(before)
        after_s.append(after)
        same = old == new
        lines.append(f"| {n} | {before:.3f} s | {after:.3f} s | {before / after:.1f} | "
                     f"{after / n * 1e3:.2f} ms | {'yes' if same else 'NO'} |")
        print(lines[-1], flush=True)
    lines += [
        "",
        f"Growth exponent of the whole replay (time ∝ n^k, least squares over n = "
        f"{args.rounds}): before k = {slope(ns, before_s):.2f}, after k = "
        f"{slope(ns, after_s):.2f}"
        + (f"; between the two largest: before {slope(ns[-2:], before_s[-2:]):.2f}, after "
           f"{slope(ns[-2:], after_s[-2:]):.2f}" if len(ns) > 2 else "")
        + ". Before, O(n³) would be 3; after, O(n² log n) a little over 2 (fixed costs per "
        "round flatten both at small n).",
    ]
    tag = f"-{args.tag}" if args.tag else ""
    publish(f"replay{tag}", section_text(lines, load, f"NumPy {np.__version__}"), args.write)


if __name__ == "__main__":
    main()
