"""Statistics of runs and comparisons, computed from event streams alone.

The worker, the CLI, the GUI and tests all summarise with these functions, so a recorded stream
replayed without TensorFlow gives exactly the figures the live run gave.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from xlagui.core.analysis import accuracy
from xlagui.core.analysis.accuracy import AccuracyVerdict
from xlagui.core.analysis.efficiency import Efficiency
from xlagui.core.analysis.notes import RunNote, run_notes, saved_notes
from xlagui.core.analysis.pairs import InterleavedSummary, Recommendation
from xlagui.core.protocol.events import EpochEvent, Event, RunSummary
from xlagui.core.protocol.identity import Role, StrEnum
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.problems import Problem, ProblemKind, xla_problem


def steady_epochs(epoch_seconds: Sequence[float],
                  disturbed: Sequence[int] = ()) -> list[float]:
    """The epochs after the first (it pays for tracing, compiling and warm-up) that nothing
    else disturbed (`disturbed`: 1-based epoch numbers, `EpochEvent.interference`). When every
    later epoch was disturbed, all of them: the run then says it was measured on a busy
    machine (`RunSummary.disturbed_epochs`)."""
    later = list(enumerate(epoch_seconds[1:], start=2))
    calm = [s for n, s in later if n not in set(disturbed)]
    return calm or [s for _, s in later]


def _steady(summary: RunSummary) -> list[float]:
    return steady_epochs(summary.epoch_seconds, summary.disturbed_epochs)


def summarize_epochs(
    epochs: Sequence[EpochEvent], into: RunSummary | None = None
) -> RunSummary:
    """The timing and metric part of a run's summary, in `into` (its other fields kept)."""
    secs = [e.epoch_seconds for e in epochs]
    disturbed = tuple(e.epoch for e in epochs
                      if e.interference is not None and e.interference.disturbed)
    steady = steady_epochs(secs, disturbed)
    last = epochs[-1] if epochs else None
    median = statistics.median(steady) if steady else None
    return replace(
        into if into is not None else RunSummary(),
        epochs_done=len(epochs),
        total_seconds=sum(secs),
        first_epoch_seconds=secs[0] if secs else None,
        steady_epoch_seconds=median,
        steady_epoch_stdev=statistics.stdev(steady) if len(steady) >= 2 else None,
        steady_epoch_min=min(steady) if steady else None,
        steady_epoch_max=max(steady) if steady else None,
        # What the first epoch cost beyond a steady one: tracing, XLA compiling, warm-up.
        compile_overhead_seconds=(secs[0] - median) if median is not None else None,
        epoch_seconds=tuple(secs),
        cumulative_seconds=tuple(e.cumulative_seconds for e in epochs),
        disturbed_epochs=disturbed,
        final_loss=last.loss if last else None,
        final_accuracy=last.accuracy if last else None,
        final_val_loss=last.val_loss if last else None,
        final_val_accuracy=last.val_accuracy if last else None,
    )


def epoch_events(events: Sequence[Event]) -> list[EpochEvent]:
    return [e for e in events if isinstance(e, EpochEvent)]


@dataclass
class RunRecord:
    """What a comparison needs of one finished run."""

    run_id: str
    variant: str  # `Role.BASELINE` or `Role.XLA`
    repeat: int
    xla_mode: str
    summary: RunSummary
    val_count: int = 0

    @property
    def xla_compiled(self) -> bool:
        ev = self.summary.xla_evidence
        return ev is not None and ev.compiled


class IntervalBasis(StrEnum):
    """What a speed-up's interval was computed from (`Interval.basis`)."""

    INTERLEAVED = "interleaved"  # the interleaved measurement's pairs of blocks
    REPEATS = "repeats"  # one steady epoch time per repeat (`Interval.count` of them)
    EPOCHS = "epochs"  # every epoch after the first


@dataclass
class Interval:
    """A speed-up with its 95% interval (`low`, `high`: None when there were too few values for
    one), and what it was computed from: `basis` (an `IntervalBasis`) and `count`, the pairs or
    repeats. `xlagui.present.intervals.interval_method` says it. `method` is how a comparison
    saved before `basis` said it, in words (shown as it is); "" since."""

    value: float
    low: float | None
    high: float | None
    method: str = ""
    basis: str = ""
    count: int = 0


