"""Run traces gathered from events (what the plots read), training and measuring."""

from __future__ import annotations

import pytest

from tests.helpers.streams import run_events
from xlagui.core.protocol.events import (
    BatchEvent,
    BlockEvent,
    EpochEvent,
    StartedEvent,
    WarmupEvent,
)
from xlagui.present.traces import trace_of


def test_a_trace_gathers_the_curves_of_a_run() -> None:
    trace = trace_of(run_events(epoch_seconds=(3.0, 1.0, 1.0), steps=4), epochs_planned=3)
    assert trace.steps_per_epoch == 4 and trace.total_steps == 12
    assert trace.batch_x[:4] == [0.25, 0.5, 0.75, 1.0]
    assert trace.cumulative == [3.0, 4.0, 5.0]
    assert trace.fraction == 1.0
    assert trace.summary is not None and trace.terminal is not None
    # The smoothed curve follows the raw one, lagging behind it.
    assert trace.batch_smooth[0] == trace.batch_loss[0]
    assert trace.batch_loss[-1] < trace.batch_smooth[-1] < trace.batch_smooth[0]


def test_eta_comes_from_the_pace_after_the_first_batch() -> None:
    trace = trace_of([StartedEvent(t=1.0, steps_per_epoch=10)], epochs_planned=2)
    assert trace.eta_seconds() is None
    trace.add(BatchEvent(t=5.0, epoch=1, step=1, loss=1.0))  # compiling took 4 s
    assert trace.eta_seconds() is None
    trace.add(BatchEvent(t=6.0, epoch=1, step=5, loss=0.9))  # 4 steps per second
    assert trace.eta_seconds() == pytest.approx(15 * 0.25)
    trace.add(EpochEvent(t=7.0, epoch=1, epoch_seconds=6.0, cumulative_seconds=6.0))
    assert trace.expected_total() == pytest.approx(12.0)


def test_a_loss_that_is_not_finite_leaves_a_gap() -> None:
    trace = trace_of(
        [
            StartedEvent(steps_per_epoch=2),
            BatchEvent(epoch=1, step=1, loss=None),
            BatchEvent(epoch=1, step=2, loss=0.5),
        ],
        epochs_planned=1,
    )
    assert trace.batch_x == [1.0] and trace.steps_done == 2


def test_a_measuring_trace_counts_blocks_and_their_losses() -> None:
    trace = trace_of(
        [
            StartedEvent(mode="measure", steps_per_epoch=10),
            WarmupEvent(first_step_seconds=5.0, warm_step_seconds=[1.0, 1.2, 0.9]),
            BlockEvent(seq=0, steps=2, seconds=2.0, loss=0.7),
            BlockEvent(seq=1, steps=2, seconds=3.0, loss=None),
            BlockEvent(seq=2, steps=2, seconds=2.4, loss=0.6),
        ],
        epochs_planned=5,
    )
    assert trace.measuring
    assert trace.steps_done == 4 + 6
    assert trace.median_step_seconds() == pytest.approx(1.2)
    assert trace.batch_x == [0.6, 1.0] and trace.batch_loss == [0.7, 0.6]


def test_speedup_traces_estimate_every_arm_from_the_blocks() -> None:
    from xlagui.core.analysis.pairs import running_estimates
    from xlagui.core.protocol.events import BlockEvent
    from xlagui.present.traces import SpeedupTraces

    def blocks(seconds: list[float]) -> list[BlockEvent]:
        return [BlockEvent(seq=i, steps=4, seconds=s) for i, s in enumerate(seconds)]

    base = blocks([1.0, 1.2, 0.8, 1.0, 1.1, 0.9, 1.0])
    xla = blocks([2.0, 2.4, 1.6, 2.1, 2.2, 1.8, 2.0])
    bf16 = blocks([0.5, 0.6, 0.4])  # three rounds so far
    traces = SpeedupTraces()
    curves = traces.update({"baseline": base, "xla": xla, "bf16": bf16})
    assert list(curves) == ["xla", "bf16"]
    expected = running_estimates([x.seconds / b.seconds for b, x in zip(base, xla, strict=True)])
    assert curves["xla"].speedup == [1 / e.ratio for e in expected]
    assert curves["bf16"].speedup == [2.0, 2.0, 2.0]
    # The band starts where the rounds give a 95% interval (six of them).
    assert curves["xla"].band_x == [6.0, 7.0] and curves["bf16"].band_x == []
    # New rounds extend the curves; a baseline with no blocks gives none.
    more = traces.update({"baseline": base, "xla": xla, "bf16": blocks([0.5, 0.6, 0.4, 0.5])})
    assert len(more["bf16"].x) == 4
    assert traces.update({"xla": xla}) == {}
