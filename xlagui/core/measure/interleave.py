"""The interleaved speed measurement: warm workers, alternating short blocks of steps.

Timing whole runs one after the other measures the machine's drift as much as XLA. Here every
arm (the baseline first) gets its own live worker process, built with the same spec, seed, model
and tf.data pipeline. Each worker is warmed up on its own (its first step, which pays for tracing
and compiling, is timed apart from a few steady ones), then the parent asks the workers in turn
for a block of K steps, in an order that changes every round (A B, B A, …; for more arms a
Williams design: every arm goes in every position, and after every other arm, equally often).
With several arms, a round leaves out an arm whose interval is already well inside the widest
one (`round_members`): the stopping rule waits for the widest, so its rounds are what buy time.
While one works the others wait idle on their stdin, and a worker answers only once its own
threads have gone quiet (`xlagui.core.worker.measure.wait_until_quiet`), so they never compete for
the CPU or the GPU.
After every round the per-round ratios give an estimate with an interval
(`xlagui.core.analysis.pairs`), and the measurement stops when that interval is narrow enough or
the time budget is spent.

The parent only orchestrates: blocks are timed inside the workers. Each worker is a
`xlagui.core.measure.worker_process.WorkerProcess`, the supervisor the training runs use too.
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from xlagui.core.analysis import pairs
from xlagui.core.analysis.summary import counted_pairs
from xlagui.core.measure.transports.base import Transport
from xlagui.core.measure.transports.local import LOCAL
from xlagui.core.measure.worker_process import Stopped, WorkerGone, WorkerProcess
from xlagui.core.protocol.events import (
    BlockEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    WarmupEvent,
    WorkerCommand,
)
from xlagui.core.protocol.identity import Command, EventType, StopReason
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState

# A block should last about a second: long enough that the per-block overhead (a pipe round
# trip, reading the loss) is noise, short enough that drift within a round stays small.
BLOCK_SECONDS = 1.0
MAX_BLOCK_STEPS = 256
WARM_STEPS = 3
# The interval needs 6 rounds to exist; 8 keeps a lucky early stop from ending the measurement.
MIN_PAIRS = 8
# After MIN_PAIRS rounds of every arm, a round takes an arm only while its interval is at least
# this share of the widest one's (see `round_members`).
ALLOCATION_SHARE = 0.8
# A slower arm that sat out rounds catches up with the baseline's steps (untimed, for the
# accuracy check) only when that takes at most this long (see `catch_up_steps`).
CATCH_UP_SECONDS = 15.0
DEFAULT_BUDGET_SECONDS = 120.0
DEFAULT_TARGET = 0.03
# Set-up and warm-up (starting the workers, their first steps) beyond this come out of the
# rounds' budget, so a slow start does not put the answer off: at 150 px on this project's
# 2-core VM they took 45-52 s, and the answer came 186 s after the command (BENCHMARKS.md,
# "Time to the answer": 120 s of rounds, 13-25 s before and after them). 35 s still let one
# answer of four come at 181 s; 25 s leaves room for that. Never below `MIN_BUDGET_SHARE`.
SETUP_ALLOWANCE_SECONDS = 25.0
MIN_BUDGET_SHARE = 0.5


class MeasuringWorker(Protocol):
    """What the loop needs of a worker: `WorkerProcess`, or a simulated one (the coverage
    simulation drives this very loop with synthetic block times and a fake clock)."""

    def start(self) -> None: ...
    def send(self, command: WorkerCommand) -> None: ...
    def wait_for(self, kind: str, state: TaskState) -> Event: ...
    def cancel(self) -> None: ...
    def stop(self) -> None: ...
    def close(self) -> None: ...


StartWorker = Callable[[RunSpec, Callable[[Event], None], "Sequence[str] | None"], MeasuringWorker]


def start_process(
    spec: RunSpec, relay: Callable[[Event], None], command: Sequence[str] | None, *,
    transport: Transport = LOCAL,
) -> MeasuringWorker:
    """A measuring worker's process, started through `transport` (the default `StartWorker`)."""
    return WorkerProcess(spec, relay, command=command, transport=transport)


