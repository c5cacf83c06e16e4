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
from xlagui.core.analysis.efficiency import Efficiency
from xlagui.core.analysis.pairs import InterleavedSummary, block_words, widest_arm
from xlagui.core.protocol.events import EpochEvent, Event, RunSummary


def steady_epochs(epoch_seconds: Sequence[float]) -> list[float]:
    """The epochs after the first: the first one pays for tracing, compiling and warm-up."""
    return list(epoch_seconds[1:])


def summarize_epochs(
    epochs: Sequence[EpochEvent], into: RunSummary | None = None
) -> RunSummary:
    """The timing and metric part of a run's summary, in `into` (its other fields kept)."""
    secs = [e.epoch_seconds for e in epochs]
    steady = steady_epochs(secs)
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
    variant: str  # "baseline" or "xla"
    repeat: int
    xla_mode: str
    summary: RunSummary
    val_count: int = 0

    @property
    def xla_compiled(self) -> bool:
        ev = self.summary.xla_evidence
        return ev is not None and ev.compiled


@dataclass
class Interval:
    value: float
    low: float | None
    high: float | None
    method: str  # how the interval was obtained, in words


# What a comparison could compare (`Comparison.verdict_kind`).
SPEED_MEASURED = "speed_measured"  # a speed-up with its interval (interleaved, or from epochs)
NO_SPEED = "no_speed"  # runs finished, but too few steady epochs or pairs for a speed-up
NOT_COMPARED = "not_compared"  # no finished baseline and XLA run, and no measurement
VERDICT_KINDS = (SPEED_MEASURED, NO_SPEED, NOT_COMPARED)


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
    compile_measured_on: str = ""  # what `extra_compile_seconds` compares, in words
    total_time_ratio: float | None = None
    baseline_total_seconds: float | None = None
    xla_total_seconds: float | None = None
    baseline_steady_seconds: float | None = None  # per epoch, from the training runs
    xla_steady_seconds: float | None = None
    baseline_steady_step_seconds: float | None = None  # per step, interleaved
    xla_steady_step_seconds: float | None = None
    extra_compile_seconds: float | None = None  # None: not measurable (never negative)
    break_even_epoch: int | None = None
    break_even_text: str = ""
    memory_ratio: float | None = None
    device_memory_ratio: float | None = None
    baseline_val_accuracy: float | None = None
    xla_val_accuracy: float | None = None
    accuracy_differs: bool = False
    accuracy_text: str = ""
    # `xlagui.core.analysis.accuracy.AccuracyKind` of the training runs' verdict
    accuracy_kind: str = ""
    valid: bool = True
    problems: list[str] = field(default_factory=list)
    # What did not invalidate the comparison but a reader should know: an optional export that
    # failed ("TensorBoard files not written: …", with the runs it concerns).
    notes: list[str] = field(default_factory=list)
    runs_compared: dict[str, int] = field(default_factory=dict)
    # What could be compared (`VERDICT_KINDS`): code reads this and the figures, never the
    # sentence. `verdict` is the question's answer in words (no recommendation in it: that is
    # `recommendation`), kept for readers of comparison.json.
    verdict_kind: str = ""
    verdict: str = ""
    # With arms beyond the XLA side: the one to recommend (see `xlagui.core.analysis.ranking`).
    recommended_arm: str | None = None
    recommendation: str = ""
    # How far each arm and run is from the machine's limit (set by the report, which knows the
    # config and the measured limits).
    efficiency: Efficiency | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        d = dict(d)
        for key in ("speedup", "speedup_epochs"):
            if d.get(key) is not None:
                d[key] = Interval(**d[key])
        if d.get("interleaved") is not None:
            d["interleaved"] = InterleavedSummary.from_dict(d["interleaved"])
        if d.get("efficiency") is not None:
            d["efficiency"] = Efficiency.from_dict(d["efficiency"])
        return cls(**d)


def t_quantile(df: float, confidence: float = 0.95) -> float:
    from scipy import stats as sps  # lazy: SciPy is slow to import

    return float(sps.t.ppf(0.5 + confidence / 2, df))


