"""Every arm against the baseline, and which one to recommend.

For each arm this puts together what the comparison measured: the interleaved ratio and its
interval (`xlagui.core.interleave.summarize`), whether the arm engaged as asked (the XLA
evidence and the dtype policy read back by its workers), and whether it learns as well as the
baseline. Accuracy comes from the arm's training runs when the comparison had them, otherwise
from the measuring workers themselves: every arm trained the same number of steps on the same
batches during the measurement, then evaluated the validation set (the quick parity check).

The ranking rule: an arm is recommended only when it is valid, clearly faster (its interval lies
below 1), its loss stayed finite, and its accuracy is not flagged as worse. While both sides are
still at chance level an accuracy difference means nothing, and the arm is said to be "not
trained enough to compare" instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xlagui.core.arms import Arm, Precision, hardware_note, policy_problems
from xlagui.core.config import XlaMode
from xlagui.core.events import BlockEvent, FinishedEvent, RunSummary, StartedEvent
from xlagui.core.pairs import ArmResult

if TYPE_CHECKING:
    from xlagui.core.report import RunEntry


def _summary(entry: RunEntry) -> RunSummary | None:
    fin = next((e for e in entry.events if isinstance(e, FinishedEvent)), None)
    return fin.summary if fin is not None else None


def _started(entry: RunEntry) -> StartedEvent | None:
    return next((e for e in entry.events if isinstance(e, StartedEvent)), None)


def engagement_problems(entry: RunEntry) -> list[str]:
    """Why this run's arm did not engage as asked (empty: it did, or it has not said yet)."""
    arm = entry.arm
    problems: list[str] = []
    started = _started(entry)
    if started is not None:
        read_back = {
            "policy": started.policy,
            "compute_dtype": started.compute_dtype,
            "loss_scale": started.loss_scale,
        }
        # Streams from before protocol 3 say nothing of the policy: float32 was all there was.
        if started.policy or arm.precision is not Precision.FLOAT32:
            problems += policy_problems(arm, read_back)
    summary = _summary(entry)
    if summary is not None and summary.xla_evidence is not None:
        compiled = summary.xla_evidence.compiled
        if arm.xla is not XlaMode.OFF and not compiled:
            problems.append(f"asked for XLA ({arm.xla.value}) but XLA compiled nothing")
        if arm.xla is XlaMode.OFF and compiled:
            problems.append("XLA compiled although this arm has it off")
    return [f"{entry.run_id}: {p}" for p in problems]


@dataclass(frozen=True)
class Accuracy:
    value: float | None
    count: int  # validation images
    source: str
    steps: int | None = None  # training steps behind it, for the measuring workers' check


def _mean(values: Sequence[float | None]) -> float | None:
    vs = [v for v in values if v is not None]
    return sum(vs) / len(vs) if vs else None


def _accuracy(variant: str, runs: Sequence[RunEntry], measure_runs: Sequence[RunEntry]) -> Accuracy:
    trained = [r for r in runs if r.variant == variant and r.status == "finished"]
    sums = [s for s in (_summary(r) for r in trained) if s is not None and s.epochs_done]
    if sums:
        started = [s for s in (_started(r) for r in trained) if s is not None]
        epochs = max(s.epochs_done for s in sums)
        return Accuracy(
            _mean([s.final_val_accuracy for s in sums]),
            min((s.val_count for s in started), default=0),
            f"training runs ({epochs} epoch{'s' if epochs != 1 else ''})",
        )
    measured = [r for r in measure_runs if r.variant == variant]
    for r in measured:
        s = _summary(r)
        first = _started(r)
        # A measuring worker evaluates the validation set when it finishes (protocol 3 on).
        if s is not None and s.mode == "measure":
            return Accuracy(
                s.final_val_accuracy,
                first.val_count if first else 0,
                f"after the {s.steps_done} steps of the measurement",
                s.steps_done,
            )
    return Accuracy(None, 0, "")


def chance_level(counts: dict[str, Any] | None, class_count: int) -> float:
    """The accuracy of always answering the validation set's commonest class."""
    val = (counts or {}).get("test") or {}
    total = sum(int(v) for v in val.values()) if val else 0
    if total:
        return max(int(v) for v in val.values()) / total
    return 1 / max(2, class_count)


def at_chance(accuracy: float, n: int, chance: float) -> bool:
    """Not distinguishable from always guessing the commonest class (two standard errors)."""
    return accuracy <= chance + 2 * math.sqrt(chance * (1 - chance) / max(1, n))


