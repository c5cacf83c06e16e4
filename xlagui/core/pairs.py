"""Statistics of an interleaved measurement: per-pair ratios, their median and its interval.

Each round runs a block of K training steps on every arm, one arm after the other, in a rotating
order. The machine's drift (other processes, thermal and frequency changes, a noisy neighbour on
a shared VM) moves over seconds to minutes, so within a round it hits every arm alike and the
*ratio* of two blocks of the same round is what stays stable, even while the block times swing.

The estimate is the median of the per-round ratios. Its 95% interval is the distribution-free
order-statistic interval for a median (the sign-test interval): it assumes only that rounds are
independent, not that the ratios are normal or symmetric, which suits timings with occasional
long stalls. Hodges–Lehmann would give a slightly narrower interval but assumes symmetry, which a
one-sided stall breaks. The interval is computed on the ratios directly; since it is made of
order statistics it is the same on the log scale. Outliers are flagged with hyperfine's rule
(modified Z-score on the log ratios, |z| > 1.4826 × 10) and kept in the data: the median and the
order-statistic interval are already robust to them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

# hyperfine's src/outlier_detection.rs: 1.4826 converts the MAD into a standard deviation, and a
# point more than ten of those from the median is an outlier.
OUTLIER_THRESHOLD = 1.4826 * 10.0
CONFIDENCE = 0.95
# Below 6 rounds no order-statistic interval reaches 95% (1 - 2 · 0.5^5 < 0.95).
MIN_PAIRS_FOR_INTERVAL = 6


def modified_zscores(values: Sequence[float]) -> list[float]:
    """(x − median) / MAD, as hyperfine computes it (a zero MAD becomes machine epsilon)."""
    if not values:
        return []
    med = statistics.median(values)
    mad = statistics.median([abs(v - med) for v in values])
    mad = mad if mad > 0 else 2.220446049250313e-16
    return [(v - med) / mad for v in values]


def outlier_flags(values: Sequence[float]) -> list[bool]:
    return [abs(z) > OUTLIER_THRESHOLD for z in modified_zscores(values)]


def median_rank_interval(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (lo, hi) of the order statistics bounding the median at `confidence`,
    or None when n is too small for any interval to reach it."""
    from scipy.stats import binom

    best: tuple[int, int] | None = None
    for k in range(1, n // 2 + 1):
        # P(x_(k) <= median <= x_(n-k+1)) = 1 - 2 P(Bin(n, 1/2) <= k - 1)
        if 1 - 2 * float(binom.cdf(k - 1, n, 0.5)) >= confidence:
            best = (k, n - k + 1)
        else:
            break
    return best


@dataclass(frozen=True)
class RatioEstimate:
    """The median ratio (arm ÷ baseline, per-step time) over `pairs` rounds, with its interval."""

    ratio: float
    low: float | None
    high: float | None
    pairs: int
    outliers: int

    @property
    def half_width(self) -> float | None:
        """Half the interval's width relative to the estimate (0.03: ±3%)."""
        if self.low is None or self.high is None or self.ratio <= 0:
            return None
        return (self.high - self.low) / (2 * self.ratio)

    @property
    def includes_one(self) -> bool:
        return self.low is not None and self.high is not None and self.low <= 1 <= self.high


def estimate_ratio(ratios: Sequence[float], confidence: float = CONFIDENCE) -> RatioEstimate:
    if not ratios:
        raise ValueError("no pairs to estimate from")
    if any(not (r > 0 and math.isfinite(r)) for r in ratios):
        raise ValueError("ratios of step times must be positive and finite")
    ordered = sorted(ratios)
    ranks = median_rank_interval(len(ordered), confidence)
    low = high = None
    if ranks is not None:
        low, high = ordered[ranks[0] - 1], ordered[ranks[1] - 1]
    flags = outlier_flags([math.log(r) for r in ratios])
    return RatioEstimate(
        ratio=statistics.median(ordered),
        low=low,
        high=high,
        pairs=len(ordered),
        outliers=sum(flags),
    )


def running_estimates(ratios: Sequence[float]) -> list[RatioEstimate]:
    """The estimate after each round, as it was when that round ended (what the window plots
    converging, live or replayed)."""
    return [estimate_ratio(ratios[:n]) for n in range(1, len(ratios) + 1)]


@dataclass(frozen=True)
class Pair:
    """One round of an arm against the baseline: seconds per step of each block."""

    seq: int
    baseline_step_seconds: float
    arm_step_seconds: float

    @property
    def ratio(self) -> float:
        return self.arm_step_seconds / self.baseline_step_seconds


def stop_reason(
    estimate: RatioEstimate | None,
    *,
    elapsed: float,
    budget: float,
    target: float,
    min_pairs: int,
) -> str | None:
    """ "target" once the interval is narrow enough (and at least `min_pairs` rounds ran),
    "budget" once the measuring time is spent, else None (go on)."""
    if estimate is not None and estimate.pairs >= min_pairs:
        hw = estimate.half_width
        if hw is not None and hw <= target:
            return "target"
    if elapsed >= budget:
        return "budget"
    return None


def compile_seconds(first_step: float, warm_steps: Sequence[float]) -> float | None:
    """What the first step cost beyond a steady one (tracing, compiling), or None when that is
    within the spread of the steady steps themselves: not measurable, never negative."""
    if not warm_steps:
        return None
    steady = statistics.median(warm_steps)
    noise = max(warm_steps) - min(warm_steps)
    extra = first_step - steady
    return extra if extra > noise else None


@dataclass
class ArmTiming:
    """One arm's side of an interleaved measurement, from its worker's events."""

    arm: str  # the run's variant: "baseline", "xla", ...
    xla_mode: str
    first_step_seconds: float | None = None
    steady_step_seconds: float | None = None  # median over the measured blocks, per step
    compile_seconds: float | None = None  # None: not measurable (or not warmed up)
    blocks: int = 0


@dataclass
class ArmResult:
    """One arm against the baseline in `comparison.interleaved.arms`: its interleaved ratio
    (arm ÷ baseline step time, above 1: slower), whether it engaged as asked (`valid`) and
    whether it learns as well as the baseline (`accuracy_ok`: None when that is not known)."""

    arm: str  # canonical arm name: "jit", "bf16", "jit+bf16", ...
    variant: str  # the run entries' variant: "xla" for the XLA side, else the arm name
    label: str = ""
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    outliers: int = 0
    half_width: float | None = None
    first_step_seconds: float | None = None
    steady_step_seconds: float | None = None
    compile_seconds: float | None = None
    valid: bool = True
    problems: list[str] = field(default_factory=list)
    note: str = ""  # what is known about this hardware and the arm's number format
    val_accuracy: float | None = None
    baseline_val_accuracy: float | None = None
    accuracy_ok: bool | None = None
    accuracy_text: str = ""
    accuracy_from: str = ""  # "training runs" or "measured steps"
    nonfinite_losses: int = 0

    @property
    def speedup(self) -> float | None:
        return 1 / self.ratio if self.ratio else None

    @property
    def clearly_faster(self) -> bool:
        return self.high is not None and self.high < 1

    @property
    def clearly_slower(self) -> bool:
        return self.low is not None and self.low > 1


@dataclass
class InterleavedSummary:
    """`comparison.interleaved`: the headline measurement. `ratio` is arm ÷ baseline step
    time (above 1: the arm is slower); the speed-up is its inverse."""

    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    outliers: int = 0
    stopped_by: str = ""  # "target", "budget", "stopped" (by the user) or "error"
    block_steps: int = 0  # the arm's steps per block
    baseline_block_steps: int = 0  # the baseline's (each arm's block lasts about a second)
    half_width: float | None = None
    target: float | None = None
    budget_seconds: float | None = None
    measuring_seconds: float | None = None
    baseline: ArmTiming | None = None
    xla: ArmTiming | None = None
    pair_ratios: list[float] = field(default_factory=list)
    outlier_flags: list[bool] = field(default_factory=list)
    # Every arm against the baseline (the XLA side included), in the order measured.
    arms: list[ArmResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InterleavedSummary:
        d = dict(d)
        for side in ("baseline", "xla"):
            if d.get(side) is not None:
                d[side] = ArmTiming(**d[side])
        d["arms"] = [ArmResult(**a) for a in d.get("arms") or []]
        return cls(**d)


def block_words(i: InterleavedSummary) -> str:
    """“1-step blocks”, or “blocks of 2 (baseline) and 1 steps” when the sides' K differ."""
    b, a = i.baseline_block_steps, i.block_steps
    if not b or b == a:
        return f"{a}-step blocks"
    return f"blocks of {b} (baseline) and {a} steps"