def ratio_interval(base: Sequence[float], xla: Sequence[float], method: str) -> Interval:
    """Ratio of geometric means base/xla with a 95% Welch interval on the log scale.

    Timings are positive and skewed, so they are compared as logs: the interval is for the
    ratio, and it is asymmetric around it as a ratio should be.
    """
    lb = [math.log(v) for v in base]
    lx = [math.log(v) for v in xla]
    diff = statistics.fmean(lb) - statistics.fmean(lx)
    value = math.exp(diff)
    if len(lb) < 2 or len(lx) < 2:
        return Interval(value, None, None, method + " (too few values for an interval)")
    vb = statistics.variance(lb) / len(lb)
    vx = statistics.variance(lx) / len(lx)
    se = math.sqrt(vb + vx)
    if se == 0:
        return Interval(value, value, value, method)
    df = (vb + vx) ** 2 / (vb**2 / (len(lb) - 1) + vx**2 / (len(lx) - 1))
    half = t_quantile(df) * se
    return Interval(value, math.exp(diff - half), math.exp(diff + half), method)


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
) -> tuple[int | None, str]:
    """The first epoch at which XLA's cumulative time has caught up with the baseline's.

    Beyond the measured epochs it extrapolates with the steady epoch times, and says so, but
    only when XLA is clearly faster per epoch (the speed-up's interval lies above 1): with no
    clear difference, an extrapolation would be noise divided by noise.
    """
    n = min(len(base_cum), len(xla_cum))
    for i in range(n):
        if xla_cum[i] <= base_cum[i]:
            return i + 1, f"epoch {i + 1}"
    if n == 0:
        return None, "unknown (no epochs)"
    if speedup is not None:
        clearly_faster = speedup.value > 1 and (speedup.low is None or speedup.low > 1)
        clearly_slower = speedup.value <= 1 and (speedup.high is None or speedup.high < 1)
        if clearly_slower:
            return None, "never"
        if not clearly_faster:
            return None, (
                f"not within the {n} measured epochs (XLA is not clearly faster per epoch, "
                "so it may never catch up)"
            )
    if base_steady is None or xla_steady is None or xla_steady >= base_steady:
        return None, "never"
    behind = xla_cum[n - 1] - base_cum[n - 1]
    gain = base_steady - xla_steady
    epoch = n + math.ceil(behind / gain)
    return epoch, f"epoch {epoch} (extrapolated from the steady epoch times)"


def interleaved_speedup(i: InterleavedSummary) -> Interval | None:
    """The speed-up (baseline ÷ XLA per step) from the interleaved ratio (XLA ÷ baseline)."""
    if i.ratio is None or i.ratio <= 0:
        return None
    method = f"from {i.pairs} interleaved pairs of {block_words(i)}" + (
        ", 95% CI" if i.low is not None else " (too few pairs for an interval)"
    )
    return Interval(
        1 / i.ratio,
        1 / i.high if i.high else None,
        1 / i.low if i.low else None,
        method,
    )


def run_notes(runs: Sequence[RunRecord]) -> list[str]:
    """The runs' notes, each once, with the runs it concerns ("… (runs 01-baseline-r1, 02-…)")."""
    concerns: dict[str, list[str]] = {}
    for r in runs:
        for note in r.summary.notes:
            concerns.setdefault(note, []).append(r.run_id)
    return [
        f"{note} (run{'s' if len(ids) > 1 else ''} {', '.join(ids)})"
        for note, ids in concerns.items()
    ]


def compare_runs(
    runs: Sequence[RunRecord],
    interleaved: InterleavedSummary | None = None,
    measure_runs: Sequence[RunRecord] = (),
    chance: float = 0.5,
) -> Comparison:
    """Compare the finished training runs and, when there is one, the interleaved measurement
    (whose workers' evidence is checked like the runs'). `chance` is the validation set's
    commonest-class share (`accuracy.chance_level`), under which accuracy is not compared."""
    base = [r for r in runs if r.variant == "baseline" and r.summary.epochs_done]
    xla = [r for r in runs if r.variant == "xla" and r.summary.epochs_done]
    c = Comparison(runs_compared={"baseline": len(base), "xla": len(xla)})
    c.notes = run_notes([*runs, *measure_runs])
    _check_evidence(c, [*xla, *(m for m in measure_runs if m.variant == "xla")],
                    [*base, *(m for m in measure_runs if m.variant == "baseline")])
    if interleaved is not None and interleaved.ratio is not None:
        _interleaved_figures(c, interleaved)
    if not base or not xla:
        if c.interleaved is not None:
            _memory(
                c,
                [m for m in measure_runs if m.variant == "baseline"],
                [m for m in measure_runs if m.variant == "xla"],
            )
            c.verdict_kind = SPEED_MEASURED if c.speedup is not None else NO_SPEED
            c.verdict = verdict(c)
            return c
        c.valid = False
        c.problems.append("a comparison needs at least one finished baseline and one XLA run")
        c.verdict_kind = NOT_COMPARED
        c.verdict = "Not compared: " + c.problems[-1] + "."
        return c
    _epoch_figures(c, base, xla)
    _memory(c, base, xla)
    _accuracy_parity(c, base, xla, chance)
    c.verdict_kind = SPEED_MEASURED if c.speedup is not None else NO_SPEED
    c.verdict = verdict(c)
    return c


