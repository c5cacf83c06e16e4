"""Does an arm learn as well as the baseline? A claim only where the evidence covers its noise.

Two noise sources stand between a validation-accuracy gap and "XLA learns worse":
- the validation set's sampling noise (n images), and
- training's own seed-to-seed spread. Early in training it dwarfs the first: the article's CNN on
  the demo set at 96 px after 61 steps reached 94.0–98.5% over six baseline seeds, and bf16
  97.5, 80.5, 97.0 and 69.5% over four (issue 19's table).

So the rule, one home for the CLI, the window, the PNG and the JSON:
- one run a side (the measuring workers' quick check, or training without `--repeats`): the
  seed-to-seed spread is unmeasured, and no verdict is given. The figures are reported, and for
  training runs with per-image results, McNemar's test says whether the two models differ on
  these very images (which one seed cannot pin on the arm);
- R ≥ 2 seed-paired runs a side (`--repeats R` trains repeat r of every side with seed + r - 1):
  the paired differences' t-interval covers both noise sources at once (each run's accuracy
  carries its own sampling noise), floored by the sampling noise of n images. "Worse" or
  "better" only when that interval excludes 0.

Verdicts are data (`AccuracyVerdict`, kept whole on the comparison and on each arm);
`xlagui.present.verdicts.accuracy_words` says them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from xlagui.core.protocol.identity import Split, StrEnum


class AccuracyKind(StrEnum):
    SAME = "same"  # within the noise that was measured
    WORSE = "worse"
    BETTER = "better"
    ONE_SEED = "one_seed"  # one run a side: the seed-to-seed spread is not measured
    TOO_EARLY = "too_early"  # the measuring workers' quick check: a few dozen steps, one seed
    AT_CHANCE = "at_chance"  # the baseline has not left chance level yet
    NONFINITE = "nonfinite"  # the arm's loss went NaN or infinite
    UNEQUAL_STEPS = "unequal_steps"  # the arm trained fewer steps than the baseline
    NO_DATA = "no_data"
    # From the why's parity steps, where nothing else says (`ranking.with_parity`): an arm in
    # float32 whose first steps are the baseline's within rounding trains the baseline's model;
    # one whose steps diverge beyond rounding does not.
    SAME_NUMBERS = "same_numbers"
    DIVERGING_NUMBERS = "diverging_numbers"


@dataclass(frozen=True)
class AccuracySide:
    """One side's final validation accuracies, one per seed (repeat) in seed order."""

    values: tuple[float, ...]
    images: int  # validation images
    steps: int | None = None  # the quick check's training steps; None for training runs
    epochs: int | None = None  # training runs' epochs
    correct: tuple[str, ...] = ()  # per run, which images it got right (`correct_bits`)


@dataclass(frozen=True)
class AccuracyVerdict:
    kind: AccuracyKind
    arm: float | None = None  # mean over seeds
    baseline: float | None = None
    images: int = 0
    seeds: int = 0  # seed pairs behind the figures
    difference: float | None = None  # arm - baseline, mean of the seed pairs
    noise: float | None = None  # half-width of the difference's 95% interval
    steps: int | None = None
    epochs: int | None = None
    p_value: float | None = None  # McNemar, one seed pair with per-image results
    nonfinite: int = 0
    chance: float | None = None  # the commonest-class share it was judged against
    arm_runs: int = 0  # the arm's accuracies behind `arm` (one per seed)

    @property
    def ok(self) -> bool | None:
        """True: as well (or better); False: worse (or a non-finite loss); None: not known."""
        if self.kind in (AccuracyKind.SAME, AccuracyKind.BETTER, AccuracyKind.SAME_NUMBERS):
            return True
        if self.kind in (AccuracyKind.WORSE, AccuracyKind.NONFINITE,
                         AccuracyKind.DIVERGING_NUMBERS):
            return False
        return None

    @property
    def differs(self) -> bool:
        return self.kind in (AccuracyKind.WORSE, AccuracyKind.BETTER)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AccuracyVerdict:
        return cls(**{**d, "kind": AccuracyKind(d["kind"])})