@dataclass(frozen=True)
class MeasureSettings:
    budget_seconds: float = DEFAULT_BUDGET_SECONDS  # of measuring blocks, after the warm-up
    target: float = DEFAULT_TARGET  # stop when the interval's half-width is at most this
    block_seconds: float = BLOCK_SECONDS
    warm_steps: int = WARM_STEPS
    min_pairs: int = MIN_PAIRS
    # An arm joins a round while its half-width is at least this share of the widest's; None:
    # every arm in every round.
    allocation_share: float | None = ALLOCATION_SHARE
    # Set-up and warm-up beyond this come out of the budget (`rounds_budget`); None: never.
    setup_allowance: float | None = SETUP_ALLOWANCE_SECONDS


@dataclass
class MeasureOutcome:
    stopped_by: StopReason
    block_steps: int
    measuring_seconds: float
    error: ErrorEvent | None = None
    arm_block_steps: list[int] | None = None  # every worker's K, the baseline first
    warm_up_order: list[int] | None = None  # the workers' indices in the order they warmed up
    setup_seconds: float = 0.0  # from the workers' start to the end of the last warm-up
    budget_seconds: float = 0.0  # the rounds' budget, less a slow set-up's excess (0: none yet)


def rounds_budget(budget: float, setup_seconds: float, allowance: float | None) -> float:
    """The rounds' budget: `budget` less what set-up and warm-up took beyond `allowance`,
    never under `MIN_BUDGET_SHARE` of it (None: the whole budget, whatever set-up took).

    The budget bounds the time to the answer, not only the rounds: a user waiting for "quick"
    counts from the command. Fewer rounds give a wider interval, which the answer says."""
    if allowance is None:
        return budget
    return max(budget * MIN_BUDGET_SHARE, budget - max(0.0, setup_seconds - allowance))


def warm_up_order(workers: int, rng: random.Random | None = None) -> list[int]:
    """The order the workers warm up in, one at a time: a fresh random order every
    measurement.

    The worker warmed up last runs about 1% faster than the others for the whole measurement
    (A/A checks, BENCHMARKS.md: with the baseline always first, 23 of 30 twin ÷ baseline ratios
    came out below 1; warming the twin first flipped the lean, and it does not fade over the
    rounds). Why is not known. With the baseline always warmed first, every arm was flattered by
    it; a random order leaves no arm favoured on average. The order is recorded with the
    measurement (`MeasurementRecord.warm_up_order`)."""
    order = list(range(workers))
    (rng or random.SystemRandom()).shuffle(order)
    return order


def choose_block_steps(step_seconds: Sequence[float], block_seconds: float = BLOCK_SECONDS) -> int:
    """K such that the slowest arm's block lasts about `block_seconds` (at least one step)."""
    slowest = max(step_seconds)
    if slowest <= 0 or not math.isfinite(slowest):
        return 1
    return int(min(MAX_BLOCK_STEPS, max(1, round(block_seconds / slowest))))


@functools.cache
def williams_orders(arms: int) -> tuple[tuple[int, ...], ...]:
    """The rounds' orders of a Williams design: every arm takes every position equally often
    and follows every other arm equally often.

    A plain rotation (A B C, B C A, C A B) balances positions but not predecessors: C always
    follows B there, so whatever B leaves behind (its input pipeline still refilling, caches
    it evicted) always lands on C. The first row is 0, 1, n-1, 2, n-2, …; the others add 1, 2,
    … modulo n. For an odd n the mirrored rows are appended (2n rounds in all); for 2 arms it
    is A B, B A.
    """
    first = [0]
    low, high = 1, arms - 1
    for i in range(1, arms):
        if i % 2:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    rows = [tuple((x + shift) % arms for x in first) for shift in range(arms)]
    if arms % 2:
        rows += [tuple(reversed(row)) for row in rows]
    return tuple(rows)