class CompileBasis(StrEnum):
    """What XLA's extra compile time was measured on (`Comparison.compile_measured_on`): XLA
    minus baseline, beyond the steady ones, of the first step, of every compile and recompile,
    or of the first epoch."""

    FIRST_STEP = "first_step"  # of the interleaved measurement's workers
    # every compilation the interleaved measurement's workers reported (`compiled` events:
    # training, evaluation, a partial batch's recompile), `xlagui.core.analysis.compiles`
    COMPILATIONS = "compilations"
    FIRST_EPOCH = "first_epoch"  # of the training runs


# What a comparison could compare (`Comparison.verdict_kind`).
SPEED_MEASURED = "speed_measured"  # a speed-up with its interval (interleaved, or from epochs)
NO_SPEED = "no_speed"  # runs finished, but too few steady epochs or pairs for a speed-up
NOT_COMPARED = "not_compared"  # no finished baseline and XLA run, and no measurement
VERDICT_KINDS = (SPEED_MEASURED, NO_SPEED, NOT_COMPARED)

# When XLA's cumulative time catches up with the baseline's (`BreakEven.kind`).
CAUGHT_UP = "caught_up"  # within the measured epochs, at `epoch`
EXTRAPOLATED = "extrapolated"  # beyond them, at `epoch`, from the steady epoch times
NOT_WITHIN = "not_within"  # not within them, and XLA is not clearly faster per epoch
NEVER = "never"  # XLA is slower per epoch (or not faster): it never catches up
NO_EPOCHS = "no_epochs"  # nothing to compare yet
BREAK_EVEN_KINDS = (CAUGHT_UP, EXTRAPOLATED, NOT_WITHIN, NEVER, NO_EPOCHS)


@dataclass(frozen=True)
class BreakEven:
    """The break-even epoch (`break_even`): its kind, the epoch (when there is one) and how
    many epochs were measured."""

    kind: str  # one of BREAK_EVEN_KINDS
    epoch: int | None = None
    measured_epochs: int = 0


@dataclass
class Comparison:
    """Baseline vs XLA. Ratios are baseline ÷ XLA for speed (above 1: XLA faster) and
    XLA ÷ baseline for totals and memory (below 1: XLA smaller).

    `speedup` is the headline: from the interleaved measurement when there is one (per training
    step, pairs of blocks), else from the training runs' epochs, which `speedup_epochs` keeps
    under its own name either way."""

    speedup: Interval | None = None
    speedup_epochs: Interval | None = None
    interleaved: InterleavedSummary | None = None
    # What `extra_compile_seconds` compares: a `CompileBasis`, or, in comparisons saved before
    # it, the same in words; "" when nothing was.
    compile_measured_on: str = ""
    total_time_ratio: float | None = None
    baseline_total_seconds: float | None = None
    xla_total_seconds: float | None = None
    baseline_steady_seconds: float | None = None  # per epoch, from the training runs
    xla_steady_seconds: float | None = None
    baseline_steady_step_seconds: float | None = None  # per step, interleaved
    xla_steady_step_seconds: float | None = None
    extra_compile_seconds: float | None = None  # None: not measurable (never negative)
    break_even: BreakEven | None = None  # None: no training runs compared
    # The interleaved measurement's break-even: the training steps after which XLA's faster
    # steps have paid for its extra compiles and recompiles (None: XLA is not clearly faster,
    # or nothing to pay back). The training runs' epochs count every recompile in their times.
    break_even_steps: int | None = None
    memory_ratio: float | None = None
    device_memory_ratio: float | None = None
    baseline_val_accuracy: float | None = None
    xla_val_accuracy: float | None = None
    accuracy_differs: bool = False
    accuracy: AccuracyVerdict | None = None  # the training runs' accuracy verdict
    # `xlagui.core.analysis.accuracy.AccuracyKind` of the training runs' verdict
    accuracy_kind: str = ""
    valid: bool = True
    # Why it is not valid, or why nothing was compared (`xlagui.present.problems` says them).
    problems: list[Problem] = field(default_factory=list)
    # What did not invalidate the comparison but a reader should know: an optional export that
    # failed, with the runs it concerns (`xlagui.present.notes` says them).
    notes: list[RunNote] = field(default_factory=list)
    runs_compared: dict[str, int] = field(default_factory=dict)
    # What could be compared (`VERDICT_KINDS`). With the figures, the break-even, the accuracy
    # verdict and the problems it is the verdict as data: `xlagui.present.verdicts` alone says
    # it in words (comparison.json holds no sentence).
    verdict_kind: str = ""
    # With arms beyond the XLA side: the one to recommend and why (see
    # `xlagui.core.analysis.ranking`); `recommended_arm` is its arm, kept beside it for readers of
    # comparison.json.
    recommended_arm: str | None = None
    recommendation: Recommendation | None = None
    # How far each arm and run is from the machine's limit (set by the report, which knows the
    # config and the measured limits).
    efficiency: Efficiency | None = None
    # Training runs' epochs (1-based, by run id) during which something else used the machine
    # beyond the threshold: not counted as steady (`RunSummary.disturbed_epochs`).
    disturbed_epochs: dict[str, list[int]] = field(default_factory=dict)

    @property
    def break_even_epoch(self) -> int | None:
        return self.break_even.epoch if self.break_even is not None else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        """A saved comparison; one saved before verdicts were data (`saved_in_words`) loses
        its sentences and the break-even, which `ComparisonReport` recomputes from events."""
        d = {k: v for k, v in d.items() if k not in _IN_WORDS}
        d["problems"] = [Problem.from_saved(p) for p in d.get("problems") or []]
        d["notes"] = saved_notes(d.get("notes") or [])
        if not isinstance(d.get("recommendation"), dict):
            d["recommendation"] = None
        else:
            d["recommendation"] = Recommendation.from_dict(d["recommendation"])
        if d.get("break_even") is not None:
            d["break_even"] = BreakEven(**d["break_even"])
        if d.get("accuracy") is not None:
            d["accuracy"] = AccuracyVerdict.from_dict(d["accuracy"])
        for key in ("speedup", "speedup_epochs"):
            if d.get(key) is not None:
                d[key] = Interval(**d[key])
        if d.get("interleaved") is not None:
            d["interleaved"] = InterleavedSummary.from_dict(d["interleaved"])
        if d.get("efficiency") is not None:
            d["efficiency"] = Efficiency.from_dict(d["efficiency"])
        return cls(**d)