def _check_evidence(c: Comparison, xla: Sequence[RunRecord], base: Sequence[RunRecord]) -> None:
    """An XLA run in which XLA compiled nothing, or a baseline in which it compiled, makes the
    comparison invalid, each said."""
    for r in xla:
        if not r.xla_compiled:
            c.valid = False
            c.problems.append(
                f"run {r.run_id} asked for XLA ({r.xla_mode}) but XLA compiled nothing: "
                "it is not an XLA run and is not compared as one"
            )
    for r in base:
        if r.xla_compiled:
            c.valid = False
            c.problems.append(f"baseline run {r.run_id} shows XLA compiling: it is no baseline")


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
        c.compile_measured_on = "first step beyond the steady steps, XLA minus baseline"


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
        c.speedup_epochs = ratio_interval(
            base_known, xla_known, f"95% CI across {min(len(base), len(xla))} repeats"
        )
    else:
        b_ep = [v for r in base for v in steady_epochs(r.summary.epoch_seconds)]
        x_ep = [v for r in xla for v in steady_epochs(r.summary.epoch_seconds)]
        if b_ep and x_ep:
            c.speedup_epochs = ratio_interval(b_ep, x_ep, "95% CI across epochs after the first")
        else:
            c.problems.append("too few epochs for a steady-state time: run at least 2")
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
            c.compile_measured_on = "first epoch beyond the steady epochs, XLA minus baseline"
    c.break_even_epoch, c.break_even_text = break_even(
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
    c.accuracy_text = "validation accuracy: " + accuracy.words(verdict, chance)


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


def _fmt_seconds(s: float) -> str:
    return f"{s:.0f} s" if abs(s) >= 10 else f"{s:.1f} s"


def speed_sentence(c: Comparison) -> str:
    """The headline speed figure in words, saying what it was measured on."""
    if c.speedup is None:
        return ""
    s = c.speedup
    unit = "per training step" if c.interleaved is not None else "per epoch"
    i = c.interleaved
    basis = (
        f"from {i.pairs} interleaved pairs of {block_words(i)}"
        if i is not None
        else "from epochs"
    )
    has_ci = s.low is not None and s.high is not None
    if not has_ci:
        few = "pairs" if i is not None else "epochs"
        basis = f"too few {few} for an interval: a single measurement"
    if has_ci and s.low <= 1 <= s.high:  # type: ignore[operator]
        text = (
            f"XLA made no clear difference {unit} ({s.value:.2f}×, 95% CI {s.low:.2f}–"
            f"{s.high:.2f}×, {basis}: the interval includes 1)"
        )
    elif s.value >= 1:
        ci = f"95% CI {s.low:.2f}–{s.high:.2f}×, " if has_ci else ""
        text = f"XLA was {s.value:.2f}× faster {unit} ({ci}{basis})"
    else:
        # Said as a slow-down, so the interval is too: 1 / speed-up, bounds swapped.
        ci = f"95% CI {1 / s.high:.2f}–{1 / s.low:.2f}×, " if has_ci else ""  # type: ignore[operator]
        text = f"XLA was {1 / s.value:.2f}× slower {unit} ({ci}{basis})"
    return text


def stop_sentence(i: InterleavedSummary) -> str:
    """How the interleaved measurement ended, in words ("" when it reached its target)."""
    hw = f"±{i.half_width:.1%}" if i.half_width is not None else "no interval yet"
    if i.stopped_by == "budget":
        target = f" ±{i.target:.0%}" if i.target is not None else ""
        widest = widest_arm(i)
        if widest is not None and widest.half_width is not None:
            # The stopping rule waits for the widest interval, which need not be XLA's.
            return (
                f"The time budget ran out before every arm's interval reached{target} "
                f"(widest: {widest.arm} ±{widest.half_width:.1%})."
            )
        return f"The time budget ran out before the{target} precision was reached ({hw})."
    if i.stopped_by == "stopped":
        return f"The measurement was stopped after {i.pairs} pairs ({hw})."
    if i.stopped_by == "error":
        return f"A worker failed after {i.pairs} pairs; the pairs before it are kept ({hw})."
    return ""


def verdict(c: Comparison) -> str:
    """The comparison in one or two plain sentences."""
    if c.speedup is None:
        return "Not enough measurements to compare steady-state speed. " + "; ".join(c.problems)
    speed = speed_sentence(c)
    compile_part = ""
    extra = c.extra_compile_seconds
    if extra is None:
        compile_part = "; its extra compile time was not measurable"
    elif c.break_even_text == "never":
        compile_part = f" and never pays back its {_fmt_seconds(extra)} compile"
    elif c.break_even_epoch is None and c.runs_compared.get("xla"):
        compile_part = (
            f"; its {_fmt_seconds(extra)} compile was not paid back within the measured epochs"
        )
    elif c.break_even_epoch is not None and c.break_even_epoch > 1:
        compile_part = f"; its {_fmt_seconds(extra)} compile is paid back by {c.break_even_text}"
    elif not c.runs_compared.get("xla"):
        compile_part = f"; compiling cost it {_fmt_seconds(extra)} once"
    total = ""
    if c.total_time_ratio is not None:
        pct = (1 - c.total_time_ratio) * 100
        total = (
            f" Total wall time: {abs(pct):.0f}% {'less' if pct >= 0 else 'more'} than the baseline."
        )
    text = speed + compile_part + "." + total
    if c.interleaved is not None:
        stop = stop_sentence(c.interleaved)
        if stop:
            text += " " + stop
    if c.accuracy_differs:
        text += " Accuracy differs beyond noise: " + c.accuracy_text + "."
    if not c.valid:
        text = "NOT A VALID COMPARISON: " + "; ".join(c.problems) + ". " + text
    return text