def round_members(
    estimates: Sequence[pairs.RatioEstimate | None],
    *,
    target: float,
    min_pairs: int,
    share: float | None = ALLOCATION_SHARE,
) -> tuple[int, ...]:
    """Which workers take part in the next round: the baseline (0) and the arms (1, 2, …, in the
    order of `estimates`) whose interval still holds the measurement up.

    The stopping rule waits for the widest interval, and a round's time goes mostly to its
    slowest arm. At 150 px on 2 cores a jit block took 2.1 s, a bf16 one 0.45 s, the baseline's
    0.9 s, and jit's interval was half as wide as bf16's after the same rounds: two thirds of
    every round bought precision nobody was waiting for. So once every arm has `min_pairs`
    pairs, an arm joins a round only while its half-width is above `target` and at least
    `share` of the widest one's. An arm left out keeps its pairs and its interval and comes
    back as soon as the others have narrowed past it; every pair is still its arm's block and
    the baseline's block of the same round. With `share` None, or while any interval is still
    unknown, every arm takes part.
    """
    everyone = tuple(range(len(estimates) + 1))
    if share is None:
        return everyone
    widths: list[float] = []
    for est in estimates:
        if est is None or est.pairs < min_pairs or est.half_width is None:
            return everyone
        widths.append(est.half_width)
    widest = max(widths, default=0.0)
    chosen = tuple(
        i + 1 for i, w in enumerate(widths) if w == widest or (w > target and w >= share * widest)
    )
    return (0, *chosen)


def round_order(arms: int, seq: int) -> list[int]:
    """Who goes when in round `seq`: row `seq` of the Williams design (A B C, B C A, C A B,
    C B A, A C B, B A C for three arms; A B, B A for two), the baseline first in round 0."""
    rows = williams_orders(arms)
    return list(rows[seq % len(rows)])


