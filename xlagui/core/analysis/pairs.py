"""Statistics of an interleaved measurement: per-pair ratios, their centre and its interval.

Each round runs a block of K training steps on every arm, one arm after the other, in an order
that changes every round. The machine's drift (other processes, thermal and frequency changes, a
noisy neighbour on a shared VM) moves over seconds to minutes, so within a round it hits every
arm alike and the *ratio* of two blocks of the same round is what stays stable, even while the
block times swing.

The estimate is the Hodges–Lehmann estimator of the log ratios (the median of all pairwise
means, the Walsh averages), and its 95% interval is the Wilcoxon signed-rank interval: order
statistics of the Walsh averages, at ranks from the exact signed-rank distribution (a normal
approximation above `EXACT_SIGNED_RANK_MAX` rounds). It assumes rounds are independent and the
log ratios symmetric about their centre, not that they are normal; it tolerates up to 29% of
wild rounds (its breakdown point), which covers the occasional long stall.

Until December 2026 the estimate was the plain median with the sign-test interval, which
assumes no symmetry but uses only which side of the centre each round falls on. Re-estimated on
the same rounds of 14 recorded arm measurements (jit and bf16 at 150 px on this project's
2-core VM), the signed-rank interval was narrower in 13 (by 1–42%) and wider in one (by 18%);
the log ratios' skewness was between −1.0 and +0.4.

Outliers are flagged with hyperfine's rule (modified Z-score on the log ratios, |z| > 1.4826 ×
10) and kept. Between processes: `processes.py`.
"""

from __future__ import annotations

import functools
import math
import statistics
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from xlagui.core.analysis.accuracy import AccuracyVerdict
from xlagui.core.analysis.busy import MachineLoad
from xlagui.core.analysis.processes import ProcessSpread

# The recommendation's records live in `recommendation`; kept importable from here.
from xlagui.core.analysis.recommendation import PassedOver as PassedOver
from xlagui.core.analysis.recommendation import Recommendation as Recommendation
from xlagui.core.analysis.recommendation import RecommendationKind as RecommendationKind
from xlagui.core.analysis.walsh import WalshSelector
from xlagui.core.protocol.identity import Role, StopReason
from xlagui.core.protocol.jsoncodec import decode
from xlagui.core.protocol.problems import Problem

# hyperfine's src/outlier_detection.rs: 1.4826 × MAD is a standard deviation; ten is an outlier.
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


# Up to this many rounds the signed-rank ranks come from the exact distribution.
EXACT_SIGNED_RANK_MAX = 300


# The last distribution of T+ worked out, (n, P(T+ = t) for t = 0 … n(n+1)/2): a measurement
# asks for n, n+1, n+2, … as rounds arrive, and each follows from the one before in one step.
_PMF_LOCK = threading.Lock()
_last_pmf: tuple[int, Any] = (0, None)


def _signed_rank_pmf(n: int) -> Any:
    """P(T+ = t) for n rounds: each rank 1..n is in the positive sum or not, with probability
    1/2. Built on from the last one asked for when n has not gone down (one O(n²) step per
    round), from scratch otherwise."""
    import numpy as np  # lazy: the window imports this module, and starts without NumPy

    global _last_pmf
    with _PMF_LOCK:
        k, p = _last_pmf
        if p is None or k > n:
            k, p = 0, np.ones(1)
        while k < n:
            k += 1
            nxt = np.zeros(len(p) + k)
            nxt[: len(p)] += p / 2
            nxt[k:] += p / 2
            p = nxt
        _last_pmf = (k, p)
        return p


@functools.lru_cache(maxsize=512)
def signed_rank_interval(n: int, confidence: float = CONFIDENCE) -> tuple[int, int] | None:
    """1-based ranks (lo, hi) among the n(n+1)/2 sorted Walsh averages that bound the
    Hodges–Lehmann estimate at `confidence` (the Wilcoxon signed-rank interval), or None when
    n is too small for any interval to reach it.

    lo is the largest c with P(T+ <= c - 1) <= (1 - confidence) / 2, T+ the signed-rank
    statistic of n rounds under the null; hi = n(n+1)/2 + 1 - lo.
    """
    import numpy as np  # lazy: the window imports this module, and starts without NumPy

    m = n * (n + 1) // 2
    alpha = (1 - confidence) / 2
    if n <= EXACT_SIGNED_RANK_MAX:
        cdf = np.cumsum(_signed_rank_pmf(n))
        c = int(np.searchsorted(cdf, alpha, side="right"))  # cdf(c - 1) <= alpha < cdf(c)
    else:
        from scipy.stats import norm  # lazy: SciPy is slow to import

        mean = n * (n + 1) / 4
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        c = math.floor(mean - norm.ppf(1 - alpha) * sd + 0.5)
    if c < 1:
        return None
    return c, m + 1 - c


