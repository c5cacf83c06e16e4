"""What a run's plots show, gathered from its events (Qt-free, so it is cheap to test).

A trace only appends: events arrive on the GUI thread and cost a few list appends; the plots
read the lists at their own, bounded rate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from xlagui.core.analysis.busy import clean_only
from xlagui.core.analysis.pairs import (
    MIN_PAIRS_FOR_INTERVAL,
    InterleavedSummary,
    RatioEstimate,
    RunningEstimate,
)
from xlagui.core.protocol import events as ev
from xlagui.core.protocol.identity import Role, RunStatus, WorkerMode

# Weight of the newest batch in the smoothed loss curve (an exponential moving average).
SMOOTHING = 0.15


@dataclass
class RunTrace:
    """One run's curves and state, in the order its events came."""

    run_id: str = ""
    repeat: int = 1
    epochs_planned: int = 0
    steps_per_epoch: int = 0
    started: ev.StartedEvent | None = None
    batch_x: list[float] = field(default_factory=list)  # fractional epoch: 0.5 = half of epoch 1
    batch_loss: list[float] = field(default_factory=list)
    batch_smooth: list[float] = field(default_factory=list)
    epoch_x: list[float] = field(default_factory=list)
    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)  # NaN where there was none
    cumulative: list[float] = field(default_factory=list)
    epochs: list[ev.EpochEvent] = field(default_factory=list)
    summary: ev.RunSummary | None = None
    terminal: ev.Event | None = None
    first_batch_t: float | None = None
    first_batch_step: int = 0
    last_t: float = 0.0
    current_epoch: int = 0
    steps_done: int = 0
    warmup: ev.WarmupEvent | None = None  # a measuring worker's first and warm steps
    blocks: list[ev.BlockEvent] = field(default_factory=list)  # its timed blocks
    compiled: list[ev.CompiledEvent] = field(default_factory=list)  # each compilation reported
    # How the comparison recorded the run's end (`INTERRUPTED`: the app closed during it), once
    # it ended; None before.
    status: RunStatus | None = None

    @property
    def measuring(self) -> bool:
        return self.started is not None and self.started.mode == WorkerMode.MEASURE

    @property
    def disturbed_points(self) -> tuple[list[float], list[float]]:
        """Where on the cumulative wall-time curve the epochs something else disturbed end
        (`EpochEvent.interference`): not counted as steady, drawn apart."""
        points = [(x, total) for x, total, e in zip(self.epoch_x, self.cumulative, self.epochs,
                                                    strict=False)
                  if e.interference is not None and e.interference.disturbed]
        return [x for x, _ in points], [y for _, y in points]

    def median_step_seconds(self) -> float | None:
        per_step = sorted(b.seconds / b.steps for b in self.blocks if b.steps)
        return per_step[len(per_step) // 2] if per_step else None

    def add(self, event: ev.Event) -> None:
        self.last_t = max(self.last_t, event.t)
        if isinstance(event, ev.StartedEvent):
            self.started = event
            self.steps_per_epoch = event.steps_per_epoch
        elif isinstance(event, ev.BatchEvent):
            self.current_epoch = event.epoch
            self.steps_done = (event.epoch - 1) * self.steps_per_epoch + event.step
            if self.first_batch_t is None:
                self.first_batch_t = event.t
                self.first_batch_step = self.steps_done
            if event.loss is None:
                return
            steps = max(self.steps_per_epoch, event.step, 1)
            self.batch_x.append(event.epoch - 1 + event.step / steps)
            self.batch_loss.append(event.loss)
            prev = self.batch_smooth[-1] if self.batch_smooth else event.loss
            self.batch_smooth.append(prev + SMOOTHING * (event.loss - prev))
        elif isinstance(event, ev.EpochEvent):
            self.epochs.append(event)
            self.current_epoch = event.epoch
            self.steps_done = event.epoch * self.steps_per_epoch
            self.epoch_x.append(float(event.epoch))
            self.train_loss.append(event.loss)
            self.val_loss.append(float("nan") if event.val_loss is None else event.val_loss)
            self.cumulative.append(event.cumulative_seconds)
        elif isinstance(event, ev.CompiledEvent):
            self.compiled.append(event)
        elif isinstance(event, ev.WarmupEvent):
            self.warmup = event
            self.steps_done += 1 + len(event.warm_step_seconds)
        elif isinstance(event, ev.BlockEvent):
            self.blocks.append(event)
            self.steps_done += event.steps
            if event.loss is not None:
                # On the loss plot's axis (epochs), so both phases read the same way.
                self.batch_x.append(self.steps_done / max(self.steps_per_epoch, 1))
                self.batch_loss.append(event.loss)
                prev = self.batch_smooth[-1] if self.batch_smooth else event.loss
                self.batch_smooth.append(prev + SMOOTHING * (event.loss - prev))
        elif isinstance(event, ev.FinishedEvent):
            self.summary = event.summary
            self.terminal = event
        elif isinstance(event, (ev.CancelledEvent, ev.ErrorEvent)):
            self.terminal = event

    @property
    def total_steps(self) -> int:
        return self.epochs_planned * self.steps_per_epoch

    @property
    def fraction(self) -> float:
        total = self.total_steps
        return min(1.0, self.steps_done / total) if total else 0.0

    def expected_total(self) -> float:
        """Where the cumulative time is heading: so far, plus the epochs left at the last
        pace (what a wall-time axis should already have room for)."""
        if not self.epochs:
            return 0.0
        left = max(self.epochs_planned - len(self.epochs), 0)
        return self.cumulative[-1] + left * self.epochs[-1].epoch_seconds

    def eta_seconds(self) -> float | None:
        """Seconds left at the pace since the first batch; None until there is a pace.

        The first batch is excluded from the pace: it carries tracing and XLA compiling.
        """
        if self.first_batch_t is None or self.total_steps == 0:
            return None
        done = self.steps_done - self.first_batch_step
        if done <= 0 or self.last_t <= self.first_batch_t:
            return None
        pace = (self.last_t - self.first_batch_t) / done
        return pace * (self.total_steps - self.steps_done)


def trace_of(events: Iterable[ev.Event], epochs_planned: int, run_id: str = "",
             repeat: int = 1) -> RunTrace:
    trace = RunTrace(run_id=run_id, repeat=repeat, epochs_planned=epochs_planned)
    for event in events:
        trace.add(event)
    return trace


@dataclass(frozen=True)
class SpeedupCurve:
    """What the speed-up plot draws for one arm: the speed-up (baseline ÷ arm step time) after
    each round, and its 95% band where the rounds so far give one."""

    x: list[float]
    speedup: list[float]
    band_x: list[float]
    upper: list[float]
    lower: list[float]
    # The rounds something else disturbed (1-based), drawn apart on the curve.
    disturbed_x: list[float] = field(default_factory=list)

    @classmethod
    def of(cls, estimates: Sequence[RatioEstimate],
           disturbed: Sequence[bool] = ()) -> SpeedupCurve:
        bounded = [(n, e) for n, e in enumerate(estimates, start=1) if e.low and e.high]
        return cls(
            x=[float(n) for n in range(1, len(estimates) + 1)],
            speedup=[1 / e.ratio for e in estimates],
            band_x=[float(n) for n, _ in bounded],
            upper=[1 / e.low for _, e in bounded],  # type: ignore[operator]
            lower=[1 / e.high for _, e in bounded],  # type: ignore[operator]
            disturbed_x=[float(n) for n, d in enumerate(disturbed, start=1) if d],
        )

    @property
    def disturbed_y(self) -> list[float]:
        return [self.speedup[int(x) - 1] for x in self.disturbed_x]

    def values(self) -> list[float]:
        return [*self.speedup, *self.upper, *self.lower]


class SpeedupTraces:
    """Every arm's running estimate against the baseline, from the measuring workers' blocks
    (`xlagui.core.analysis.summary.pair_up`, `xlagui.core.analysis.pairs.RunningEstimate`): live and
    replayed comparisons draw the same curves. Rounds already estimated are not estimated
    again, and a new round costs O(n log n) for n rounds so far (`RunningEstimate`)."""

    def __init__(self) -> None:
        self._done: dict[str, _ArmEstimates] = {}

    def clear(self) -> None:
        self._done.clear()

    def update(self, blocks: Mapping[str, Sequence[ev.Event]]) -> dict[str, SpeedupCurve]:
        """`blocks`: each side's events (its BlockEvents are what counts), `Role.BASELINE` among
        them. Returns a curve per other side that has paired rounds, in `blocks`' order."""
        from xlagui.core.analysis.summary import pair_up

        base = blocks.get(Role.BASELINE)
        out: dict[str, SpeedupCurve] = {}
        if not base:
            return out
        for variant, events in blocks.items():
            if variant == Role.BASELINE:
                continue
            paired = pair_up(base, events)
            if not paired:
                continue
            ratios = [p.ratio for p in paired]
            done = self._done.get(variant)
            if done is None or ratios[: len(done.ratios)] != done.ratios:
                done = self._done[variant] = _ArmEstimates()  # not a continuation: start over
            for p in paired[len(done.ratios):]:
                done.add(p.ratio, p.disturbed)
            out[variant] = SpeedupCurve.of(done.estimates, done.disturbed)
        return out


def summary_curve(summary: InterleavedSummary) -> SpeedupCurve | None:
    """The XLA side's curve from a summary's per-round ratios alone (a comparison replayed
    without its blocks), each round disturbed or not as recorded: the live curve's points."""
    if not summary.pair_ratios:
        return None
    done = _ArmEstimates()
    flags = summary.pair_disturbed or [False] * len(summary.pair_ratios)
    for ratio, disturbed in zip(summary.pair_ratios, flags, strict=True):
        done.add(ratio, disturbed)
    return SpeedupCurve.of(done.estimates, done.disturbed)


@dataclass
class _ArmEstimates:
    """One arm's rounds so far and the estimate after each."""

    ratios: list[float] = field(default_factory=list)
    estimates: list[RatioEstimate] = field(default_factory=list)
    running: RunningEstimate = field(default_factory=RunningEstimate)
    # The undisturbed rounds' own running estimate, kept from the first disturbed round on
    # (until then it is `running`'s): after each round the curve shows the one `busy.counted`
    # picks (the undisturbed rounds once there are enough, else every round).
    disturbed: list[bool] = field(default_factory=list)
    clean: RunningEstimate | None = None
    clean_estimate: RatioEstimate | None = None

    def add(self, ratio: float, disturbed: bool) -> None:
        if disturbed and self.clean is None:
            self.clean = RunningEstimate()
            for r, d in zip(self.ratios, self.disturbed, strict=True):
                if not d:
                    self.clean_estimate = self.clean.add(r)
        self.ratios.append(ratio)
        self.disturbed.append(disturbed)
        every = self.running.add(ratio)
        if self.clean is None:
            self.estimates.append(every)
            return
        if not disturbed:
            self.clean_estimate = self.clean.add(ratio)
        use_clean = self.clean_estimate is not None and clean_only(
            len(self.ratios) - sum(self.disturbed), len(self.ratios), MIN_PAIRS_FOR_INTERVAL)
        self.estimates.append(self.clean_estimate if use_clean and self.clean_estimate
                              else every)
