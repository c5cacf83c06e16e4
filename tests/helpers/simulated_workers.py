"""Simulated measuring workers for the coverage study of the real stopping loop.

`simulate(scenario, rng)` runs `xlagui.core.measure.interleave.measure_interleaved` itself (its
round allocation, Williams orders, block sizing, estimates and stopping rule) against in-process
workers whose block times are drawn from a known truth, on a fake clock: each block advances
the clock by its own seconds, so the budget is spent as on a real machine. The final interval
of each arm either covers its true ratio or not.

The noise, from what was measured on this project's 2-core machine (BENCHMARKS.md):
- `sd`: the standard deviation of one pair's log ratio (0.15–0.30 measured: jit about 0.15,
  bf16 0.19–0.30); each block of a pair carries sd/√2;
- `tails`: Student's t with 3 degrees of freedom instead of a normal (scaled to the same sd);
- `skew`: a right-skewed block time (a log-normal shock, centred), as a busy machine makes;
- `drift`: a slow common swing of the machine's speed (±`drift`, a 90 s period, plus a random
  walk), which hits every worker alike;
- `stall`: seconds added to a block now and then (one in 20, at random, each worker on its
  own), like the refill stalls measured here: a fixed cost that weighs most on the fastest
  arm. The truth is the stall-free ratio of step times, what "steady step" claims.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xlagui.core.analysis import pairs, ranking
from xlagui.core.measure.interleave import (
    MeasureSettings,
    MeasuringWorker,
    _estimate,
    measure_interleaved,
)
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    BlockEvent,
    Event,
    FinishedEvent,
    RunSummary,
    StartedEvent,
    WarmupEvent,
    WorkerCommand,
)
from xlagui.core.protocol.identity import RunStatus
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState

BASE_STEP = 0.8  # seconds, the demo CNN's baseline step at 150 px here
STALL_SHARE = 1 / 20


@dataclass(frozen=True)
class Scenario:
    name: str
    ratios: tuple[float, ...]  # each arm's true step time ÷ the baseline's
    sd: float = 0.2
    tails: bool = False
    skew: bool = False
    drift: float = 0.0
    stall: float = 0.0


@dataclass
class Clock:
    t: float = 0.0

    def __call__(self) -> float:
        return self.t


class Machine:
    """The shared machine: its speed drifts with time, the same for every worker."""

    def __init__(self, scenario: Scenario, rng: random.Random, clock: Clock) -> None:
        self.s, self.rng, self.clock = scenario, rng, clock
        self.walk = 0.0

    def speed(self) -> float:
        if not self.s.drift:
            return 1.0
        self.walk += self.rng.gauss(0.0, self.s.drift / 20)
        self.walk *= 0.98  # mean-reverting: a machine does not drift away for ever
        swing = self.s.drift * math.sin(2 * math.pi * self.clock.t / 90.0)
        return math.exp(swing + self.walk)

    def shock(self) -> float:
        """One block's log noise: mean 0, sd `sd`/√2."""
        sd = self.s.sd / math.sqrt(2)
        if self.s.skew:
            z = self.rng.lognormvariate(0.0, 0.8)
            mean, var = math.exp(0.32), (math.exp(0.64) - 1) * math.exp(0.64)
            return sd * (z - mean) / math.sqrt(var)
        if self.s.tails:
            t3 = self.rng.gauss(0, 1) / math.sqrt(self.rng.gammavariate(1.5, 2.0) / 3)
            return sd * t3 / math.sqrt(3)
        return self.rng.gauss(0.0, sd)