# What comparisons saved before verdicts were data held in words (and the break-even epoch,
# now inside `break_even`).
_IN_WORDS = ("verdict", "accuracy_text", "break_even_text", "break_even_epoch")


def saved_in_words(d: dict[str, Any]) -> bool:
    """Whether a saved comparison (`Comparison.to_dict`) is from before verdicts were data: it
    holds its verdict as a sentence, and nothing typed to say it again from."""
    return isinstance(d.get("verdict"), str)


def t_quantile(df: float, confidence: float = 0.95) -> float:
    from scipy import stats as sps  # lazy: SciPy is slow to import

    return float(sps.t.ppf(0.5 + confidence / 2, df))


def ratio_interval(base: Sequence[float], xla: Sequence[float], basis: IntervalBasis,
                   count: int = 0) -> Interval:
    """Ratio of geometric means base/xla with a 95% Welch interval on the log scale (none with
    fewer than two values a side), computed from `basis` (`count` repeats).

    Timings are positive and skewed, so they are compared as logs: the interval is for the
    ratio, and it is asymmetric around it as a ratio should be.
    """
    lb = [math.log(v) for v in base]
    lx = [math.log(v) for v in xla]
    diff = statistics.fmean(lb) - statistics.fmean(lx)
    value = math.exp(diff)
    if len(lb) < 2 or len(lx) < 2:
        return Interval(value, None, None, basis=basis, count=count)
    vb = statistics.variance(lb) / len(lb)
    vx = statistics.variance(lx) / len(lx)
    se = math.sqrt(vb + vx)
    if se == 0:
        return Interval(value, value, value, basis=basis, count=count)
    df = (vb + vx) ** 2 / (vb**2 / (len(lb) - 1) + vx**2 / (len(lx) - 1))
    half = t_quantile(df) * se
    return Interval(value, math.exp(diff - half), math.exp(diff + half), basis=basis,
                    count=count)


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.fmean(vals) if vals else None


def _mean_curve(curves: Sequence[Sequence[float]]) -> list[float]:
    n = min((len(c) for c in curves), default=0)
    return [statistics.fmean(c[i] for c in curves) for i in range(n)]