def walsh_averages(values: Sequence[float]) -> Any:
    """(x_i + x_j) / 2 for every i <= j, sorted (a numpy array)."""
    import numpy as np  # lazy: the window imports this module, and starts without NumPy

    x = np.asarray(values, dtype=float)
    i, j = np.triu_indices(len(x))
    walsh = (x[i] + x[j]) / 2
    walsh.sort()
    return walsh


@dataclass(frozen=True)
class RatioEstimate:
    """The ratio (arm ÷ baseline, per-step time) over `pairs` rounds, with its interval: the
    Hodges–Lehmann estimate of the log ratios and the signed-rank interval, back on the ratio
    scale."""

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


def estimate_ratio(ratios: Sequence[float], confidence: float = CONFIDENCE) -> RatioEstimate:
    if not ratios:
        raise ValueError("no pairs to estimate from")
    if any(not (r > 0 and math.isfinite(r)) for r in ratios):
        raise ValueError("ratios of step times must be positive and finite")
    logs = [math.log(r) for r in ratios]
    return _estimate_from(walsh_averages(logs), logs, confidence)


def _estimate_from(walsh: Any, logs: Sequence[float], confidence: float) -> RatioEstimate:
    """The estimate of the rounds whose log ratios are `logs`, from their sorted Walsh
    averages."""
    return _estimate(len(logs), lambda ranks, _target: [walsh[k - 1] for k in ranks],
                     sum(outlier_flags(logs)), confidence)


def _estimate(n: int, walsh_at: Callable[[list[int], str], list[Any]], outliers: int,
              confidence: float) -> RatioEstimate:
    """The estimate of n rounds from their Walsh averages at the ranks it needs:
    `walsh_at(ranks, target)` gives the averages at those 1-based ranks of the sorted ones
    (`target`, "centre", "low" or "high", says which figure they make)."""
    m = n * (n + 1) // 2
    ranks = signed_rank_interval(n, confidence)
    low = high = None
    if ranks is not None:
        low = math.exp(walsh_at([ranks[0]], "low")[0])
        high = math.exp(walsh_at([ranks[1]], "high")[0])
    mid = m // 2  # the median of the Walsh averages: the middle one, or the two middle ones
    if m % 2:
        centre = walsh_at([mid + 1], "centre")[0]
    else:
        below, above = walsh_at([mid, mid + 1], "centre")
        centre = (below + above) / 2
    return RatioEstimate(
        ratio=math.exp(float(centre)),
        low=low,
        high=high,
        pairs=n,
        outliers=outliers,
    )


def _outliers_among_sorted(logs: Any) -> int:
    """`sum(outlier_flags(logs))` for sorted `logs` (a numpy array), in O(n) array steps: the
    same medians from the same floats, so the same count."""
    import numpy as np  # lazy: the window imports this module, and starts without NumPy

    def median_of_sorted(v: Any) -> Any:
        h = len(v) // 2
        return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2

    med = median_of_sorted(logs)
    spread = np.abs(logs - med)
    h = len(spread) // 2
    spread.partition([h - 1, h] if len(spread) > 1 else [0])
    mad = spread[h] if len(spread) % 2 else (spread[h - 1] + spread[h]) / 2
    mad = mad if mad > 0 else 2.220446049250313e-16
    return int(np.count_nonzero(np.abs((logs - med) / mad) > OUTLIER_THRESHOLD))


class RunningEstimate:
    """The estimate after each round, built on the one before: exactly `estimate_ratio` of
    the rounds so far, for a curve that converges round by round (live or replayed).

    Estimating every prefix from scratch forms and sorts n(n+1)/2 Walsh averages per round,
    O(n³ log n) for a whole curve; merging each round's n new averages into the sorted ones
    kept still moves them all, O(n²) per round. Here the rounds' log ratios are kept sorted,
    and only the few averages the estimate needs (the middle ones and the interval's two ends)
    are found among the implicit sorted averages (`xlagui.core.analysis.walsh.WalshSelector`),
    starting from the values that bounded them the round before: O(n log n) per round, O(n² log n)
    for a whole curve (up to `walsh.KEEP_ALL_UP_TO` rounds it still keeps and merges them all,
    which is faster there). The values are the very same floats `walsh_averages` gives, so the
    estimates are identical, not approximations.
    """

    def __init__(self, confidence: float = CONFIDENCE) -> None:
        self.confidence = confidence
        self._walsh = WalshSelector()

    @property
    def pairs(self) -> int:
        return len(self._walsh)

    def add(self, ratio: float) -> RatioEstimate:
        """Take one more round's ratio; the estimate of every round so far."""
        if not (ratio > 0 and math.isfinite(ratio)):
            raise ValueError("ratios of step times must be positive and finite")
        self._walsh.add(math.log(ratio))
        return _estimate(len(self._walsh), self._walsh.at, _outliers_among_sorted(self._walsh.x),
                         self.confidence)