class SimulatedWorker:
    """A measuring worker with a true step time: answers warm-up, block and finish at once."""

    def __init__(self, step: float, machine: Machine, relay: Callable[[Event], None]) -> None:
        self.step, self.machine, self.relay = step, machine, relay
        self.pending: list[Event] = []
        self.blocks = 0

    def start(self) -> None:
        self.pending.append(StartedEvent(t=self.machine.clock.t, mode="measure"))

    def send(self, command: WorkerCommand) -> None:
        clock = self.machine.clock
        if command.cmd == "warmup":
            self.pending.append(WarmupEvent(t=clock.t, first_step_seconds=self.step * 3,
                                            warm_step_seconds=[self.step] * command.steps))
        elif command.cmd == "block":
            self.blocks += 1
            seconds = command.steps * self.step * self.machine.speed()
            seconds *= math.exp(self.machine.shock())
            if self.machine.s.stall and self.machine.rng.random() < STALL_SHARE:
                seconds += self.machine.s.stall
            clock.t += seconds
            self.pending.append(BlockEvent(t=clock.t, seq=command.seq, steps=command.steps,
                                           seconds=seconds, loss=0.5))
        elif command.cmd == "finish":
            self.pending.append(FinishedEvent(t=clock.t, summary=RunSummary(mode="measure")))

    def wait_for(self, kind: str, state: TaskState) -> Event:
        event = self.pending.pop(0)
        self.relay(event)
        assert event.type == kind, (event.type, kind)
        return event

    def cancel(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


def _specs(arms: int, check: bool = False) -> list[RunSpec]:
    """The baseline and `arms` arms; with `check`, the last arm is the A/A check's twin."""
    config = RunConfig(batch_size=4, image_size=48, quick=True)

    def variant(i: int) -> str:
        if i == 0:
            return "baseline"
        return "check" if check and i == arms else f"arm{i}"

    return [
        RunSpec(run_id=f"m{i + 1}", variant=variant(i),
                xla_mode=XlaMode.OFF, config=config, class_names=["a", "b"], train=[], val=[],
                run_dir=Path("/nonexistent"), mode="measure")
        for i in range(arms + 1)
    ]


@dataclass(frozen=True)
class SimResult:
    covered: tuple[bool, ...]  # per arm: the final interval holds the true ratio
    adjusted: tuple[bool, ...]  # the same for the Bonferroni-adjusted interval (1 - 0.05/m)
    half_widths: tuple[float | None, ...]
    pairs: tuple[int, ...]
    stopped_by: str
    seconds: float
    # With an A/A twin (`simulate(check=True)`): whether the production check
    # (`ranking.instrument_check`) covered 1 (None: no twin, or no pair).
    check_covers_one: bool | None = None


def simulate(
    scenario: Scenario, rng: random.Random, settings: MeasureSettings | None = None,
    check: bool = False,
) -> SimResult:
    """One measurement of `scenario` through the real loop; which arms' intervals cover. With
    `check`, the scenario's last arm is the A/A check's twin (give it the ratio 1.0, or
    another for a twin that differs)."""
    clock = Clock()
    machine = Machine(scenario, rng, clock)
    steps = [BASE_STEP, *(BASE_STEP * r for r in scenario.ratios)]
    by_spec: dict[str, float] = {}
    blocks: dict[str, list[BlockEvent]] = {}

    def start(spec: RunSpec, relay: Callable[[Event], None],
              command: Sequence[str] | None) -> MeasuringWorker:
        return SimulatedWorker(by_spec[spec.run_id], machine, relay)

    def record(spec: RunSpec, event: Event) -> None:
        if isinstance(event, BlockEvent):
            blocks.setdefault(spec.run_id, []).append(event)

    specs = _specs(len(scenario.ratios), check)
    by_spec.update({s.run_id: step for s, step in zip(specs, steps, strict=True)})
    budget = 120.0 + 60.0 * (len(scenario.ratios) - 1)
    chosen = settings or MeasureSettings(budget_seconds=budget)
    outcome = measure_interleaved(specs, TaskState(), chosen, on_event=record, clock=clock,
                                  start_worker=start)
    base = blocks[specs[0].run_id]
    # The adjusted intervals come from the production ranking (`ranking.arm_results`), from
    # the same blocks as its report would hold them: the level it uses is what is tested.
    entries = [RunEntry(spec.run_id, spec.variant, 1, XlaMode.OFF, RunStatus.FINISHED,
                        list(blocks.get(spec.run_id, []))) for spec in specs]
    ranked = ranking.arm_results(entries, [])
    twin = ranking.instrument_check(entries) if check else None
    covered, adjusted, widths, counts = [], [], [], []
    arm_specs = [s for s in specs[1:] if s.variant != "check"]
    for spec, truth, result in zip(arm_specs, scenario.ratios, ranked, strict=False):
        est = _estimate(base, blocks.get(spec.run_id, []))
        covered.append(_covers(est, truth))
        adjusted.append(result.adjusted_low is not None and result.adjusted_high is not None
                        and result.adjusted_low <= truth <= result.adjusted_high)
        widths.append(est.half_width if est is not None else None)
        counts.append(est.pairs if est is not None else 0)
    return SimResult(tuple(covered), tuple(adjusted), tuple(widths), tuple(counts),
                     outcome.stopped_by, outcome.measuring_seconds,
                     twin.covers_one if twin is not None else None)


def _covers(est: pairs.RatioEstimate | None, truth: float) -> bool:
    return bool(est is not None and est.low is not None and est.high is not None
                and est.low <= truth <= est.high)


# The scenarios of the study: 1, 2 and 3 arms, each with every noise source of its row.
SCENARIOS = (
    Scenario("1 arm, quiet (jit-like), drift", (2.2,), sd=0.10, drift=0.08),
    Scenario("1 arm, normal noise", (2.2,), sd=0.15),
    Scenario("1 arm, heavy tails, drift", (2.2,), sd=0.2, tails=True, drift=0.08),
    Scenario("1 arm, skew, stalls", (0.55,), sd=0.25, skew=True, stall=0.4),
    Scenario("2 arms, heavy tails, drift, stalls", (2.2, 0.5), sd=0.25, tails=True, drift=0.08,
             stall=0.4),
    Scenario("3 arms, skew, drift, stalls", (2.2, 0.5, 1.1), sd=0.3, skew=True, drift=0.08,
             stall=0.4),
    Scenario("3 arms, heavy tails", (0.7, 0.5, 1.0), sd=0.3, tails=True),
    Scenario("2 arms, quiet, skew, stalls", (2.2, 0.5), sd=0.12, skew=True, stall=0.4),
)


def coverage(scenario: Scenario, runs: int, seed: int = 0,
             settings: MeasureSettings | None = None) -> dict[str, float]:
    """Over `runs` simulated measurements: each arm's coverage, all arms at once, the median
    pairs, half-width and measuring seconds."""
    rng = random.Random(seed)
    results = [simulate(scenario, rng, settings) for _ in range(runs)]
    per_arm = [sum(r.covered[i] for r in results) / runs for i in range(len(scenario.ratios))]
    widths = sorted(w for r in results for w in r.half_widths if w is not None)
    return {
        "min_arm_coverage": min(per_arm),
        "all_arms": sum(all(r.covered) for r in results) / runs,
        "all_arms_adjusted": sum(all(r.adjusted) for r in results) / runs,
        # Intervals that missed the truth, over every arm of every run: unadjusted (95%) and
        # adjusted (the production ranking's 1 - 0.05/m).
        "misses": sum(not c for r in results for c in r.covered),
        "adjusted_misses": sum(not c for r in results for c in r.adjusted),
        "median_pairs": sorted(max(r.pairs) for r in results)[runs // 2],
        "median_half_width": widths[len(widths) // 2] if widths else float("nan"),
        "median_seconds": sorted(r.seconds for r in results)[runs // 2],
        "target_share": sum(r.stopped_by == "target" for r in results) / runs,
    }
