"""A comparison with known step times and known machine limits, for the %-of-peak figures."""

from __future__ import annotations

from tests.helpers.streams import run_events
from xlagui.core.machine.peak import LayerCeiling, MachineLimits, ceiling_key
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import (
    BlockEvent,
    FinishedEvent,
    RunSummary,
    StartedEvent,
    WarmupEvent,
)
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport, MeasurementRecord
from xlagui.core.xla.evidence import XlaEvidence

PEAK = 100e9  # FLOP/s
BANDWIDTH = 10e9  # bytes/s
CEILING = 80e9  # FLOP/s, the largest layers alone


def known_limits(image_size: int = 48, batch_size: int = 8) -> MachineLimits:
    return MachineLimits(
        key="test-machine | cpu | TensorFlow 0 | probe 1",
        device="cpu",
        device_name="Test CPU",
        tf_version="0",
        machine="test-machine",
        matmul_size=2048,
        matmul_flops_per_second=PEAK,
        bandwidth_bytes=1 << 28,
        bandwidth_bytes_per_second=BANDWIDTH,
        measured="2026-01-01T00:00:00+00:00",
        probe_seconds=5.0,
        ceilings={
            ceiling_key(image_size, batch_size): LayerCeiling(
                ["conv2d_1", "conv2d"], image_size, batch_size, 8e9, 0.1, CEILING
            )
        },
    )


def measure_events(run_id: str, variant: str, xla_mode: str, step: float) -> list:
    """A measuring worker whose every block takes exactly `step` seconds per step."""
    events: list = [
        StartedEvent(t=1.0, mode="measure", run_id=run_id, variant=variant, xla_mode=xla_mode,
                     xla_in_effect=xla_mode != "off", device_name="cpu", device_kind="CPU",
                     train_count=32, val_count=8, steps_per_epoch=4),
        WarmupEvent(t=2.0, first_step_seconds=step * 3, warm_step_seconds=[step] * 3),
    ]
    for seq in range(8):
        events.append(BlockEvent(t=3.0 + seq, seq=seq, steps=10, seconds=10 * step, loss=0.5))
    compiled = XlaEvidence(compiled=True, fusions=40) if xla_mode != "off" else XlaEvidence()
    events.append(FinishedEvent(t=12.0, summary=RunSummary(mode="measure", steps_done=83,
                                                           xla_evidence=compiled)))
    return events


def limits_report(*, limits: MachineLimits | None = None, training: bool = True,
                  base_step: float = 0.2, xla_step: float = 0.4) -> ComparisonReport:
    """48 px, batch 8: baseline steps of `base_step` s, XLA (jit) steps of `xla_step` s."""
    config = RunConfig(epochs=3, batch_size=8, image_size=48, quick=not training)
    report = ComparisonReport(
        config=config,
        dataset={"name": "tiny", "root": "/data/tiny", "layout": "split",
                 "class_names": ["african", "asian"]},
        measure_runs=[
            RunEntry("m1-baseline", "baseline", 1, "off", "finished",
                     measure_events("m1-baseline", "baseline", "off", base_step)),
            RunEntry("m2-xla", "xla", 1, "jit", "finished",
                     measure_events("m2-xla", "xla", "jit", xla_step)),
        ],
        measurement=MeasurementRecord(stopped_by="budget", measuring_seconds=60.0,
                                      block_steps=10),
        limits=limits,
    )
    if training:
        report.runs = [
            RunEntry("01-baseline-r1", "baseline", 1, "off", "finished",
                     run_events(run_id="01-baseline-r1")),
            RunEntry("02-xla-r1", "xla", 1, "jit", "finished",
                     run_events(variant="xla", xla_mode="jit", epoch_seconds=(6, 2.0, 2.0),
                                run_id="02-xla-r1")),
        ]
    report.recompute()
    return report