def sampling_noise(a: float, b: float, n: int) -> float:
    """Half-width of a 95% interval of the difference of two accuracies on n images, by
    Agresti–Caffo (one success and one failure added to each side), which unlike the plain
    normal interval does not collapse when an accuracy nears 100% or 0%; never under 1/n."""
    pa, pb = (a * n + 1) / (n + 2), (b * n + 1) / (n + 2)
    return max(1.96 * math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / (n + 2)), 1.0 / n)


def correct_bits(flags: Sequence[bool]) -> str:
    """Per-image correctness as hex, image i in bit i (what a worker reports)."""
    value = sum(1 << i for i, ok in enumerate(flags) if ok)
    return f"{len(flags)}:{value:x}"


def read_bits(text: str) -> list[bool] | None:
    try:
        count, value = text.split(":")
        n, v = int(count), int(value, 16)
    except ValueError:
        return None
    return [bool(v >> i & 1) for i in range(n)]


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Exact McNemar p-value (two-sided binomial on the discordant images) that two models
    given the same images are equally accurate on them; None when they cannot be paired."""
    from scipy import stats as sps  # lazy: SciPy is slow to import

    if len(a) != len(b) or not a:
        return None
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    if only_a + only_b == 0:
        return 1.0
    return float(sps.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def _t(df: int) -> float:
    from scipy import stats as sps  # lazy: SciPy is slow to import

    return float(sps.t.ppf(0.975, df))


def compare(
    base: AccuracySide, arm: AccuracySide, chance: float, nonfinite: int = 0
) -> AccuracyVerdict:
    """The arm's accuracy against the baseline's, judged against the noise that was measured."""
    n = max(1, min(base.images or 1, arm.images or 1))
    v = AccuracyVerdict(
        AccuracyKind.NO_DATA, images=n, steps=arm.steps, epochs=arm.epochs, nonfinite=nonfinite,
        chance=chance, arm_runs=len(arm.values),
    )
    v = replace(
        v,
        arm=statistics.fmean(arm.values) if arm.values else None,
        baseline=statistics.fmean(base.values) if base.values else None,
    )
    if nonfinite:
        return replace(v, kind=AccuracyKind.NONFINITE)
    if v.arm is None or v.baseline is None:
        return v
    a, b = v.arm, v.baseline
    seeds = min(len(base.values), len(arm.values))
    v = replace(v, difference=a - b, seeds=seeds)
    if base.steps is not None and arm.steps is not None and base.steps != arm.steps:
        return replace(v, kind=AccuracyKind.UNEQUAL_STEPS)
    if arm.steps is not None:  # the quick check: early in training, one seed a side
        return replace(v, kind=AccuracyKind.TOO_EARLY)
    if at_chance(b, n, chance):
        return replace(v, kind=AccuracyKind.AT_CHANCE)
    if seeds < 2:
        pair = [read_bits(side.correct[0]) if side.correct else None for side in (base, arm)]
        p = mcnemar(pair[0], pair[1]) if pair[0] is not None and pair[1] is not None else None
        return replace(v, kind=AccuracyKind.ONE_SEED, p_value=p)
    diffs = [x - y for x, y in zip(arm.values[:seeds], base.values[:seeds], strict=True)]
    spread = _t(seeds - 1) * statistics.stdev(diffs) / math.sqrt(seeds)
    noise = max(spread, sampling_noise(a, b, n) / math.sqrt(seeds))
    d = statistics.fmean(diffs)
    kind = AccuracyKind.SAME
    if abs(d) > noise:
        kind = AccuracyKind.WORSE if d < 0 else AccuracyKind.BETTER
    return replace(v, kind=kind, difference=d, noise=noise)


def chance_level(counts: dict[str, Any] | None, class_count: int) -> float:
    """The accuracy of always answering the validation set's commonest class."""
    val = (counts or {}).get(Split.TEST) or {}
    total = sum(int(v) for v in val.values()) if val else 0
    if total:
        return max(int(v) for v in val.values()) / total
    return 1 / max(2, class_count)


def at_chance(accuracy: float, n: int, chance: float) -> bool:
    """Not distinguishable from always guessing the commonest class (two standard errors)."""
    return accuracy <= chance + 2 * math.sqrt(chance * (1 - chance) / max(1, n))
