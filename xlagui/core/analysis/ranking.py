"""Every arm against the baseline, and which one to recommend.

For each arm this puts together what the comparison measured: the interleaved ratio and its
interval (`xlagui.core.analysis.summary.summarize`), whether the arm engaged as asked (the XLA
evidence and the dtype policy read back by its workers), and whether it learns as well as the
baseline. Accuracy comes from the arm's training runs when the comparison had them, otherwise
from the measuring workers themselves: every arm trained the same number of steps on the same
batches during the measurement, then evaluated the validation set (the quick parity check).

The ranking rule: an arm is recommended only when it is valid, clearly faster (its interval,
adjusted for the number of arms compared, lies below 1), its loss stayed finite, and its
accuracy is not shown to be worse (`xlagui.core.analysis.accuracy`: a claim only where the evidence
covers the seed-to-seed spread of training too). Arms whose adjusted intervals overlap the
fastest one's are tied; the simplest of them is recommended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xlagui.core.analysis import accuracy
from xlagui.core.analysis.accuracy import AccuracyKind, AccuracySide, AccuracyVerdict, chance_level
from xlagui.core.analysis.pairs import (
    CONFIDENCE,
    ArmResult,
    ArmTiming,
    InstrumentCheck,
    PassedOver,
    Recommendation,
    RecommendationKind,
    estimate_ratio,
)
from xlagui.core.analysis.parity import Parity, ParityKind
from xlagui.core.analysis.summary import summarize
from xlagui.core.machine import cpu as machine_cpu
from xlagui.core.protocol.arms import Arm, HardwareFit, Precision, hardware_fit, parse_arm
from xlagui.core.protocol.events import BlockEvent, FinishedEvent, RunSummary, StartedEvent
from xlagui.core.protocol.identity import Role, RunStatus, WorkerMode
from xlagui.core.protocol.levers import TF_BACKEND
from xlagui.core.protocol.problems import Problem, policy_problems, xla_problem

if TYPE_CHECKING:
    from xlagui.core.protocol.record import RunEntry


def _summary(entry: RunEntry) -> RunSummary | None:
    fin = next((e for e in entry.events if isinstance(e, FinishedEvent)), None)
    return fin.summary if fin is not None else None


def _started(entry: RunEntry) -> StartedEvent | None:
    return next((e for e in entry.events if isinstance(e, StartedEvent)), None)


def engagement_problems(entry: RunEntry) -> list[Problem]:
    """Why this run's arm did not engage as asked (empty: it did, or it has not said yet)."""
    arm = entry.arm
    problems: list[Problem] = []
    started = _started(entry)
    if started is not None:
        read_back = {
            "policy": started.policy,
            "compute_dtype": started.compute_dtype,
            "loss_scale": started.loss_scale,
        }
        # Streams from before protocol 3 say nothing of the policy: float32 was all there was.
        if started.policy or arm.precision is not Precision.FLOAT32:
            problems += policy_problems(arm.precision, read_back, run_id=entry.run_id)
    summary = _summary(entry)
    # Only a run that reported its evidence is judged on it (a stream from before it did says
    # nothing); `stats` judges the XLA question's sides with the same check.
    if summary is not None and summary.xla_evidence is not None:
        problem = xla_problem(entry.run_id, arm.xla, summary.xla_evidence.compiled,
                              by=arm.backend if arm.backend != TF_BACKEND else "")
        if problem is not None:
            problems.append(problem)
    return problems


def _accuracy(
    variant: str, runs: Sequence[RunEntry], measure_runs: Sequence[RunEntry]
) -> AccuracySide:
    """One side's validation accuracies: its training runs' (one per seed) when the comparison
    trained, else its measuring worker's quick check after the measurement's steps."""
    trained = sorted(
        (r for r in runs if r.variant == variant and r.status == RunStatus.FINISHED),
        key=lambda r: r.repeat,
    )
    sums = [s for s in (_summary(r) for r in trained) if s is not None and s.epochs_done]
    values = tuple(s.final_val_accuracy for s in sums if s.final_val_accuracy is not None)
    if values:
        started = [s for s in (_started(r) for r in trained) if s is not None]
        return AccuracySide(
            values,
            min((s.val_count for s in started), default=0),
            epochs=max(s.epochs_done for s in sums),
            correct=tuple(s.val_correct for s in sums if s.val_correct),
        )
    for r in (r for r in measure_runs if r.variant == variant):
        s = _summary(r)
        first = _started(r)
        # A measuring worker evaluates the validation set when it finishes (protocol 3 on).
        if s is not None and s.mode == WorkerMode.MEASURE and s.final_val_accuracy is not None:
            return AccuracySide(
                (s.final_val_accuracy,), first.val_count if first else 0, steps=s.steps_done
            )
    return AccuracySide((), 0)