def break_even(
    base_cum: Sequence[float],
    xla_cum: Sequence[float],
    base_steady: float | None,
    xla_steady: float | None,
    speedup: Interval | None = None,
) -> BreakEven:
    """The first epoch at which XLA's cumulative time has caught up with the baseline's.

    Beyond the measured epochs it extrapolates with the steady epoch times, and says so, but
    only when XLA is clearly faster per epoch (the speed-up's interval lies above 1): with no
    clear difference, an extrapolation would be noise divided by noise.
    """
    n = min(len(base_cum), len(xla_cum))
    for i in range(n):
        if xla_cum[i] <= base_cum[i]:
            return BreakEven(CAUGHT_UP, i + 1, n)
    if n == 0:
        return BreakEven(NO_EPOCHS)
    if speedup is not None:
        clearly_faster = speedup.value > 1 and (speedup.low is None or speedup.low > 1)
        clearly_slower = speedup.value <= 1 and (speedup.high is None or speedup.high < 1)
        if clearly_slower:
            return BreakEven(NEVER, measured_epochs=n)
        if not clearly_faster:
            return BreakEven(NOT_WITHIN, measured_epochs=n)
    if base_steady is None or xla_steady is None or xla_steady >= base_steady:
        return BreakEven(NEVER, measured_epochs=n)
    behind = xla_cum[n - 1] - base_cum[n - 1]
    gain = base_steady - xla_steady
    return BreakEven(EXTRAPOLATED, n + math.ceil(behind / gain), n)


def interleaved_speedup(i: InterleavedSummary) -> Interval | None:
    """The speed-up (baseline ÷ XLA per step) from the interleaved ratio (XLA ÷ baseline)."""
    if i.ratio is None or i.ratio <= 0:
        return None
    return Interval(
        1 / i.ratio,
        1 / i.high if i.high else None,
        1 / i.low if i.low else None,
        basis=IntervalBasis.INTERLEAVED,
        count=i.pairs,
    )


def compare_runs(
    runs: Sequence[RunRecord],
    interleaved: InterleavedSummary | None = None,
    measure_runs: Sequence[RunRecord] = (),
    chance: float = 0.5,
) -> Comparison:
    """Compare the finished training runs and, when there is one, the interleaved measurement
    (whose workers' evidence is checked like the runs'). `chance` is the validation set's
    commonest-class share (`accuracy.chance_level`), under which accuracy is not compared."""
    base = [r for r in runs if r.variant == Role.BASELINE and r.summary.epochs_done]
    xla = [r for r in runs if r.variant == Role.XLA and r.summary.epochs_done]
    c = Comparison(runs_compared={Role.BASELINE: len(base), Role.XLA: len(xla)})
    c.notes = run_notes([(r.run_id, r.summary) for r in [*runs, *measure_runs]])
    c.disturbed_epochs = {r.run_id: list(r.summary.disturbed_epochs) for r in runs
                          if r.summary.disturbed_epochs}
    _check_evidence(c, [*xla, *(m for m in measure_runs if m.variant == Role.XLA)],
                    [*base, *(m for m in measure_runs if m.variant == Role.BASELINE)])
    if interleaved is not None and interleaved.ratio is not None:
        _interleaved_figures(c, interleaved)
    if not base or not xla:
        if c.interleaved is not None:
            _memory(
                c,
                [m for m in measure_runs if m.variant == Role.BASELINE],
                [m for m in measure_runs if m.variant == Role.XLA],
            )
            c.verdict_kind = SPEED_MEASURED if c.speedup is not None else NO_SPEED
            return c
        c.valid = False
        # The last problem is why nothing was compared (the verdict names it).
        c.problems.append(Problem(ProblemKind.NO_RUNS_TO_COMPARE))
        c.verdict_kind = NOT_COMPARED
        return c
    _epoch_figures(c, base, xla)
    _memory(c, base, xla)
    _accuracy_parity(c, base, xla, chance)
    c.verdict_kind = SPEED_MEASURED if c.speedup is not None else NO_SPEED
    return c


def _check_evidence(c: Comparison, xla: Sequence[RunRecord], base: Sequence[RunRecord]) -> None:
    """An XLA run in which XLA compiled nothing (no evidence counts as nothing), or a baseline
    in which it compiled, makes the comparison invalid, each kept as a problem."""
    for r in [*xla, *base]:
        problem = xla_problem(r.run_id, XlaMode(r.xla_mode), r.xla_compiled)
        if problem is not None:
            c.valid = False
            c.problems.append(problem)


def _interleaved_figures(c: Comparison, interleaved: InterleavedSummary) -> None:
    """The headline from the interleaved measurement: the speed-up, the steady steps and the
    compile cost in the first step."""
    c.interleaved = interleaved
    c.speedup = interleaved_speedup(interleaved)
    c.runs_compared["interleaved_pairs"] = interleaved.pairs
    b, x = interleaved.baseline, interleaved.xla
    if b is not None and x is not None:
        c.baseline_steady_step_seconds = b.steady_step_seconds
        c.xla_steady_step_seconds = x.steady_step_seconds
        if x.compile_seconds is not None:
            extra = x.compile_seconds - (b.compile_seconds or 0.0)
            c.extra_compile_seconds = extra if extra > 0 else None
        c.compile_measured_on = CompileBasis.FIRST_STEP


