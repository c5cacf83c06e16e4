"""Event streams recorded from the real worker, and a fake worker that replays them.

tests/helpers/recorded/ holds the event streams of two real worker runs, a baseline and a jit run
(48 px, batch 8, 3 epochs on a tiny generated dataset), written line for line as the worker sent
them; `python tests/helpers/record_streams.py` records them again.

- `recorded_events(xla_mode)` is one of those streams, exactly as the worker sent it, and
  `recorded_worker()` replays both: the GUI and the CLI meet what a worker really sends.
- `run_events(...)` is a stream with known answers, for tests that check figures (timings,
  losses, steps per epoch): the recorded stream with its timings, metrics and counts replaced
  by the ones asked for. Every event, field and summary field is still the worker's own; the
  timing part of the summary is recomputed with `stats.summarize_epochs`, as the worker does,
  and `started` says this app's protocol version, as a live worker of this release would.

`FakeWorker` has the signature of `runner.run_worker`, so a comparison (CLI or GUI) can run end
to end without TensorFlow.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from xlagui.core.analysis.stats import summarize_epochs
from xlagui.core.measure.runner import RunResult
from xlagui.core.measure.transports import LOCAL, Transport
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    StartedEvent,
    read_events,
)
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.xla.evidence import XlaEvidence

RECORDED = Path(__file__).resolve().parent / "recorded"
# The XLA mode of a recorded run → its file (tests/helpers/record_streams.py writes them).
RECORDINGS = {"off": "baseline.jsonl", "jit": "jit.jsonl"}

E = TypeVar("E", bound=Event)


@functools.cache
def _load(xla_mode: str) -> tuple[Event, ...]:
    path = RECORDED / RECORDINGS[xla_mode]
    with path.open(encoding="utf-8") as fh:
        return tuple(read_events(fh))


def recorded_events(xla_mode: str = "off") -> list[Event]:
    """The stream a real worker sent for a run with XLA `off` or `jit`, event for event (a fresh
    copy each time: a test may change it)."""
    return copy.deepcopy(list(_load(xla_mode)))


def recorded_worker(delay: float = 0.0) -> FakeWorker:
    """A fake worker that replays the recorded baseline and jit runs as the worker sent them."""
    return FakeWorker(
        {"baseline": recorded_events("off"), "xla": recorded_events("jit")}, delay=delay
    )


def _first(events: Sequence[Event], kind: type[E]) -> E:
    return next(e for e in events if isinstance(e, kind))


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
    """started, batch…, epoch…, finished: the recorded run, with timings exactly
    `epoch_seconds`, `steps` batches per epoch and known losses and accuracies.

    Setup takes 1 s; batch `step` of epoch `i` has the loss 1 / (i + step / steps); epoch `i`
    the loss 1 / (i + 1), the validation loss 1.1 / (i + 1) and, unless `val_accuracy` says
    otherwise, the accuracy 0.5 + 0.4 i / epochs. A compiled XLA run shows 2 HLO modules and
    40 fusions.
    """
    compiled = (xla_mode != "off") if compiled is None else compiled
    recorded = _load("off" if xla_mode == "off" else "jit")
    setup = 1.0
    events: list[Event] = [
        dataclasses.replace(
            _first(recorded, StartedEvent),
            t=setup,
            protocol=PROTOCOL_VERSION,
            run_id=run_id,
            variant=variant,
            xla_mode=xla_mode,
            xla_in_effect=xla_mode != "off",
            train_count=steps * 8,
            val_count=val_count,
            steps_per_epoch=steps,
            setup_seconds=setup,
        )
    ]
    batch, epoch, finished = (
        _first(recorded, BatchEvent),
        _first(recorded, EpochEvent),
        _first(recorded, FinishedEvent),
    )
    epochs: list[EpochEvent] = []
    t = setup
    cum = 0.0
    for i, secs in enumerate(epoch_seconds, start=1):
        for step in range(1, steps + 1):
            events.append(
                dataclasses.replace(
                    batch,
                    t=t + secs * step / steps,
                    epoch=i,
                    step=step,
                    loss=1.0 / (i + step / steps),
                )
            )
        t += secs
        cum += secs
        acc = val_accuracy[i - 1] if val_accuracy else 0.5 + 0.4 * i / len(epoch_seconds)
        ep = dataclasses.replace(
            epoch,
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
    recorded_evidence = finished.summary.xla_evidence or XlaEvidence()
    summary = dataclasses.replace(
        summarize_epochs(epochs, finished.summary),
        peak_rss_bytes=peak_rss,
        setup_seconds=setup,
        xla_mode=xla_mode,
        xla_in_effect=xla_mode != "off",
        xla_evidence=dataclasses.replace(
            recorded_evidence,
            hlo_modules=2 if compiled else 0,
            fusions=40 if compiled else 0,
            compiled_log_line=compiled,
            compilations=recorded_evidence.compilations if compiled else 0,
            compiled=compiled,
        ),
    )
    events.append(dataclasses.replace(finished, t=t + 0.1, summary=summary))
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
        self,
        spec: RunSpec,
        state: TaskState,
        on_event: Callable[[Event], None],
        transport: Transport = LOCAL,
        command: Sequence[str] | None = None,
    ) -> RunResult:
        """`run_worker`'s shape; a replay runs on no machine and no command, whatever
        `transport` and `command` say."""
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
