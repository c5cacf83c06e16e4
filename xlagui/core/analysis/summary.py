"""An interleaved measurement summed up from its event streams alone: the rounds both sides
completed, paired (`pair_up`), each arm's timing (`arm_timing`), and one arm against the
baseline (`summarize`). Pure statistics, no processes: the live measurement (`measure/`) and a
replayed recording (`results/`) both call it, and get exactly the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xlagui.core.analysis import pairs
from xlagui.core.analysis.busy import counted as counted_rounds
from xlagui.core.analysis.busy import machine_load
from xlagui.core.protocol.events import BlockEvent, CompiledEvent, Event, WarmupEvent
from xlagui.core.protocol.identity import Role


def pair_up(baseline: Sequence[Event], arm: Sequence[Event]) -> list[pairs.Pair]:
    """The rounds both sides completed, as per-step times, each disturbed when either block
    was (`BlockEvent.disturbed`)."""
    base = {e.seq: e for e in baseline if isinstance(e, BlockEvent) and e.steps > 0}
    out = []
    for e in arm:
        if isinstance(e, BlockEvent) and e.steps > 0 and e.seq in base:
            b = base[e.seq]
            if b.seconds > 0 and e.seconds > 0:
                out.append(pairs.Pair(e.seq, b.seconds / b.steps, e.seconds / e.steps,
                                      disturbed=b.disturbed or e.disturbed))
    return out


def counted_pairs(baseline: Sequence[Event], arm: Sequence[Event]
                  ) -> tuple[list[pairs.Pair], list[pairs.Pair], bool]:
    """Every round both sides completed, the rounds an estimate counts (`busy.counted`: the
    undisturbed ones while there are enough), and whether it had to count disturbed ones."""
    matched = pair_up(baseline, arm)
    counted, busy = counted_rounds(matched, pairs.MIN_PAIRS_FOR_INTERVAL)
    return matched, counted, busy


def arm_timing(arm: str, xla_mode: str, events: Sequence[Event]) -> pairs.ArmTiming:
    timing = pairs.ArmTiming(arm=arm, xla_mode=xla_mode)
    warm = next((e for e in events if isinstance(e, WarmupEvent)), None)
    per_step = [e.seconds / e.steps for e in events if isinstance(e, BlockEvent) and e.steps]
    timing.blocks = len(per_step)
    if per_step:
        timing.steady_step_seconds = sorted(per_step)[len(per_step) // 2]
    if warm is not None:
        timing.first_step_seconds = warm.first_step_seconds
    timing.compile_seconds = run_compile_seconds(events)
    return timing


def run_compile_seconds(events: Sequence[Event]) -> float | None:
    """What compiling cost one worker, the one figure every screen shows as its "compile +
    warm-up" and subtracts for a compile cost: every compilation it reported, summed (the
    training step's first call, the evaluation's, each recompile: `compiled` events); a stream
    from before those events, its first step beyond a steady one. None: not measurable."""
    compiled = [e.seconds for e in events if isinstance(e, CompiledEvent)]
    if compiled:
        return sum(compiled)
    warm = next((e for e in events if isinstance(e, WarmupEvent)), None)
    if warm is None:
        return None
    return pairs.compile_seconds(warm.first_step_seconds, warm.warm_step_seconds)


def summarize(
    baseline: tuple[str, Sequence[Event]],
    arm: tuple[str, Sequence[Event]],
    *,
    stopped_by: str = "",
    target: float | None = None,
    budget_seconds: float | None = None,
    measuring_seconds: float | None = None,
    rounds_budget_seconds: float | None = None,
    setup_seconds: float | None = None,
) -> pairs.InterleavedSummary:
    """The interleaved summary of one arm against the baseline, from the two event streams
    alone (a replayed recording gives exactly the live figures)."""
    matched, kept, busy = counted_pairs(baseline[1], arm[1])
    ratios = [p.ratio for p in matched]
    kept_ids = {id(p) for p in kept}
    s = pairs.InterleavedSummary(
        stopped_by=stopped_by,
        target=target,
        budget_seconds=budget_seconds,
        measuring_seconds=measuring_seconds,
        rounds_budget_seconds=rounds_budget_seconds,
        setup_seconds=setup_seconds,
        baseline=arm_timing(Role.BASELINE, baseline[0], baseline[1]),
        xla=arm_timing(Role.XLA, arm[0], arm[1]),
        pair_ratios=ratios,
        outlier_flags=pairs.outlier_flags([math.log(r) for r in ratios]),
        pair_disturbed=[p.disturbed for p in matched],
        pair_counted=[id(p) in kept_ids for p in matched],
        disturbed_pairs=sum(p.disturbed for p in matched),
        machine=machine_load([baseline[1], arm[1]], busy),
    )
    steps = {e.steps for e in arm[1] if isinstance(e, BlockEvent)}
    s.block_steps = max(steps) if steps else 0
    base_steps = {e.steps for e in baseline[1] if isinstance(e, BlockEvent)}
    s.baseline_block_steps = max(base_steps) if base_steps else 0
    if kept:
        est = pairs.estimate_ratio([p.ratio for p in kept])
        s.ratio, s.low, s.high = est.ratio, est.low, est.high
        s.pairs, s.outliers, s.half_width = est.pairs, est.outliers, est.half_width
    return s