def arm_results(
    measure_runs: Sequence[RunEntry],
    runs: Sequence[RunEntry],
    *,
    counts: dict[str, Any] | None = None,
    class_count: int = 2,
    parity: Mapping[str, Parity] | None = None,
) -> list[ArmResult]:
    """One `ArmResult` per measured arm (every measuring worker after the baseline's);
    `parity`: the why's parity per arm variant, the accuracy evidence where nothing else is
    (`with_parity`)."""
    check = [r for r in measure_runs[1:] if r.role is Role.CHECK]
    measure_runs = [r for r in measure_runs if r not in check]
    if len(measure_runs) < 2:
        return []
    base = measure_runs[0]
    base_started = _started(base)
    device_kind = base_started.device_kind if base_started is not None else "CPU"
    # This machine's CPU flags, as the hardware note has always read them (`None`: no worker
    # said which device it ran on, so nothing is noted).
    flags = machine_cpu.cpu_flags() if base_started is not None else None
    against = _Baseline(base, _accuracy(base.variant, runs, measure_runs),
                        chance_level(counts, class_count), len(measure_runs) - 1,
                        _accuracy(base.variant, (), measure_runs))
    parity = parity or {}
    return [
        _arm_result(
            entry, against, runs, measure_runs,
            HardwareFit.NOTHING if flags is None else hardware_fit(entry.arm, device_kind, flags),
            parity.get(str(entry.variant)),
        )
        for entry in measure_runs[1:]
    ]


def with_parity(verdict: AccuracyVerdict, parity: Parity | None, arm: Arm) -> AccuracyVerdict:
    """`verdict`, or where it says nothing (not known), the why's parity steps: an arm in
    float32 (jit, autocluster: the baseline's function, compiled) whose first steps are the
    baseline's within rounding trains the baseline's model; steps that diverge beyond rounding
    are evidence against it. A precision lever's drift says nothing either way, and a verdict
    from training runs is never overridden."""
    if parity is None or verdict.ok is not None:
        return verdict
    if parity.kind is ParityKind.DIVERGES:
        kind = AccuracyKind.DIVERGING_NUMBERS
    elif parity.kind is ParityKind.SAME and arm.precision is Precision.FLOAT32:
        kind = AccuracyKind.SAME_NUMBERS
    else:
        return verdict
    return dataclasses.replace(verdict, kind=kind, steps=parity.steps, epochs=None)


@dataclass(frozen=True)
class _Baseline:
    """What every arm is held against: the baseline's worker and accuracy, the validation
    set's chance level, and how many arms share the adjusted intervals."""

    entry: RunEntry
    accuracy: AccuracySide
    chance: float
    arms: int
    quick: AccuracySide  # its measuring worker's quick check alone

    def held_against(self, arm: AccuracySide, quick: AccuracySide) -> tuple[AccuracySide,
                                                                        AccuracySide]:
        """Like against like: both sides' training runs where both trained, else both quick
        checks. An arm that was not trained (bf16 beside a trained XLA side) was once held
        against the baseline's training runs once they ended, and against its quick check
        before: one recommendation live, another reopened."""
        if arm.epochs is not None and self.accuracy.epochs is not None:
            return self.accuracy, arm
        return self.quick, quick


def _arm_result(entry: RunEntry, base: _Baseline, runs: Sequence[RunEntry],
                measure_runs: Sequence[RunEntry], hardware: HardwareFit,
                parity: Parity | None = None) -> ArmResult:
    """One arm against the baseline: its ratio, intervals, timings, problems and accuracy."""
    s = summarize((base.entry.xla_mode, base.entry.events), (entry.xla_mode, entry.events))
    nonfinite = sum(1 for e in entry.events if isinstance(e, BlockEvent) and e.loss is None)
    problems = _arm_problems(entry, runs)
    adjusted = (
        estimate_ratio(s.counted_ratios, 1 - (1 - CONFIDENCE) / base.arms) if s.counted_ratios
        else None
    )
    baseline_side, arm_side = base.held_against(
        _accuracy(entry.variant, runs, measure_runs), _accuracy(entry.variant, (), measure_runs))
    verdict = with_parity(
        accuracy.compare(baseline_side, arm_side, base.chance, nonfinite), parity, entry.arm)
    timing = s.xla
    return ArmResult(
        arm=entry.arm.name,
        variant=entry.variant,
        ratio=s.ratio,
        low=s.low,
        high=s.high,
        pairs=s.pairs,
        outliers=s.outliers,
        half_width=s.half_width,
        adjusted_low=adjusted.low if adjusted else None,
        adjusted_high=adjusted.high if adjusted else None,
        first_step_seconds=timing.first_step_seconds if timing else None,
        steady_step_seconds=timing.steady_step_seconds if timing else None,
        compile_seconds=timing.compile_seconds if timing else None,
        extra_compile_seconds=_extra_compile(s.baseline, timing),
        valid=not problems,
        problems=problems,
        hardware=hardware,
        val_accuracy=verdict.arm,
        baseline_val_accuracy=verdict.baseline,
        accuracy_ok=verdict.ok,
        accuracy=verdict,
        accuracy_kind=verdict.kind.value,
        nonfinite_losses=nonfinite,
        disturbed_pairs=s.disturbed_pairs,
        busy=s.machine is not None and s.machine.busy,
    )


