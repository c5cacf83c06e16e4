"""The one protocol between a run and its watchers.

A run emits typed events, serialised as one JSON object per line. The worker process writes
them, the CLI and the GUI read the very same stream, and tests replay recorded streams without
TensorFlow. Every event carries `t`, the seconds since the run started.

Two kinds of run speak it. A *training* run (`mode="train"`) streams started, batch, epoch and
one terminal event. A *measuring* worker (`mode="measure"`) sends started, then waits for
`WorkerCommand`s on its stdin and answers each: `warmup` with a `WarmupEvent`, `block` with a
`BlockEvent`, `finish` with `finished`. The parent alternates blocks between live workers (see
`xlagui.core.interleave`).

Decoding checks every field's type against the dataclass and names the bad field, so a stream
that drifted from this module fails loudly instead of reaching a plot as the wrong type.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, TextIO, Union

# 2: measuring workers (warmup/block events, commands on stdin); `protocol` in `started`.
# 3: arms: the dtype policy asked for and read back in `started`.
PROTOCOL_VERSION = 3


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
    protocol: int = 0  # the worker's PROTOCOL_VERSION; 0 in streams recorded before version 2
    mode: str = "train"  # "train" or "measure"
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
    # The arm's dtype policy: asked for, then read back from the compiled model (protocol 3).
    precision: str = "float32"
    policy: str = ""  # model.dtype_policy.name
    compute_dtype: str = ""  # of the first convolution
    variable_dtype: str = ""
    output_dtype: str = ""  # of the output layer (float32 under every policy)
    loss_scale: bool = False  # the optimizer is Keras' LossScaleOptimizer


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
class WarmupEvent(Event):
    """A measuring worker's first training step (tracing, compiling) and a few steady ones,
    each timed on its own and ended by reading the loss (a device sync)."""

    type: ClassVar[str] = "warmup"
    first_step_seconds: float = 0.0
    warm_step_seconds: list[float] = field(default_factory=list)


@dataclass
class BlockEvent(Event):
    """`steps` training steps run back to back on request, timed inside the worker from the
    first step to reading the last loss (a device sync), so the parent's latency is not in it."""

    type: ClassVar[str] = "block"
    seq: int = 0  # the round this block belongs to (the same for every arm)
    steps: int = 0
    seconds: float = 0.0
    loss: float | None = None
    # untimed: how long the worker then waited for its own threads to go idle (see
    # `xlagui.core.worker.wait_until_quiet`), so their leftovers do not land in another arm's block
    quiet_seconds: float = 0.0


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
    for cls in (
        StartedEvent,
        BatchEvent,
        EpochEvent,
        WarmupEvent,
        BlockEvent,
        FinishedEvent,
        CancelledEvent,
        ErrorEvent,
    )
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
    hints = _hints(cls)
    for name, value in kwargs.items():
        if not _conforms(value, hints[name]):
            raise ProtocolError(
                f"{kind} event: field {name!r} should be {_spell(hints[name])}, got {value!r}"
            )
    return cls(**kwargs)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _conforms(value: Any, hint: Any) -> bool:
    """Whether a decoded JSON value fits a field's annotation (the few shapes events use)."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_conforms(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool):
        return isinstance(value, hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(
            _conforms(k, key) and _conforms(v, item) for k, v in value.items()
        )
    return isinstance(value, hint) if isinstance(hint, type) else True


def _spell(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


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


class ProtocolMismatch(ProtocolError):
    """A worker that speaks another protocol version than this app (a stale install)."""


def check_protocol(event: StartedEvent) -> None:
    if event.protocol != PROTOCOL_VERSION:
        raise ProtocolMismatch(
            f"the worker speaks protocol version {event.protocol}, this app version "
            f"{PROTOCOL_VERSION}: reinstall xlagui so both come from the same release"
        )


COMMANDS = ("warmup", "block", "finish", "cancel")


@dataclass(frozen=True)
class WorkerCommand:
    """What the parent asks a measuring worker to do next, one JSON object per stdin line.

    `warmup`: time the first step and `steps` steady ones. `block`: run `steps` steps as round
    `seq`. `finish`: report the summary and exit. `cancel` (also accepted as the bare word, which
    training workers understand): stop at the next step.
    """

    cmd: str
    steps: int = 0
    seq: int = 0

    def __post_init__(self) -> None:
        if self.cmd not in COMMANDS:
            raise ProtocolError(f"unknown worker command {self.cmd!r}")
        for name in ("steps", "seq"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProtocolError(f"worker command: field {name!r} must be a whole number ≥ 0")
        if self.cmd == "block" and self.steps < 1:
            raise ProtocolError("worker command: a block needs at least 1 step")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> WorkerCommand:
        line = line.strip()
        if line == "cancel":
            return cls("cancel")
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"not a worker command: {line[:80]!r} ({exc})") from None
        if not isinstance(data, dict):
            raise ProtocolError("a worker command is a JSON object")
        unknown = set(data) - {"cmd", "steps", "seq"}
        if unknown:
            raise ProtocolError(f"worker command: unknown field(s) {', '.join(sorted(unknown))}")
        if not isinstance(data.get("cmd"), str):
            raise ProtocolError("worker command: field 'cmd' must be a string")
        return cls(**data)