def running_estimates(ratios: Sequence[float]) -> list[RatioEstimate]:
    """The estimate after each round, as it was when that round ended (what the window plots
    converging, live or replayed), built round on round (`RunningEstimate`)."""
    running = RunningEstimate()
    return [running.add(r) for r in ratios]


@dataclass(frozen=True)
class Pair:
    """One round of an arm against the baseline: seconds per step of each block."""

    seq: int
    baseline_step_seconds: float
    arm_step_seconds: float
    # Something else used the machine beyond the threshold during either block
    # (`xlagui.core.analysis.busy.counted` sets such rounds aside).
    disturbed: bool = False

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
) -> StopReason | None:
    """TARGET once the interval is narrow enough (and at least `min_pairs` rounds ran),
    BUDGET once the measuring time is spent, else None (go on)."""
    if estimate is not None and estimate.pairs >= min_pairs:
        hw = estimate.half_width
        if hw is not None and hw <= target:
            return StopReason.TARGET
    if elapsed >= budget:
        return StopReason.BUDGET
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

    arm: str  # the run's variant: `Role.BASELINE`, `Role.XLA`, another arm's name
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
    variant: str  # the run entries' variant: `Role.XLA` for the XLA side, else the arm name
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    outliers: int = 0
    half_width: float | None = None
    # The interval at 1 - 0.05/m for m arms compared (Bonferroni), which ranks them.
    adjusted_low: float | None = None
    adjusted_high: float | None = None
    first_step_seconds: float | None = None
    steady_step_seconds: float | None = None
    compile_seconds: float | None = None  # its own first step beyond a steady one
    # Its compile cost: `compile_seconds` less the baseline's, signed (below 0: its first step
    # cost less than the baseline's); None when neither side's was measurable.
    extra_compile_seconds: float | None = None
    valid: bool = True
    problems: list[Problem] = field(default_factory=list)  # why it is not valid
    # What is known of how the hardware runs the arm's number format (a `HardwareFit`;
    # `xlagui.present.format.arm_hardware_note` says it).
    hardware: str = ""
    # That note in words, as comparisons saved before it was data hold it ("" since).
    note: str = ""
    val_accuracy: float | None = None
    baseline_val_accuracy: float | None = None
    accuracy_ok: bool | None = None
    # The accuracy verdict itself (`xlagui.present.verdicts.accuracy_words` says it, and where
    # it comes from: training runs or the measurement's quick check); None before there is one.
    accuracy: AccuracyVerdict | None = None
    # `xlagui.core.analysis.accuracy.AccuracyKind`: what the accuracy verdict is
    accuracy_kind: str = ""
    nonfinite_losses: int = 0
    # Rounds set aside because something else used the machine (`busy.counted`); `busy`: too
    # few were left, so the estimate counts them and is marked measured on a busy machine.
    disturbed_pairs: int = 0
    busy: bool = False

    @property
    def speedup(self) -> float | None:
        return 1 / self.ratio if self.ratio else None

    @property
    def clearly_faster(self) -> bool:
        return self.high is not None and self.high < 1

    @property
    def ranking_interval(self) -> tuple[float | None, float | None]:
        """The interval the arms are ranked by: the adjusted one (comparisons saved before it
        existed have only the plain 95% interval)."""
        if self.adjusted_low is not None and self.adjusted_high is not None:
            return self.adjusted_low, self.adjusted_high
        return self.low, self.high

    @property
    def clearly_faster_adjusted(self) -> bool:
        high = self.ranking_interval[1]
        return high is not None and high < 1

    @property
    def clearly_slower(self) -> bool:
        return self.low is not None and self.low > 1

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ArmResult:
        # Comparisons saved before verdicts were data held the accuracy in words
        # (`accuracy_text`, `accuracy_from`): dropped, the report recomputes them from events.
        # And its label in words (`label`), which `xlagui.present.levers.arm_label` says from
        # the arm's name.
        d = {k: v for k, v in d.items() if k not in ("accuracy_text", "accuracy_from", "label")}
        d["problems"] = [Problem.from_saved(p) for p in d.get("problems") or []]
        if d.get("accuracy") is not None:
            d["accuracy"] = AccuracyVerdict.from_dict(d["accuracy"])
        return cls(**d)


