"""Walsh averages at chosen ranks, without forming all of them.

The Walsh averages of n values are their n(n+1)/2 pairwise means (x_i + x_j) / 2, i <= j. With
the values sorted they fill the upper triangle of a matrix whose rows and columns both rise:
floating-point addition is monotone, so this holds for the computed averages too, not only for
exact ones. The k-th smallest average is found without forming the matrix (Johnson and
Mizoguchi 1978; Monahan, ACM TOMS Algorithm 616, 1984): two pivot averages, a count per row of
the averages below each (one binary search per row), and only the rows' spans between the
pivots are kept; once few enough remain they are formed and the k-th is selected among them.
Each average is computed exactly as `pairs.walsh_averages` computes it, so what is found is the
very same float, and a tie is found as a tie.

`WalshSelector` keeps the values sorted as they arrive (O(n) per value) and, per named target
(the centre, the interval's ends), two values about n ranks either side of where it was last
time: one more value moves a target by about n/2 ranks at most, so they bound it again and a
round costs two counts and O(n) averages formed, O(n log n) in all (where they miss, sampled
pivots take over). Up to `KEEP_ALL_UP_TO` values it keeps every average sorted
instead, merging in each new value's n (O(n²) per value, but a smaller constant: faster up to
there, `bench/bench_replay.py`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Up to this many values every average is kept sorted (see above).
KEEP_ALL_UP_TO = 700
# Fewer candidates than this (or than FORM_PER_VALUE per value) are formed and selected among.
FORM_AT_MOST = 4096
FORM_PER_VALUE = 8
# A target's bounds for next time lie about this many ranks per value either side of it: one
# more value moves a target by about n/2 ranks at most among the averages.
REACH_PER_VALUE = 1.0
# Averages sampled to choose the pivots when nothing bounds a target.
SAMPLE = 512
# A row's guessed cut is off by a column or two at most, but for long runs of ties: this many
# steps, then a bisection.
STEPS = 3


@dataclass
class _Span:
    """Candidates: row i's columns lo[i] .. hi[i] - 1, all of them above `floor` and below
    `ceil` (values, or ±inf), with `below` averages left of them, all smaller."""

    lo: Any
    hi: Any
    below: int
    floor: float = -math.inf
    ceil: float = math.inf


class WalshSelector:
    """Sorted values, and their Walsh averages at any ranks on demand."""

    def __init__(self, seed: int = 0, keep_all_up_to: int = KEEP_ALL_UP_TO) -> None:
        import numpy as np  # lazy: the window imports this module, and starts without NumPy

        self._np = np
        self.x: Any = np.empty(0)
        self._rng = np.random.default_rng(seed)
        self._keep_all_up_to = keep_all_up_to
        self._all: Any = np.empty(0) if keep_all_up_to > 0 else None  # every average, sorted
        # Per target: two values that bounded it last time (the next pivots).
        self._bounds: dict[str, tuple[float, float]] = {}

    def __len__(self) -> int:
        return len(self.x)

    def add(self, value: float) -> None:
        np = self._np
        self.x = np.insert(self.x, np.searchsorted(self.x, value), value)
        if self._all is not None and len(self.x) > self._keep_all_up_to:
            self._all = None
        if self._all is not None:
            new = (value + self.x) / 2  # this value with each, itself included
            new.sort()
            self._all = np.insert(self._all, np.searchsorted(self._all, new), new)

    def at(self, ranks: Sequence[int], target: str) -> list[Any]:
        """The Walsh averages at the 1-based `ranks` (a few close together: one target, such
        as the two middle ones), as numpy floats. `target` names what they are, so that the
        next call for it starts from the values that bounded them this time."""
        np = self._np
        n = len(self.x)
        m = n * (n + 1) // 2
        if not ranks or min(ranks) < 1 or max(ranks) > m:
            raise ValueError(f"ranks {list(ranks)} outside 1..{m}")
        if self._all is not None:
            return [self._all[k - 1] for k in ranks]
        found: dict[int, Any] = {}
        self._select(sorted(set(ranks)), _Span(np.arange(n), np.full(n, n), 0), found, target,
                     self._bounds.get(target))
        return [found[k] for k in ranks]

    # -- the search ---------------------------------------------------------------------------

    def _select(self, ranks: list[int], span: _Span, found: dict[int, Any], target: str,
                pivots: tuple[float, float] | None) -> None:
        """Put the averages at `ranks` (all within `span`) in `found`."""
        n = len(self.x)
        while True:
            left = int((span.hi - span.lo).sum())
            if left <= max(FORM_AT_MOST, FORM_PER_VALUE * n):
                self._form_and_pick(ranks, span, found, target)
                return
            # Last round's bounds serve once (they need not be averages themselves); then
            # sampled averages, which the next spans leave out: each step drops some.
            p1, p2 = pivots if pivots is not None else self._sample_pivots(ranks, span)
            pivots = None
            (lt1, lt2), (le1, le2) = self._cuts((p1, p2), span.lo, span.hi)
            under = [span.below + int((c - span.lo).sum()) for c in (lt1, le1, lt2, le2)]
            # Five zones: below p1, equal to p1, between, equal to p2, above p2. A rank in a
            # tie zone is its pivot; the others go on with their zone's span.
            zones: list[list[int]] = [[], [], [], [], []]
            for k in ranks:  # the first zone whose count reaches k (p1 == p2 empties zone 2)
                zones[next((z for z, u in enumerate(under) if k <= u), 4)].append(k)
            for k in zones[1]:
                found[k] = p1
            for k in zones[3]:
                found[k] = p2
            spans = {0: _Span(span.lo, lt1, span.below, span.floor, p1),
                     2: _Span(le1, lt2, under[1], p1, p2),
                     4: _Span(le2, span.hi, under[3], p2, span.ceil)}
            todo = [(zones[z], sub) for z, sub in spans.items() if zones[z]]
            if not todo:
                return
            for zone, sub in todo[1:]:
                self._select(zone, sub, found, target, None)
            ranks, span = todo[0]

    def _cuts(self, ts: tuple[float, float], lo: Any, hi: Any) -> tuple[Any, Any]:
        """For each threshold t of `ts` (one row of the results each), per row of averages
        the first column in lo .. hi whose average is >= t, and the first whose average is
        > t (hi where there is none). A guess from the values (2t − x_i) is right but for
        rounding (and, for the first, ties)."""
        np = self._np
        x = self.x
        n = len(x)
        t = np.array(ts, dtype=float)[:, None]
        # 2t − x falls as x rises: searched for rising, each search starts where the last
        # one ended.
        keys = (2 * t - x)[:, ::-1].ravel()
        le = np.searchsorted(x, keys, side="right").reshape(len(ts), n)[:, ::-1]
        le = np.clip(le, lo, hi)
        before = (x + x[np.maximum(le - 1, 0)]) / 2
        at = (x + x[np.minimum(le, n - 1)]) / 2
        wrong = np.nonzero(((le > lo) & (before > t)) | ((le < hi) & (at <= t)))
        if len(wrong[0]):
            which, row = wrong
            le[wrong] = self._settle(row, le[wrong], lo[row], hi[row], t[which, 0],
                                     strict=False)
            before[wrong] = (x[row] + x[np.maximum(le[wrong] - 1, 0)]) / 2
        lt = le.copy()
        tied = np.nonzero((le > lo) & (before == t))  # before <= t here: ties end at le
        if len(tied[0]):
            which, row = tied
            lt[tied] = self._settle(row, le[tied] - 1, lo[row], le[tied], t[which, 0],
                                    strict=True)
        return lt, le

    def _settle(self, rows: Any, guess: Any, lo: Any, hi: Any, t: Any, *,
                strict: bool) -> Any:
        """For each of a few `rows`, the first column in lo .. hi whose average is > t (>= t
        when `strict`; t: one threshold per row), hi where there is none, from a guess close
        to it."""
        np = self._np
        x = self.x
        last = len(x) - 1
        xi = x[rows]
        for _ in range(STEPS):
            before = (xi + x[np.maximum(guess - 1, 0)]) / 2
            at = (xi + x[np.minimum(guess, last)]) / 2
            down = (guess > lo) & ((before >= t) if strict else (before > t))
            up = (guess < hi) & ((at < t) if strict else (at <= t))
            if not (down.any() or up.any()):
                return guess
            guess = guess - down + up
        lo, hi = lo.copy(), hi.copy()
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = (lo + hi) // 2
            avg = (xi + x[np.minimum(mid, last)]) / 2
            past = (avg >= t) if strict else (avg > t)
            hi = np.where(active & past, mid, hi)
            lo = np.where(active & ~past, mid + 1, lo)

    def _sample_pivots(self, ranks: list[int], span: _Span) -> tuple[float, float]:
        """Two candidate averages that probably bound `ranks`, from a sample of the candidates
        (Floyd and Rivest's choice: the sample's quantiles a few standard errors either side)."""
        np = self._np
        x = self.x
        width = span.hi - span.lo
        ends = np.cumsum(width)
        left = int(ends[-1])
        draws = self._rng.integers(0, left, size=min(SAMPLE, left))
        row = np.searchsorted(ends, draws, side="right")
        col = span.lo[row] + draws - (ends[row] - width[row])
        sample = np.sort((x[row] + x[col]) / 2)
        s = len(sample)
        q_lo, q_hi = (ranks[0] - span.below) / left, (ranks[-1] - span.below) / left
        q = (q_lo + q_hi) / 2
        spread = 3 * math.sqrt(s * q * (1 - q)) + 1
        i1 = min(s - 1, max(0, math.floor(q_lo * s - spread)))
        i2 = min(s - 1, max(0, math.ceil(q_hi * s + spread)))
        return sample[i1], sample[i2]

    def _form_and_pick(self, ranks: list[int], span: _Span, found: dict[int, Any],
                       target: str) -> None:
        """Form the candidates and select `ranks` among them; keep values about
        REACH_PER_VALUE · n ranks either side as this target's bounds for next time."""
        np = self._np
        x = self.x
        width = span.hi - span.lo
        some = width > 0
        rows, width, first = np.flatnonzero(some), width[some], span.lo[some]
        count = int(width.sum())
        starts = np.cumsum(width) - width
        i = np.repeat(rows, width)
        j = np.arange(count) - np.repeat(starts - first, width)
        avgs = (x[i] + x[j]) / 2
        at = [k - span.below - 1 for k in ranks]
        reach = math.ceil(REACH_PER_VALUE * len(x)) + 1
        low, high = at[0] - reach, at[-1] + reach
        avgs.partition(sorted({*at, max(low, 0), min(high, count - 1)}))
        for k, a in zip(ranks, at, strict=True):
            found[k] = avgs[a]
        self._bounds[target] = (
            self._beyond(avgs, at[0], low, span.floor), self._beyond(avgs, at[-1], high,
                                                                   span.ceil))

    @staticmethod
    def _beyond(avgs: Any, at: int, edge: int, limit: float) -> float:
        """The value `edge` ranks away among the formed averages `avgs` (partitioned at `at`
        and at `edge` or the end it passes). Past their end, where the candidates stop at
        `limit`, a value as far beyond it as their density there suggests: the target then
        sits in the middle of its bounds again next round, even when it drifts."""
        count = len(avgs)
        if 0 <= edge < count:
            return float(avgs[edge])
        end = 0 if edge < 0 else count - 1
        if not math.isfinite(limit):
            return float(avgs[end])  # every average on that side was formed
        held = abs(at - end)  # averages between the target and that end
        # Beyond `limit` lie averages unknown: assume them as dense as between it and the
        # target.
        value = float(avgs[at])
        guess = value + (limit - value) * abs(edge - at) / max(held, 1)
        return guess if math.isfinite(guess) else limit