def measure_interleaved(
    specs: Sequence[RunSpec],
    state: TaskState,
    settings: MeasureSettings | None = None,
    *,
    on_event: Callable[[RunSpec, Event], None] | None = None,
    on_round: Callable[[int, float, float], None] | None = None,
    command_for: Callable[[RunSpec], Sequence[str] | None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    start_worker: StartWorker = start_process,
    order: Callable[[int], list[int]] | None = None,
) -> MeasureOutcome:
    """Measure `specs[1:]` against `specs[0]` (the baseline) in interleaved rounds.

    Never raises for a worker failure or a stop: the outcome says how it ended, and every event
    that arrived (every finished block) has gone to `on_event`. `on_round(seq, elapsed)` is
    called after each complete round, so a watcher can recompute the estimate. `clock` reads
    the measuring time that the budget is spent against (a test passes a fake one),
    `start_worker` makes each worker (a `WorkerProcess` unless a simulation passes its own), and
    `order(n)` gives the warm-up order (`warm_up_order`: random). The rounds' budget is
    `settings.budget_seconds` less a slow set-up's excess (`rounds_budget`); `on_round` gets
    it as its third argument.
    """
    settings = settings or MeasureSettings()

    def relay_for(spec: RunSpec) -> Callable[[Event], None]:
        def relay(event: Event) -> None:
            if on_event is not None:
                on_event(spec, event)

        return relay

    warm_order = (order or warm_up_order)(len(specs))
    if sorted(warm_order) != list(range(len(specs))):
        raise ValueError(f"a warm-up order must name each worker once, got {warm_order}")
    if state.is_interruption_requested():  # stopped before it began: start nobody
        return _Progress().outcome(StopReason.STOPPED, warm_order)
    workers = [
        start_worker(spec, relay_for(spec), command_for(spec) if command_for else None)
        for spec in specs
    ]
    try:
        return _measure(workers, state, settings, warm_order, clock, on_round)
    finally:
        _close_together(workers)


def _measure(
    workers: Sequence[MeasuringWorker],
    state: TaskState,
    settings: MeasureSettings,
    warm_order: list[int],
    clock: Callable[[], float],
    on_round: Callable[[int, float, float], None] | None,
) -> MeasureOutcome:
    """`measure_interleaved` once its workers exist: start and warm them, the rounds, the
    catch-up; a stop or a worker's end stops every worker at once."""
    blocks: list[list[BlockEvent]] = [[] for _ in workers]
    run = _Progress()
    started = clock()
    try:
        warm = _start_and_warm_up(workers, state, settings.warm_steps, warm_order)
        run.setup = clock() - started
        run.budget = rounds_budget(settings.budget_seconds, run.setup, settings.setup_allowance)
        # One K for every arm, from the slowest: a round's blocks then sit close together in
        # time. Each arm its own K (every block about a second) was tried: at 150 px the bf16
        # interval came out at ±13–16% instead of ±5–7% (on a noisier machine, BENCHMARKS.md).
        run.block_steps = choose_block_steps(warm, settings.block_seconds)
        run.ks = [run.block_steps] * len(workers)
        reason, estimates = _rounds(workers, blocks, state, settings, run, clock, on_round)
        lags = catch_up_steps(blocks, estimates)
        for w, lag in zip(workers, lags, strict=True):
            w.send(WorkerCommand(Command.FINISH, steps=lag))
        for w in workers:
            w.wait_for(EventType.FINISHED, state)
        return run.outcome(reason, warm_order)
    except Stopped:
        _stop_together(workers)
        return run.outcome(StopReason.STOPPED, warm_order)
    except WorkerGone as gone:
        _stop_together(workers)
        error = gone.event if isinstance(gone.event, ErrorEvent) else None
        if error is None and isinstance(gone.event, FinishedEvent):
            # Words kept as they are in the measurement's record (`MeasurementRecord.error`).
            error = ErrorEvent(message="a worker finished before it was asked to")
        reason = StopReason.ERROR if error is not None else StopReason.STOPPED
        return run.outcome(reason, warm_order, error)


def _stop_together(workers: Sequence[MeasuringWorker]) -> None:
    """Cancel every worker at once, then wait for each: their grace periods (cancel, then
    terminate, then kill) run side by side, so a stop costs the slowest worker's ladder, not
    the sum of them all (three workers stopped one after another took 3 × 1 s and more)."""
    for w in workers:
        w.cancel()
    for w in workers:
        w.stop()


def _close_together(workers: Sequence[MeasuringWorker]) -> None:
    """Close every worker at the same time: a worker on an SSH host brings its run folder home
    as it closes (`Transport.finish`), one connection round trip or more each."""
    if len(workers) < 2:
        for w in workers:
            w.close()
        return
    with ThreadPoolExecutor(len(workers), thread_name_prefix="xlagui-close") as pool:
        for future in [pool.submit(w.close) for w in workers]:
            future.result()


@dataclass
class _Progress:
    """How far a measurement got: what its outcome reports, however it ends."""

    block_steps: int = 0
    ks: list[int] = field(default_factory=list)
    measuring: float = 0.0
    setup: float = 0.0
    budget: float = 0.0

    def outcome(self, reason: StopReason, order: list[int],
                error: ErrorEvent | None = None) -> MeasureOutcome:
        return MeasureOutcome(reason, self.block_steps, self.measuring, error, self.ks, order,
                              self.setup, self.budget)


def _rounds(
    workers: Sequence[MeasuringWorker],
    blocks: list[list[BlockEvent]],
    state: TaskState,
    settings: MeasureSettings,
    run: _Progress,
    clock: Callable[[], float],
    on_round: Callable[[int, float, float], None] | None,
) -> tuple[StopReason, list[pairs.RatioEstimate | None]]:
    """Rounds of blocks until the stopping rule says why to stop; that reason and each arm's
    last estimate. Each round takes the arms `round_members` picks, in the Williams order of
    their number (each set of members has its own run through the design)."""
    t0 = clock()
    seq = 0
    rounds_of: dict[tuple[int, ...], int] = {}
    estimates: list[pairs.RatioEstimate | None] = [None] * (len(workers) - 1)
    while True:
        members = round_members(
            estimates,
            target=settings.target,
            min_pairs=settings.min_pairs,
            share=settings.allocation_share,
        )
        k = rounds_of.get(members, 0)
        rounds_of[members] = k + 1
        for j in round_order(len(members), k):
            i = members[j]
            workers[i].send(WorkerCommand(Command.BLOCK, steps=run.ks[i], seq=seq))
            event = workers[i].wait_for(EventType.BLOCK, state)
            assert isinstance(event, BlockEvent)
            blocks[i].append(event)
        run.measuring = clock() - t0
        if on_round is not None:
            on_round(seq, run.measuring, run.budget)
        estimates = [_estimate(blocks[0], arm) for arm in blocks[1:]]
        reason = pairs.stop_reason(
            _widest(estimates),
            elapsed=run.measuring,
            budget=run.budget,
            target=settings.target,
            min_pairs=settings.min_pairs,
        )
        if reason is not None:
            return reason, estimates
        seq += 1


def _start_and_warm_up(
    workers: Sequence[MeasuringWorker], state: TaskState, warm_steps: int, order: Sequence[int]
) -> list[float]:
    """Start every worker, then warm each up in `order`; every worker's median steady step
    seconds, in the workers' order."""
    for w in workers:  # set-up (importing TensorFlow, decoding images) runs in parallel
        w.start()
    for w in workers:
        w.wait_for(EventType.STARTED, state)
    warm: dict[int, float] = {}
    for i in order:  # one at a time: a compile is timed with the machine to itself
        workers[i].send(WorkerCommand(Command.WARMUP, steps=warm_steps))
        event = workers[i].wait_for(EventType.WARMUP, state)
        assert isinstance(event, WarmupEvent)
        seconds = sorted(event.warm_step_seconds)
        warm[i] = float(seconds[len(seconds) // 2])
    return [warm[i] for i in range(len(workers))]


def catch_up_steps(
    blocks: Sequence[Sequence[BlockEvent]],
    estimates: Sequence[pairs.RatioEstimate | None],
    max_seconds: float = CATCH_UP_SECONDS,
) -> list[int]:
    """Untimed steps each worker trains before its validation check, so that an arm that sat
    out rounds (`round_members`) is compared after as many steps as the baseline.

    An arm faster than the baseline always catches up: its steps are cheap, and it is the one a
    recommendation may name, which needs an accuracy check on equal terms. A slower arm catches
    up only when that takes at most `max_seconds`; otherwise its accuracy is reported as not
    compared (`xlagui.core.analysis.accuracy.AccuracyKind.UNEQUAL_STEPS`) rather than paid for
    with a minute of its slow steps.
    """
    done = [sum(b.steps for b in arm) for arm in blocks]
    out = [0]
    for arm, est, steps in zip(blocks[1:], estimates, done[1:], strict=True):
        lag = max(0, done[0] - steps)
        per_step = sorted(b.seconds / b.steps for b in arm if b.steps) or [0.0]
        cost = lag * per_step[len(per_step) // 2]
        faster = est is not None and est.ratio < 1
        out.append(lag if faster or cost <= max_seconds else 0)
    return out


def _estimate(
    baseline: Sequence[BlockEvent], arm: Sequence[BlockEvent]
) -> pairs.RatioEstimate | None:
    # The rounds the recorded summary will count (`summary.counted_pairs`): measuring goes on
    # while the undisturbed ones are too few or too spread, within the budget.
    _, kept, _ = counted_pairs(baseline, arm)
    return pairs.estimate_ratio([p.ratio for p in kept]) if kept else None


def _widest(estimates: Sequence[pairs.RatioEstimate | None]) -> pairs.RatioEstimate | None:
    """The least certain arm's estimate so far: the stopping rule waits for the widest."""
    worst: pairs.RatioEstimate | None = None
    for est in estimates:
        if est is None or est.half_width is None:
            return est
        if worst is None or (worst.half_width is not None and est.half_width > worst.half_width):
            worst = est
    return worst
