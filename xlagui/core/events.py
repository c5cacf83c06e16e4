"""The one protocol between a run and its watchers.

A run emits typed events, serialised as one JSON object per line. The worker process writes
them, the CLI and the GUI read the very same stream, and tests replay recorded streams without
TensorFlow. Every event carries `t`, the seconds since the run started.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TextIO

PROTOCOL_VERSION = 1


class ProtocolError(ValueError):
    """A line that is not a valid event."""


@dataclass
class Event:
    type: ClassVar[str] = ""
    t: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"type": self.type}
        d.update(_finite(dataclasses.asdict(self)))
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False, default=str)


@dataclass
class StartedEvent(Event):
    """The worker has built and compiled the model and is about to train."""

    type: ClassVar[str] = "started"
    run_id: str = ""
    variant: str = ""  # "baseline" or "xla"
    xla_mode: str = "off"  # what was asked for
    xla_in_effect: bool = False  # read back after compiling (model.jit_compile / get_jit())
    device_name: str = ""
    device_kind: str = ""  # "CPU" or "GPU"
    versions: dict[str, str] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    class_names: list[str] = field(default_factory=list)
    train_count: int = 0
    val_count: int = 0
    steps_per_epoch: int = 0
    pid: int = 0
    setup_seconds: float = 0.0  # import TensorFlow, build the input pipeline and the model


@dataclass
class BatchEvent(Event):
    type: ClassVar[str] = "batch"
    epoch: int = 0  # 1-based
    step: int = 0  # 1-based
    loss: float | None = 0.0  # Keras' running mean over the epoch so far (None: not finite)


@dataclass
class EpochEvent(Event):
    type: ClassVar[str] = "epoch"
    epoch: int = 0  # 1-based
    loss: float = 0.0
    accuracy: float = 0.0
    val_loss: float | None = None
    val_accuracy: float | None = None
    epoch_seconds: float = 0.0  # training and validation of this epoch
    cumulative_seconds: float = 0.0  # sum of epoch_seconds so far


@dataclass
class FinishedEvent(Event):
    type: ClassVar[str] = "finished"
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class CancelledEvent(Event):
    type: ClassVar[str] = "cancelled"
    epochs_done: int = 0
    forced: bool = False  # the worker did not stop by itself and was terminated
    reason: str = "cancelled by the user"


@dataclass
class ErrorEvent(Event):
    type: ClassVar[str] = "error"
    error_type: str = ""
    message: str = ""
    hint: str = ""
    details: str = ""  # traceback or the tail of the worker's log


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (StartedEvent, BatchEvent, EpochEvent, FinishedEvent, CancelledEvent, ErrorEvent)
}
TERMINAL_TYPES = frozenset({"finished", "cancelled", "error"})


def event_from_dict(data: dict[str, Any]) -> Event:
    if not isinstance(data, dict):
        raise ProtocolError(f"an event is a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ProtocolError(f"unknown event type {kind!r}")
    names = {f.name: f for f in dataclasses.fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in names}
    missing = [n for n, f in names.items() if n not in kwargs and _required(f)]
    if missing:
        raise ProtocolError(f"{kind} event lacks {', '.join(missing)}")
    if not isinstance(kwargs.get("t", 0.0), (int, float)):
        raise ProtocolError(f"{kind} event has a non-numeric time")
    return cls(**kwargs)


def _finite(value: Any) -> Any:
    """NaN and infinities (a diverging loss) become null: JSON has no spelling for them."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.name == "t"


def parse_event(line: str) -> Event:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"not JSON: {line[:120]!r} ({exc})") from None
    return event_from_dict(data)


def read_events(lines: Iterable[str]) -> Iterator[Event]:
    """Parse a recorded stream, skipping blank lines."""
    for line in lines:
        if line.strip():
            yield parse_event(line)


def write_event(stream: TextIO, event: Event) -> None:
    stream.write(event.to_json() + "\n")
    stream.flush()