def _epoch_figures(c: Comparison, base: Sequence[RunRecord], xla: Sequence[RunRecord]) -> None:
    """What the training runs add: the epoch-based speed-up (across repeats, or across
    epochs after the first), steady and total times, the compile cost in the first epoch when
    nothing was measured interleaved, and the break-even epoch."""
    base_steady = [r.summary.steady_epoch_seconds for r in base]
    xla_steady = [r.summary.steady_epoch_seconds for r in xla]
    base_known = [v for v in base_steady if v is not None]
    xla_known = [v for v in xla_steady if v is not None]
    all_known = len(base_known) == len(base) and len(xla_known) == len(xla)
    if len(base) >= 2 and len(xla) >= 2 and all_known:
        c.speedup_epochs = ratio_interval(base_known, xla_known, IntervalBasis.REPEATS,
                                          min(len(base), len(xla)))
    else:
        b_ep = [v for r in base for v in _steady(r.summary)]
        x_ep = [v for r in xla for v in _steady(r.summary)]
        if b_ep and x_ep:
            c.speedup_epochs = ratio_interval(b_ep, x_ep, IntervalBasis.EPOCHS)
        else:
            c.problems.append(Problem(ProblemKind.TOO_FEW_EPOCHS))
    if c.speedup is None:
        c.speedup = c.speedup_epochs
    c.baseline_steady_seconds = _mean(base_steady)
    c.xla_steady_seconds = _mean(xla_steady)
    c.baseline_total_seconds = _mean([r.summary.total_seconds for r in base])
    c.xla_total_seconds = _mean([r.summary.total_seconds for r in xla])
    if c.baseline_total_seconds and c.xla_total_seconds is not None:
        c.total_time_ratio = c.xla_total_seconds / c.baseline_total_seconds
    if not c.compile_measured_on:
        bo = _mean([r.summary.compile_overhead_seconds for r in base])
        xo = _mean([r.summary.compile_overhead_seconds for r in xla])
        if bo is not None and xo is not None:
            # Epochs swing by more than a small compile: a first epoch that came out faster
            # than the baseline's is noise, and is reported as not measurable, never negative.
            c.extra_compile_seconds = xo - bo if xo - bo > 0 else None
            c.compile_measured_on = CompileBasis.FIRST_EPOCH
    c.break_even = break_even(
        _mean_curve([r.summary.cumulative_seconds for r in base]),
        _mean_curve([r.summary.cumulative_seconds for r in xla]),
        c.baseline_steady_seconds,
        c.xla_steady_seconds,
        c.speedup,
    )


def _memory(c: Comparison, base: Sequence[RunRecord], xla: Sequence[RunRecord]) -> None:
    brss = _mean([r.summary.peak_rss_bytes for r in base])
    xrss = _mean([r.summary.peak_rss_bytes for r in xla])
    if brss and xrss:
        c.memory_ratio = xrss / brss
    bdev = _mean([r.summary.peak_device_bytes for r in base])
    xdev = _mean([r.summary.peak_device_bytes for r in xla])
    if bdev and xdev:
        c.device_memory_ratio = xdev / bdev


def _accuracy_parity(
    c: Comparison, base: Sequence[RunRecord], xla: Sequence[RunRecord], chance: float
) -> None:
    verdict = accuracy.compare(_accuracy_side(base), _accuracy_side(xla), chance)
    c.baseline_val_accuracy, c.xla_val_accuracy = verdict.baseline, verdict.arm
    c.accuracy_differs = verdict.differs
    c.accuracy_kind = verdict.kind.value
    c.accuracy = verdict


def _accuracy_side(runs: Sequence[RunRecord]) -> accuracy.AccuracySide:
    """One side's training runs, one accuracy per seed (repeat r trains with seed + r - 1)."""
    ordered = sorted(runs, key=lambda r: r.repeat)
    return accuracy.AccuracySide(
        tuple(r.summary.final_val_accuracy for r in ordered
              if r.summary.final_val_accuracy is not None),
        min((r.val_count for r in ordered), default=0),
        epochs=max((r.summary.epochs_done for r in ordered), default=0) or None,
        correct=tuple(r.summary.val_correct for r in ordered if r.summary.val_correct),
    )
