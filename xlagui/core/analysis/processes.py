"""Between worker processes: does this comparison's estimate agree with earlier ones of the
same settings on the same machine, each measured by a fresh pair of workers?

An interval from interleaved rounds covers the rounds within one pair of worker processes,
not the processes themselves. On one machine two fresh pairs once read 2.013 (1.945–2.066) and
1.895 (1.831–1.942): a rerun outside the first answer's interval (Cochran's Q p = 0.005;
BENCHMARKS.md, "Real camera images"). A single comparison cannot see that spread; the earlier
comparisons of the same settings on the same machine (History) can.

`spread` weighs every estimate by its interval (the standard error of its log ratio, taken
from the interval's width) and asks with Cochran's Q whether they spread more than their
intervals admit. When they do (p < `P_LIMIT`), the spread between processes is estimated
(DerSimonian–Laird τ² over the log ratios) and this comparison's interval widened by it
(`widen`): each side's half-width h becomes √(h² + (z·τ)²). When they do not, the interval
stays as it is and the answer says it agrees. The earlier estimates are recorded with the
comparison (`ComparisonReport.earlier`), so a saved comparison recomputes the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

# The two-sided 95% normal quantile: an interval's width in standard errors is 2 × this.
Z95 = 1.959963984540054
P_LIMIT = 0.05
# The newest earlier comparisons counted: enough for Q to see a spread, few enough that a
# machine's month-old state (another TensorFlow, another kernel) does not weigh in.
MAX_EARLIER = 9


@dataclass(frozen=True)
class Estimate:
    """One measurement's ratio (arm ÷ baseline step time) with its 95% interval over one pair
    of worker processes; `folder` and `created` say which comparison it was."""

    ratio: float
    low: float
    high: float
    folder: str = ""
    created: str = ""

    @property
    def usable(self) -> bool:
        """A ratio inside a proper interval (positive, finite, not of zero width)."""
        values = (self.low, self.ratio, self.high)
        return all(math.isfinite(v) and v > 0 for v in values) and \
            self.low <= self.ratio <= self.high and self.high > self.low

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Estimate:
        return cls(float(d["ratio"]), float(d["low"]), float(d["high"]),
                   str(d.get("folder", "")), str(d.get("created", "")))


@dataclass(frozen=True)
class ProcessSpread:
    """This comparison's estimate among `earlier` ones (fresh pairs of workers, same settings,
    same machine): Cochran's Q on `df` degrees of freedom and its p-value, τ (the spread
    between processes of the log ratio; 0 when the estimates spread no more than their
    intervals admit), and whether the interval was widened by it. `pair_low`/`pair_high`: the
    interval over this pair of processes alone, as measured."""

    earlier: int
    q: float
    df: int
    p: float
    tau: float
    widened: bool
    pair_low: float
    pair_high: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProcessSpread:
        return cls(**d)


def _log_se(e: Estimate) -> float:
    return (math.log(e.high) - math.log(e.low)) / (2 * Z95)


def cochran_q(estimates: Sequence[Estimate]) -> tuple[float, int, float, float]:
    """Cochran's Q over the estimates' log ratios (each weighed by 1/SE²), its degrees of
    freedom, its p-value (chi-square) and the DerSimonian–Laird τ² (0 when Q ≤ df)."""
    from scipy.stats import chi2  # lazy: SciPy is slow to import

    logs = [math.log(e.ratio) for e in estimates]
    weights = [1 / _log_se(e) ** 2 for e in estimates]
    total = sum(weights)
    mean = sum(w * y for w, y in zip(weights, logs, strict=True)) / total
    q = sum(w * (y - mean) ** 2 for w, y in zip(weights, logs, strict=True))
    df = len(estimates) - 1
    scale = total - sum(w * w for w in weights) / total
    tau2 = max(0.0, (q - df) / scale) if scale > 0 else 0.0
    return q, df, float(chi2.sf(q, df)), tau2


def spread(current: Estimate, earlier: Sequence[Estimate]) -> ProcessSpread | None:
    """`current` among the usable `earlier` estimates (the newest `MAX_EARLIER`, in the order
    given: newest first); None when there is none to compare with, or `current` has no
    proper interval."""
    others = [e for e in earlier if e.usable][:MAX_EARLIER]
    if not others or not current.usable:
        return None
    q, df, p, tau2 = cochran_q([current, *others])
    widened = p < P_LIMIT and tau2 > 0
    return ProcessSpread(earlier=len(others), q=q, df=df, p=p,
                         tau=math.sqrt(tau2) if widened else 0.0, widened=widened,
                         pair_low=current.low, pair_high=current.high)


def widen(ratio: float, low: float, high: float, tau: float) -> tuple[float, float]:
    """The interval (low, high) around `ratio` with the spread between processes τ added to
    each side's half-width in log space: h → √(h² + (z·τ)²), z the interval's own (95%)."""
    if tau <= 0 or not (0 < low <= ratio <= high):
        return low, high
    log_r = math.log(ratio)

    def side(h: float) -> float:
        return math.sqrt(h * h + (Z95 * tau) ** 2)

    return (math.exp(log_r - side(log_r - math.log(low))),
            math.exp(log_r + side(math.log(high) - log_r)))


def widen_by_share(ratio: float, low: float, high: float, plain: tuple[float, float],
                   widened: tuple[float, float]) -> tuple[float, float]:
    """Another interval of the same estimate (a Bonferroni-adjusted one) widened in the same
    proportion, side by side, as `plain` became `widened` (in log space)."""
    if not (0 < low <= ratio <= high) or not (0 < plain[0] <= ratio <= plain[1]):
        return low, high
    log_r = math.log(ratio)

    def share(new: float, old: float) -> float:
        return abs(math.log(new) - log_r) / abs(math.log(old) - log_r) \
            if old != ratio else 1.0

    lo = share(widened[0], plain[0])
    hi = share(widened[1], plain[1])
    return (math.exp(log_r - lo * (log_r - math.log(low))),
            math.exp(log_r + hi * (math.log(high) - log_r)))


class _ArmInterval(Protocol):
    ratio: float | None
    low: float | None
    high: float | None
    adjusted_low: float | None
    adjusted_high: float | None


def widen_arms(arms: Sequence[_ArmInterval], processes: ProcessSpread | None) -> None:
    """Every arm's interval widened by the spread between processes when the headline's was
    (`processes.widened`): τ is measured on the XLA side's history and taken to hold for every
    arm of the same workers; a Bonferroni-adjusted interval widens in the same proportion."""
    if processes is None or not processes.widened:
        return
    for a in arms:
        if a.ratio is None or a.low is None or a.high is None:
            continue
        plain = (a.low, a.high)
        a.low, a.high = widen(a.ratio, a.low, a.high, processes.tau)
        if a.adjusted_low is not None and a.adjusted_high is not None:
            a.adjusted_low, a.adjusted_high = widen_by_share(
                a.ratio, a.adjusted_low, a.adjusted_high, plain, (a.low, a.high))