def accuracy_parity(
    base: Accuracy, arm: Accuracy, chance: float, nonfinite: int = 0
) -> tuple[bool | None, str]:
    """(accuracy_ok, in words). False: learns worse beyond the validation set's noise (or its
    loss went NaN); None: not known (no accuracy, or both still at chance level)."""
    if nonfinite:
        return False, f"its loss was not finite in {nonfinite} measured block(s)"
    if base.value is None or arm.value is None:
        return None, "no validation accuracy to compare"
    if base.steps is not None and arm.steps is not None and base.steps != arm.steps:
        # A slower arm that sat out rounds once its interval was narrow, and whose catching up
        # would have cost more than it is worth (`xlagui.core.interleave.catch_up_steps`).
        return None, (
            f"not compared: {arm.value:.0%} after {arm.steps} steps, the baseline "
            f"{base.value:.0%} after {base.steps} (this slower arm sat out rounds once its "
            "speed was settled)"
        )
    b, a = base.value, arm.value
    n = max(1, min(base.count or 1, arm.count or 1))
    if at_chance(b, n, chance):
        # Until the baseline itself has learned something there is nothing to learn as well as:
        # early in training one side leaving chance before the other is luck, not the arm.
        both = " both" if at_chance(a, n, chance) else " the baseline"
        return None, (
            f"not trained enough to compare: {a:.0%} vs {b:.0%} baseline on {n} images,"
            f"{both} at chance level ({chance:.0%})"
        )
    # Sampling noise of the difference of two accuracies on n images: a 95% interval by
    # Agresti–Caffo (one success and one failure added to each side), which unlike the plain
    # normal interval does not collapse when an accuracy nears 100% or 0%.
    pa, pb = (a * n + 1) / (n + 2), (b * n + 1) / (n + 2)
    noise = max(1.96 * math.sqrt((pa * (1 - pa) + pb * (1 - pb)) / (n + 2)), 1.0 / n)
    if b - a > noise:
        return False, (
            f"learns worse: {a:.1%} vs {b:.1%} baseline, beyond the ±{noise:.1%} noise of "
            f"{n} images"
        )
    if a - b > noise:
        return True, (
            f"{a:.1%} vs {b:.1%} baseline: better, beyond the ±{noise:.1%} noise of {n} images"
        )
    return True, f"{a:.1%} vs {b:.1%} baseline, within the ±{noise:.1%} noise of {n} images"


def arm_results(
    measure_runs: Sequence[RunEntry],
    runs: Sequence[RunEntry],
    *,
    stopped_by: str = "",
    counts: dict[str, Any] | None = None,
    class_count: int = 2,
) -> list[ArmResult]:
    """One `ArmResult` per measured arm (every measuring worker after the baseline's)."""
    from xlagui.core.interleave import summarize

    if len(measure_runs) < 2:
        return []
    base = measure_runs[0]
    base_started = _started(base)
    device_kind = base_started.device_kind if base_started is not None else "CPU"
    base_acc = _accuracy(base.variant, runs, measure_runs)
    chance = chance_level(counts, class_count)
    out = []
    for entry in measure_runs[1:]:
        arm: Arm = entry.arm
        s = summarize((base.xla_mode, base.events), (entry.xla_mode, entry.events))
        nonfinite = sum(1 for e in entry.events if isinstance(e, BlockEvent) and e.loss is None)
        problems = engagement_problems(entry) + [
            p
            for r in runs
            if r.variant == entry.variant and r.status == "finished"
            for p in engagement_problems(r)
        ]
        acc = _accuracy(entry.variant, runs, measure_runs)
        ok, text = accuracy_parity(base_acc, acc, chance, nonfinite)
        if ok is False and not nonfinite and acc.steps is not None:
            # A few dozen steps into training, arms leave chance at different moments.
            text += f" ({acc.source}; train longer, without --quick, to see if it catches up)"
        timing = s.xla
        out.append(
            ArmResult(
                arm=arm.name,
                variant=entry.variant,
                label=arm.label,
                ratio=s.ratio,
                low=s.low,
                high=s.high,
                pairs=s.pairs,
                outliers=s.outliers,
                half_width=s.half_width,
                first_step_seconds=timing.first_step_seconds if timing else None,
                steady_step_seconds=timing.steady_step_seconds if timing else None,
                compile_seconds=timing.compile_seconds if timing else None,
                valid=not problems,
                problems=problems,
                note=hardware_note(arm, device_kind) if base_started is not None else "",
                val_accuracy=acc.value,
                baseline_val_accuracy=base_acc.value,
                accuracy_ok=ok,
                accuracy_text=text,
                accuracy_from=acc.source,
                nonfinite_losses=nonfinite,
            )
        )
    return out


def recommendable(a: ArmResult) -> bool:
    return a.valid and a.clearly_faster and a.accuracy_ok is not False and not a.nonfinite_losses


def ranked(arms: Sequence[ArmResult]) -> list[ArmResult]:
    """Fastest first (arms without a ratio last)."""
    return sorted(arms, key=lambda a: (a.ratio is None, a.ratio or 0.0))


def recommendation(arms: Sequence[ArmResult]) -> tuple[str | None, str]:
    """(the arm to recommend or None, the sentence that says so)."""
    if not arms or all(a.ratio is None for a in arms):
        return None, ""
    best = next((a for a in ranked(arms) if recommendable(a)), None)
    passed_over = [
        a
        for a in ranked(arms)
        if a.clearly_faster and not recommendable(a) and (best is None or a.ratio < best.ratio)  # type: ignore[operator]
    ]
    text = ""
    if best is not None:
        assert best.ratio is not None and best.high is not None and best.low is not None
        ci = f"95% CI {1 / best.high:.2f}–{1 / best.low:.2f}×"
        if best.accuracy_ok:
            text = (
                f"On this machine, the fastest configuration that learns as well is "
                f"{best.arm} ({best.label}), {1 / best.ratio:.2f}× faster per step ({ci})."
            )
        else:
            text = (
                f"On this machine, the fastest configuration is {best.arm} ({best.label}), "
                f"{1 / best.ratio:.2f}× faster per step ({ci}); whether it learns as well is "
                f"not known: {best.accuracy_text}."
            )
    elif passed_over:
        text = "On this machine, no configuration that was clearly faster can be recommended."
    else:
        text = "On this machine, no configuration measured was clearly faster than the baseline."
    for a in passed_over:
        why = "; ".join(a.problems) if not a.valid else a.accuracy_text
        text += f" {a.arm} was faster ({1 / a.ratio:.2f}×) but is not recommended: {why}."  # type: ignore[operator]
    return (best.arm if best is not None else None), text
