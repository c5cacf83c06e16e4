"""Synthetic event streams with known answers, and a fake worker that replays them.

The fake worker has the signature of `runner.run_worker`, so a comparison (CLI or GUI) can run
end to end without TensorFlow.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xlagui.core.events import (
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    StartedEvent,
)
from xlagui.core.runner import RunResult, RunSpec
from xlagui.core.stats import summarize_epochs
from xlagui.core.task import TaskState


def run_events(
    *,
    variant: str = "baseline",
    xla_mode: str = "off",
    epoch_seconds: Sequence[float] = (3.0, 1.0, 1.0),
    val_accuracy: Sequence[float] | None = None,
    steps: int = 4,
    val_count: int = 100,
    peak_rss: int = 500 * 2**20,
    compiled: bool | None = None,
    run_id: str = "r",
) -> list[Event]:
    """started, batch…, epoch…, finished: a run whose timings are exactly `epoch_seconds`."""
    compiled = (xla_mode != "off") if compiled is None else compiled
    events: list[Event] = [
        StartedEvent(
            t=1.0,
            run_id=run_id,
            variant=variant,
            xla_mode=xla_mode,
            xla_in_effect=xla_mode != "off",
            device_name="Test CPU",
            device_kind="CPU",
            versions={"python": "3", "tensorflow": "2.x", "keras": "3.x"},
            class_names=["african", "asian"],
            train_count=steps * 8,
            val_count=val_count,
            steps_per_epoch=steps,
        )
    ]
    epochs: list[EpochEvent] = []
    t = 1.0
    cum = 0.0
    for i, secs in enumerate(epoch_seconds, start=1):
        for step in range(1, steps + 1):
            events.append(
                BatchEvent(
                    t=t + secs * step / steps, epoch=i, step=step, loss=1.0 / (i + step / steps)
                )
            )
        t += secs
        cum += secs
        acc = val_accuracy[i - 1] if val_accuracy else 0.5 + 0.4 * i / len(epoch_seconds)
        ep = EpochEvent(
            t=t,
            epoch=i,
            loss=1.0 / (i + 1),
            accuracy=acc,
            val_loss=1.1 / (i + 1),
            val_accuracy=acc,
            epoch_seconds=secs,
            cumulative_seconds=cum,
        )
        events.append(ep)
        epochs.append(ep)
    summary = summarize_epochs(epochs)
    summary["peak_rss_bytes"] = peak_rss
    summary["peak_device_bytes"] = None
    summary["xla_mode"] = xla_mode
    summary["xla_evidence"] = {
        "hlo_modules": 2 if compiled else 0,
        "fusions": 40 if compiled else 0,
        "compiled_log_line": compiled,
        "dump_dir": "",
        "compiled": compiled,
    }
    events.append(FinishedEvent(t=t + 0.1, summary=summary))
    return events


@dataclass
class FakeWorker:
    """Replays a stream per variant; `delay` seconds between events; honours cancellation.

    `fail` maps a variant to an ErrorEvent the run ends with after its first epoch (a crash).
    """

    streams: dict[str, list[Event]]
    delay: float = 0.0
    fail: dict[str, ErrorEvent] = field(default_factory=dict)
    specs: list[RunSpec] = field(default_factory=list)

    def __call__(
        self, spec: RunSpec, state: TaskState, on_event: Callable[[Event], None]
    ) -> RunResult:
        self.specs.append(spec)
        result = RunResult(spec=spec, status="finished")
        epochs_done = 0
        for event in self.streams[spec.variant]:
            if state.is_interruption_requested():
                ev: Event = CancelledEvent(t=event.t, epochs_done=epochs_done)
                result.events.append(ev)
                on_event(ev)
                result.status = "cancelled"
                return result
            if isinstance(event, FinishedEvent) and spec.variant in self.fail:
                event = self.fail[spec.variant]
            result.events.append(event)
            on_event(event)
            if isinstance(event, EpochEvent):
                epochs_done += 1
            if isinstance(event, ErrorEvent):
                result.status = "error"
                return result
            if self.delay:
                time.sleep(self.delay)
        return result