@dataclass
class InstrumentCheck:
    """`comparison.interleaved.check`: the A/A check. The baseline measured against an identical
    second baseline worker, interleaved exactly like an arm: any position, order or process
    effect of the instrument shows here as a ratio away from 1."""

    ratio: float
    low: float | None
    high: float | None
    pairs: int
    # Its quick check: the twin trains with the next seed, so this is baseline against
    # baseline after the same steps (`xlagui.core.analysis.accuracy.AccuracyKind`: never a verdict).
    val_accuracy: float | None = None
    baseline_val_accuracy: float | None = None
    accuracy_kind: str = ""
    # As an arm's (`ArmResult.busy`): the check counted rounds something else disturbed.
    disturbed_pairs: int = 0
    busy: bool = False
    covers_one: bool = field(init=False)  # kept in the JSON beside the figures it follows from

    def __post_init__(self) -> None:
        self.covers_one = self.low is not None and self.high is not None and (
            self.low <= 1 <= self.high
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InstrumentCheck:
        return cls(ratio=d["ratio"], low=d.get("low"), high=d.get("high"), pairs=d["pairs"],
                   val_accuracy=d.get("val_accuracy"),
                   baseline_val_accuracy=d.get("baseline_val_accuracy"),
                   accuracy_kind=d.get("accuracy_kind", ""),
                   disturbed_pairs=d.get("disturbed_pairs", 0), busy=d.get("busy", False))


@dataclass
class InterleavedSummary:
    """`comparison.interleaved`: the headline measurement. `ratio` is arm ÷ baseline step
    time (above 1: the arm is slower); the speed-up is its inverse."""

    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    outliers: int = 0
    stopped_by: str = ""  # a `StopReason` ("" while measuring)
    block_steps: int = 0  # the arm's steps per block
    baseline_block_steps: int = 0  # the baseline's (each arm's block lasts about a second)
    half_width: float | None = None
    target: float | None = None
    budget_seconds: float | None = None
    measuring_seconds: float | None = None
    # The rounds' budget (`interleave.rounds_budget`) and set-up's seconds (None: not recorded).
    rounds_budget_seconds: float | None = None
    setup_seconds: float | None = None
    baseline: ArmTiming | None = None
    xla: ArmTiming | None = None
    pair_ratios: list[float] = field(default_factory=list)
    outlier_flags: list[bool] = field(default_factory=list)
    # Every arm against the baseline (the XLA side included), in the order measured.
    arms: list[ArmResult] = field(default_factory=list)
    check: InstrumentCheck | None = None  # with --check: the A/A check, never an arm
    # Each round's pair disturbed or not (in `pair_ratios`' order), how many were set aside,
    # and what else used the machine over the whole measurement (`busy.machine_load`).
    pair_disturbed: list[bool] = field(default_factory=list)
    # Each round counted by the estimate or not (`busy.counted`; []: saved before, all counted).
    pair_counted: list[bool] = field(default_factory=list)
    disturbed_pairs: int = 0
    machine: MachineLoad | None = None
    # Against earlier fresh pairs of workers (`processes.spread`); `widened`: the intervals too.
    processes: ProcessSpread | None = None

    @property
    def counted_ratios(self) -> list[float]:
        """The rounds' ratios the estimate counts."""
        flags = self.pair_counted or [True] * len(self.pair_ratios)
        return [r for r, kept in zip(self.pair_ratios, flags, strict=True) if kept]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> InterleavedSummary:
        d = dict(d)
        if d.get("machine") is not None:
            d["machine"] = decode(MachineLoad, d["machine"], "comparison.interleaved.machine")
        if d.get("processes") is not None:
            d["processes"] = ProcessSpread.from_dict(d["processes"])
        for side in (Role.BASELINE, Role.XLA):
            if d.get(side) is not None:
                d[side] = ArmTiming(**d[side])
        d["arms"] = [ArmResult.from_dict(a) for a in d.get("arms") or []]
        if d.get("check") is not None:
            d["check"] = InstrumentCheck.from_dict(d["check"])
        return cls(**d)


def widest_arm(i: InterleavedSummary) -> ArmResult | None:
    """The arm with the widest interval, when there is more than one arm: the stopping rule
    waits for it, so it is the one a "budget spent" refers to."""
    widths = [a for a in i.arms if a.half_width is not None]
    if len(i.arms) < 2 or not widths:
        return None
    return max(widths, key=lambda a: a.half_width or 0.0)