def _extra_compile(base: ArmTiming | None, arm: ArmTiming | None) -> float | None:
    """The arm's compile and warm-up beyond the baseline's (XLA's compile cost, the same way:
    a baseline within its steady steps' noise counts as none); None when the arm's own is
    within its noise (a noisy arm is no evidence of a compile shorter than the baseline's)."""
    if base is None or arm is None or arm.compile_seconds is None:
        return None
    return (arm.compile_seconds or 0.0) - (base.compile_seconds or 0.0)


def _arm_problems(entry: RunEntry, runs: Sequence[RunEntry]) -> list[Problem]:
    """Why an arm did not engage as asked: its measuring worker's problems, then those of its
    finished training runs."""
    return engagement_problems(entry) + [
        p
        for r in runs
        if r.variant == entry.variant and r.status == RunStatus.FINISHED
        for p in engagement_problems(r)
    ]


def instrument_check(measure_runs: Sequence[RunEntry]) -> InstrumentCheck | None:
    """The A/A check (`--check`): the baseline against its identical twin, from their blocks
    paired round by round like any arm's; None without one or before its first pair."""
    twin = next((r for r in measure_runs[1:] if r.role is Role.CHECK), None)
    if twin is None or not measure_runs:
        return None
    base = measure_runs[0]
    s = summarize((base.xla_mode, base.events), (twin.xla_mode, twin.events))
    if s.ratio is None:
        return None
    acc = accuracy.compare(
        _accuracy(base.variant, (), measure_runs), _accuracy(twin.variant, (), measure_runs), 0.0
    )
    return InstrumentCheck(ratio=s.ratio, low=s.low, high=s.high, pairs=s.pairs,
                           val_accuracy=acc.arm, baseline_val_accuracy=acc.baseline,
                           accuracy_kind=acc.kind.value, disturbed_pairs=s.disturbed_pairs,
                           busy=s.machine is not None and s.machine.busy)


def recommendable(a: ArmResult) -> bool:
    """Valid, faster beyond the adjusted interval, a finite loss, and not shown to learn worse."""
    return (
        a.valid and a.clearly_faster_adjusted and a.accuracy_ok is not False
        and not a.nonfinite_losses
    )


def ranked(arms: Sequence[ArmResult]) -> list[ArmResult]:
    """Fastest first (arms without a ratio last)."""
    return sorted(arms, key=lambda a: (a.ratio is None, a.ratio or 0.0))


def simplicity(a: ArmResult) -> int:
    """How many levers an arm pulls ("jit+bf16": 2): of tied arms the simplest is recommended."""
    return len(parse_arm(a.arm).pulled)


def tied_with(best: ArmResult, others: Sequence[ArmResult]) -> list[ArmResult]:
    """The arms whose adjusted interval overlaps the best one's: the data cannot order them."""
    high = best.ranking_interval[1]
    if high is None:
        return []
    return [
        a for a in others
        if a is not best and (low := a.ranking_interval[0]) is not None and low <= high
    ]


def recommendation(arms: Sequence[ArmResult]) -> Recommendation | None:
    """The arm to recommend, or why none is (None: nothing measured yet).

    The winner is judged on intervals adjusted for the number of arms compared (Bonferroni:
    each at 1 - 0.05/m, so that all m hold together with 95% confidence): the fastest point
    estimate among several noisy arms is flattered by its own luck. Arms whose adjusted
    intervals overlap the fastest one's are tied, and the simplest of them is recommended.
    `xlagui.present.verdicts.recommendation_sentence` says it."""
    if not arms or all(a.ratio is None for a in arms):
        return None
    order = ranked(arms)
    candidates = [a for a in order if recommendable(a)]
    fastest = candidates[0] if candidates else None
    passed_over = tuple(
        PassedOver(arm=a.arm, speedup=1 / a.ratio, valid=a.valid,  # type: ignore[operator]
                   problems=tuple(a.problems), accuracy=a.accuracy)
        for a in order
        if a.clearly_faster_adjusted and not recommendable(a)
        and (fastest is None or a.ratio < fastest.ratio)  # type: ignore[operator]
    )
    if fastest is None:
        kind = (RecommendationKind.NONE_RECOMMENDABLE if passed_over
                else RecommendationKind.NONE_FASTER)
        return Recommendation(kind, passed_over=passed_over)
    tied = [fastest, *tied_with(fastest, candidates)]
    best = min(tied, key=simplicity)  # stable: the fastest of the simplest
    assert best.ratio is not None
    low, high = best.ranking_interval
    assert low is not None and high is not None
    if len(tied) > 1:
        kind = RecommendationKind.TIED
    elif best.accuracy_ok:
        kind = RecommendationKind.RECOMMENDED
    else:
        kind = RecommendationKind.ACCURACY_UNKNOWN
    return Recommendation(
        kind,
        arm=best.arm,
        speedup=1 / best.ratio,
        low=1 / high,
        high=1 / low,
        adjusted_for=len(arms) if len(arms) > 1 and best.adjusted_high is not None else 0,
        tied=tuple(a.arm for a in tied) if len(tied) > 1 else (),
        simpler=len(tied) > 1 and simplicity(best) < max(simplicity(a) for a in tied),
        accuracy=best.accuracy,
        passed_over=passed_over,
    )
