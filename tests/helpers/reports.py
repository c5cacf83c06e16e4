"""Comparisons built from known events, without TensorFlow: speed only or with training runs,
the XLA side alone or with other arms, an arm whose worker failed, short or long measurements.

Every block of an arm takes `step` seconds per step, times a seeded draw from 1 ± `jitter`
(none unless asked), so the ratios and their intervals are known or at least repeatable.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from tests.helpers.streams import run_events
from xlagui.core.protocol.arms import Arm, Precision, parse_arm
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    BlockEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    RunSummary,
    StartedEvent,
    WarmupEvent,
)
from xlagui.core.protocol.interference import Interference, ProcessShare
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport, MeasurementRecord
from xlagui.core.xla.evidence import XlaEvidence

DATASET = {
    "name": "tiny",
    "root": "/data/tiny",
    "layout": "split",
    "class_names": ["african", "asian"],
    "counts": {"train": {"african": 12, "asian": 12}, "test": {"african": 50, "asian": 50}},
}
STEPS = 10  # per block
# The process a disturbed block names (`measure_entry`'s `others`).
BUSY_SPINNER = ProcessShare(name="spinner", pid=4242, share=0.45)


def arm_of(variant: str) -> Arm:
    if variant == "baseline":
        return Arm()
    if variant == "xla":
        return Arm(XlaMode.JIT)
    return parse_arm(variant)


def read_back(arm: Arm) -> dict[str, object]:
    """What a worker of `arm` reports in effect after compiling: it engaged as asked."""
    return {
        "precision": arm.precision.value,
        "policy": arm.precision.value,
        "compute_dtype": arm.precision.compute_dtype,
        "variable_dtype": "float32",
        "output_dtype": "float32",
        "loss_scale": arm.precision is Precision.FP16,
    }


def measure_entry(index: int, variant: str, step: float, *, rounds: int = 8,
                  jitter: float = 0.0, failed: bool = False,
                  others: Sequence[float] | None = None) -> RunEntry:
    """A measuring worker of `variant`: warmed up, then `rounds` blocks (none if `failed`:
    it died after its warm-up); `others`: each round's share of the 2 cores something else
    used (above 10%: disturbed, `BUSY_SPINNER` named), else nothing was read."""
    arm = arm_of(variant)
    run_id = f"m{index}-{variant}"
    draw = random.Random(f"{variant}-{rounds}-{jitter}")
    events: list[Event] = [
        StartedEvent(t=1.0, protocol=6, mode="measure", run_id=run_id, variant=variant,
                     xla_mode=arm.xla.value, xla_in_effect=arm.compiles_with_xla,
                     device_name="Test CPU", device_kind="CPU", train_count=24, val_count=100,
                     steps_per_epoch=3, **read_back(arm)),  # type: ignore[arg-type]
        WarmupEvent(t=2.0, first_step_seconds=step * 3, warm_step_seconds=[step] * 3),
    ]
    if failed:
        events.append(ErrorEvent(t=3.0, error_type="ResourceExhaustedError",
                                 message="out of memory"))
        return RunEntry(run_id, variant, 1, arm.xla.value, "error", events,
                        arm.precision.value, levers=arm.levers)
    for seq in range(rounds):
        scale = 1 + jitter * draw.uniform(-1, 1)
        seconds = STEPS * step * scale
        read = None
        if others is not None:
            busy = others[seq] > 0.10
            read = Interference(seconds=seconds, cores=2, other_share=others[seq],
                                own_share=0.9, disturbed=busy,
                                busiest=[BUSY_SPINNER] if busy else [])
        events.append(BlockEvent(t=3.0 + seq, seq=seq, steps=STEPS, seconds=seconds, loss=0.5,
                                 interference=read))
    compiled = XlaEvidence(compiled=True, fusions=40) if arm.compiles_with_xla else (
        XlaEvidence())
    events.append(FinishedEvent(t=4.0 + rounds, summary=RunSummary(
        mode="measure", steps_done=4 + rounds * STEPS, final_val_accuracy=0.75,
        xla_evidence=compiled)))
    return RunEntry(run_id, variant, 1, arm.xla.value, "finished", events, arm.precision.value,
                    levers=arm.levers)


def training_entry(index: int, variant: str, epoch_seconds: Sequence[float]) -> RunEntry:
    arm = arm_of(variant)
    run_id = f"{index:02d}-{variant}-r1"
    events = run_events(variant=variant, xla_mode=arm.xla.value, epoch_seconds=epoch_seconds,
                        run_id=run_id)
    events[0] = dataclasses.replace(events[0], **read_back(arm))  # type: ignore[arg-type]
    return RunEntry(run_id, variant, 1, arm.xla.value, "finished", events, arm.precision.value,
                    levers=arm.levers)


def comparison_report(*, arms: Sequence[str] = (), steps: dict[str, float] | None = None,
                      training: bool = False, failed: Sequence[str] = (), rounds: int = 8,
                      jitter: float = 0.0, others: Sequence[float] | None = None
                      ) -> ComparisonReport:
    """The baseline (0.2 s a step) against XLA (0.1 s: 2× faster) and the other `arms`
    (`steps` says their seconds per step; 0.16 unless said), measured interleaved over
    `rounds` rounds; with `training`, one training run per arm too (the XLA side's epochs
    twice as fast). The arms in `failed` died before their first block."""
    step = {"baseline": 0.2, "xla": 0.1, **(steps or {})}
    variants = ["baseline", "xla", *arms]
    report = ComparisonReport(
        config=RunConfig(epochs=3, batch_size=8, image_size=48, quick=not training,
                         arms=tuple(arms), busy_percent=10),
        dataset=dict(DATASET),
        measure_runs=[
            measure_entry(i, v, step.get(v, 0.16), rounds=rounds, jitter=jitter,
                          failed=v in failed, others=others)
            for i, v in enumerate(variants, start=1)
        ],
        measurement=MeasurementRecord(stopped_by="budget", measuring_seconds=60.0,
                                      block_steps=STEPS),
        environment={"hostname": "testbox", "platform": "Linux-6.1-x86_64", "cpu_count": 2},
    )
    if training:
        epochs = {"baseline": (3.0, 1.0, 1.0), "xla": (6.0, 0.5, 0.5)}
        report.runs = [
            training_entry(i, v, epochs.get(v, (4.0, 0.8, 0.8)))
            for i, v in enumerate(variants, start=1)
        ]
    report.recompute()
    return report
