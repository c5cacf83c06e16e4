"""The one protocol between a run and its watchers.

A run emits typed events, serialised as one JSON object per line. The worker process writes
them, the CLI and the GUI read the very same stream, and tests replay recorded streams without
TensorFlow. Every event carries `t`, the seconds since the run started.

Two kinds of run speak it. A *training* run (`WorkerMode.TRAIN`) streams started, batch, epoch
and one terminal event. A *measuring* worker (`WorkerMode.MEASURE`) sends started, then waits for
`WorkerCommand`s on its stdin and answers each: `warmup` with a `WarmupEvent`, `block` with a
`BlockEvent`, `finish` with `finished`. The parent alternates blocks between live workers (see
`xlagui.core.measure.interleave`).

Decoding checks every field's type against the dataclass and names the bad field, so a stream
that drifted from this module fails loudly instead of reaching a plot as the wrong type. What
events carry inside is typed too: `StartedEvent.config` is the run's `RunConfig`, and
`FinishedEvent.summary` a `RunSummary`, decoded field by field with the same checks. Fields a
stream lacks take their defaults, so streams and comparisons saved by earlier versions still load.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar, TextIO, TypeAlias

from xlagui.core.protocol.arms import record_arm, record_fields
from xlagui.core.protocol.compiles import Compilation, CompileReason, StepFunction
from xlagui.core.protocol.config import ModelChoice, RunConfig
from xlagui.core.protocol.identity import Command, EventType, WorkerMode, as_variant
from xlagui.core.protocol.interference import Interference
from xlagui.core.protocol.jsoncodec import JSONObject, decode, plain_object
from xlagui.core.protocol.jsoncodec import ProtocolError as ProtocolError  # the protocol's error
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.omissions import Omission
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.probes import DeviceInfo, LayerCeiling
from xlagui.core.protocol.why import ArmProfile, ParityTrace
from xlagui.core.xla.evidence import XlaEvidence
from xlagui.core.xla.hlo import XlaReport

# 2: measuring workers (warmup/block events, commands on stdin); `protocol` in `started`.
# 3: arms: the dtype policy asked for and read back in `started`.
# 4: `finished` carries a typed `RunSummary`: every field, in every mode (null where unknown).
# 5: `finish` with `steps`: untimed training steps first, so that every arm is evaluated after
#    as many steps as the baseline even when it sat out rounds of the measurement.
# 6: the model to build travels in `config.model` (a `ModelChoice`: a worker of version 5 would
#    silently train the article's CNN); the model check answers with a `model` event.
# 7: `compiled` events: every compilation of a step function, with its inputs, cost and reason.
# 8: `config.levers` (runtime settings every worker applies: a worker of version 7 would ignore
#    them), arms of the runtime levers (threads, oneDNN, steps_per_execution, XLA flags), a
#    block's `steps` counted in batches (a call of steps_per_execution N trains N), and the
#    `unknown_xla_flag` error kind.
PROTOCOL_VERSION = 8

@dataclass(frozen=True)
class RunSummary:
    """What a run reports when it ends (`FinishedEvent.summary`).

    A training run (`WorkerMode.TRAIN`) fills the epoch figures
    (`xlagui.core.analysis.stats.summarize_epochs`) and `setup_seconds`; a measuring worker
    (`MEASURE`) the steps it ran, how many losses were
    not finite and the validation figures after them; an inspecting one (`INSPECT`, the short
    compile with XLA's dump on) only `steps_done`. Every run adds its memory peaks, its cache, its
    XLA mode as asked and as read back, and the evidence that XLA compiled; an XLA run also what
    XLA did (`xla_did`, read from its dump).
    """

    mode: WorkerMode = WorkerMode.TRAIN
    # Training runs: the epochs' timings (the first pays for tracing and compiling) and metrics.
    epochs_done: int = 0
    total_seconds: float | None = None
    first_epoch_seconds: float | None = None
    # median of the epochs after the first, those disturbed left out
    steady_epoch_seconds: float | None = None
    steady_epoch_stdev: float | None = None
    steady_epoch_min: float | None = None
    steady_epoch_max: float | None = None
    compile_overhead_seconds: float | None = None  # first epoch beyond a steady one
    epoch_seconds: tuple[float, ...] = ()
    cumulative_seconds: tuple[float, ...] = ()
    # Epochs (1-based) during which something else used the machine beyond the run's
    # `busy_percent`: not counted as steady (`xlagui.core.analysis.stats.steady_epochs`).
    disturbed_epochs: tuple[int, ...] = ()
    final_loss: float | None = None
    final_accuracy: float | None = None
    final_val_loss: float | None = None  # also of a measuring worker, after its steps
    final_val_accuracy: float | None = None
    # Which validation images the final model got right
    # (`xlagui.core.analysis.accuracy.correct_bits`), for McNemar's paired test between two runs on
    # the same images; "" where not measured.
    val_correct: str = ""
    setup_seconds: float | None = None
    # Measuring and inspecting workers.
    steps_done: int = 0
    nonfinite_losses: int = 0
    # Every run.
    peak_rss_bytes: int | None = None
    peak_device_bytes: int | None = None  # None on the CPU, or where the driver does not say
    cache: str = ""  # "memory" or the on-disk cache path
    xla_mode: XlaMode = XlaMode.OFF  # asked for
    xla_in_effect: bool = False  # read back
    xla_evidence: XlaEvidence | None = None
    xla_did: XlaReport | None = None  # XLA runs: what XLA did, from the dump
    # What an optional export or figure could not do (`omissions`: its kind and the error's
    # words): the run itself finished, and the comparison repeats these as notes. `notes` is
    # what streams written before omissions say instead, in words ("TensorBoard files not
    # written: …"), shown as they are.
    omissions: tuple[Omission, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # Strings given for the identities (older callers, tests) become their enums.
        object.__setattr__(self, "mode", WorkerMode(self.mode))
        object.__setattr__(self, "xla_mode", XlaMode(self.xla_mode))

    def to_dict(self) -> JSONObject:
        return plain_object(self)

    @classmethod
    def from_dict(cls, data: object) -> RunSummary:
        return decode(cls, data, "summary")


@dataclass
class Event:
    type: ClassVar[str] = ""
    t: float = 0.0

    def to_dict(self) -> JSONObject:
        d: JSONObject = {"type": self.type}
        d.update(plain_object(self))
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"), allow_nan=False, default=str)


@dataclass
class StartedEvent(Event):
    """The worker has built and compiled the model and is about to train."""

    type: ClassVar[str] = EventType.STARTED
    protocol: int = 0  # the worker's PROTOCOL_VERSION; 0 in streams recorded before version 2
    mode: WorkerMode = WorkerMode.TRAIN
    run_id: str = ""
    variant: str = ""  # a `Role` member (baseline, xla, check) or another arm's canonical name
    xla_mode: XlaMode = XlaMode.OFF  # what was asked for
    xla_in_effect: bool = False  # read back after compiling (model.jit_compile / get_jit())
    device_name: str = ""
    device_kind: str = ""  # "CPU" or "GPU"
    versions: dict[str, str] = field(default_factory=dict)
    config: RunConfig = field(default_factory=RunConfig)
    seed: int = 0
    class_names: list[str] = field(default_factory=list)
    train_count: int = 0
    val_count: int = 0
    steps_per_epoch: int = 0
    pid: int = 0
    setup_seconds: float = 0.0  # import TensorFlow, build the input pipeline and the model
    # The arm's dtype policy: asked for, then read back from the compiled model (protocol 3).
    precision: Precision = Precision.FLOAT32
    policy: str = ""  # model.dtype_policy.name
    compute_dtype: str = ""  # of the first convolution
    variable_dtype: str = ""
    output_dtype: str = ""  # of the output layer (float32 under every policy)
    loss_scale: bool = False  # the optimizer is Keras' LossScaleOptimizer
    # The arm asked for, every lever it changes (`Arm.levers`); None in a stream from before:
    # `xla_mode` and `precision` say it (`arms.record_arm`).
    levers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        # Strings given for the identities (older callers, tests) become their enums ("" is
        # the variant of a stream that did not say it).
        self.mode = WorkerMode(self.mode)
        self.variant = as_variant(self.variant) if self.variant else ""
        for name, value in record_fields(record_arm(vars(self), self.levers)).items():
            setattr(self, name, value)


@dataclass
class BatchEvent(Event):
    type: ClassVar[str] = EventType.BATCH
    epoch: int = 0  # 1-based
    step: int = 0  # 1-based
    loss: float | None = 0.0  # Keras' running mean over the epoch so far (None: not finite)


@dataclass
class EpochEvent(Event):
    type: ClassVar[str] = EventType.EPOCH
    epoch: int = 0  # 1-based
    loss: float = 0.0
    accuracy: float = 0.0
    val_loss: float | None = None
    val_accuracy: float | None = None
    epoch_seconds: float = 0.0  # training and validation of this epoch
    cumulative_seconds: float = 0.0  # sum of epoch_seconds so far
    # What else used the machine during the epoch (None: a stream from before it was read).
    interference: Interference | None = None


@dataclass
class WarmupEvent(Event):
    """A measuring worker's first training step (tracing, compiling) and a few steady ones,
    each timed on its own and ended by reading the loss (a device sync)."""

    type: ClassVar[str] = EventType.WARMUP
    first_step_seconds: float = 0.0
    warm_step_seconds: list[float] = field(default_factory=list)


@dataclass
class BlockEvent(Event):
    """`steps` training steps run back to back on request, timed inside the worker from the
    first step to reading the last loss (a device sync), so the parent's latency is not in it."""

    type: ClassVar[str] = EventType.BLOCK
    seq: int = 0  # the round this block belongs to (the same for every arm)
    steps: int = 0
    seconds: float = 0.0
    loss: float | None = None
    # untimed: how long the worker then waited for its own threads to go idle (see
    # `xlagui.core.worker.measure.wait_until_quiet`), so their leftovers do not land in another
    # arm's block
    quiet_seconds: float = 0.0
    # What else used the machine during the timed stretch (None: a stream from before it was
    # read); a disturbed block's round is set aside (`xlagui.core.analysis.summary.pair_up`).
    interference: Interference | None = None

    @property
    def disturbed(self) -> bool:
        return self.interference is not None and self.interference.disturbed


@dataclass
class CompiledEvent(Event):
    """One compilation of a step function (`xlagui.core.protocol.compiles`), sent once its cost
    is known: `seconds` is `step_seconds` (the whole step that compiled) less a steady step of
    its size (`steady_seconds`; None when the function ran no steady step, and `seconds` is
    then the whole step's)."""

    type: ClassVar[str] = EventType.COMPILED
    function: StepFunction = StepFunction.TRAIN
    shapes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    reason: CompileReason = field(default_factory=CompileReason)
    step_seconds: float = 0.0
    steady_seconds: float | None = None
    started: float = 0.0  # when the step began, in the run's seconds (`t`'s clock)
    traced: bool = False  # TensorFlow traced the function anew (else XLA met a new shape)

    def __post_init__(self) -> None:
        self.function = StepFunction(self.function)

    @property
    def compilation(self) -> Compilation:
        return Compilation(self.function, tuple(self.shapes), self.seconds, self.reason)


@dataclass
class ExplainedEvent(Event):
    """What an inspecting worker found out why (`worker/explain.py`): where its step's time
    goes, its parity steps, and on the baseline the rounding references: the same steps from
    initial weights nudged by one ulp, each another way (`protocol/why.py`)."""

    type: ClassVar[str] = EventType.EXPLAINED
    profile: ArmProfile | None = None
    parity: ParityTrace | None = None
    references: tuple[ParityTrace, ...] = ()


@dataclass
class FinishedEvent(Event):
    type: ClassVar[str] = EventType.FINISHED
    summary: RunSummary = field(default_factory=RunSummary)


@dataclass
class CancelledEvent(Event):
    type: ClassVar[str] = EventType.CANCELLED
    epochs_done: int = 0
    forced: bool = False  # the worker did not stop by itself and was terminated
    reason: str = "cancelled by the user"


# A fact an error event carries for its words (a size, a name, an exit status).
Fact: TypeAlias = str | int | float | bool | None


@dataclass
class ErrorEvent(Event):
    """A run's failure: `message` is what happened in one line (the exception's own words),
    `kind` what to do about it, with the `facts` (`xlagui.core.protocol.failures`) the words of
    `xlagui.present.errors` need. `hint` is what older streams carry instead of a kind: the
    advice already in words, shown as it is."""

    type: ClassVar[str] = EventType.ERROR
    error_type: str = ""
    message: str = ""
    hint: str = ""
    details: str = ""  # traceback or the tail of the worker's log
    kind: str = ""  # a `failures.Failure`; "" in streams written before kinds
    facts: dict[str, Fact] = field(default_factory=dict)


@dataclass
class ModelEvent(Event):
    """The model check's answer (`python -m xlagui.core.worker.child --check-model SPEC.json`): the
    model was built once, outside any run, before anything is measured (an `ErrorEvent` instead
    names what is wrong with a model file)."""

    type: ClassVar[str] = EventType.MODEL
    protocol: int = 0
    model: ModelChoice = field(default_factory=ModelChoice)  # with its `params`
    image_size: int = 0  # in effect: a model file with a fixed input size sets it
    fixed_input_size: bool = False
    outputs: int = 0  # the output layer's width
    layers: int = 0  # counted through nested models
    summary: list[str] = field(default_factory=list)  # "name (Class) output-shape params" lines
    # The model's layers left out of `summary` (`xlagui.present.models.layer_lines` says so); a
    # check from before counted them in a last line of `summary` instead.
    more_layers: int = 0
    compile_words: str = ""  # what it is compiled with: "Adam + binary_crossentropy"
    # One training step's FLOPs at the batch size, and the forward pass's per image, counted
    # from the HLO of the compiled step (`xlagui.core.model.flops.hlo_flops`); None where no count
    # could be had (`flops_note` says why).
    batch_size: int = 0
    flops_per_step: float | None = None
    flops_forward_per_sample: float | None = None
    flops_note: str = ""
    # A step's memory, estimated: weights, gradients, optimizer state, activations at the batch
    # size (`xlagui.core.model.check.memory_estimate`), and TensorFlow's own.
    memory_bytes: int | None = None
    memory_parts: dict[str, int] = field(default_factory=dict)


@dataclass
class DevicesEvent(Event):
    """The device probe's answer (`python -m xlagui.core.worker.child --probe`): the devices
    TensorFlow sees on the machine the probe ran on."""

    type: ClassVar[str] = EventType.DEVICES
    protocol: int = 0
    devices: list[DeviceInfo] = field(default_factory=list)


@dataclass
class LimitsEvent(Event):
    """The peak probe's answer (`python -m xlagui.core.worker.child --peak …`,
    `xlagui.core.machine.peak_probe`): what it measured on one device. The peaks are 0 when only
    the layer ceiling was asked for."""

    type: ClassVar[str] = EventType.LIMITS
    protocol: int = 0
    device: str = ""
    device_name: str = ""
    machine: str = ""  # the machine it ran on, in words (`peak.machine_id` there)
    tf_version: str = ""
    matmul_size: int = 0
    matmul_flops_per_second: float = 0.0
    matmul_peaks: dict[str, float] = field(default_factory=dict)
    bandwidth_bytes: int = 0
    bandwidth_bytes_per_second: float = 0.0
    ceiling: LayerCeiling | None = None
    probe_seconds: float = 0.0


@dataclass
class TextWrittenEvent(Event):
    """The TensorBoard text writer's answer (`python -m xlagui.core.worker.child
    --tensorboard-text DIR`): the comparison's summary is in `target`'s event file."""

    type: ClassVar[str] = EventType.TEXT_WRITTEN
    protocol: int = 0
    target: str = ""


EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        StartedEvent,
        BatchEvent,
        EpochEvent,
        WarmupEvent,
        BlockEvent,
        CompiledEvent,
        ExplainedEvent,
        FinishedEvent,
        CancelledEvent,
        ErrorEvent,
        ModelEvent,
        DevicesEvent,
        LimitsEvent,
        TextWrittenEvent,
    )
}
TERMINAL_TYPES = frozenset({EventType.FINISHED, EventType.CANCELLED, EventType.ERROR})


def event_from_dict(data: object) -> Event:
    if not isinstance(data, dict):
        raise ProtocolError(f"an event is a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown event type {kind!r}")
    if "t" not in data:
        raise ProtocolError(f"{kind} event lacks t")
    return decode(cls, data, f"{kind} event")


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


def check_protocol(event: StartedEvent | DevicesEvent | LimitsEvent | TextWrittenEvent) -> None:
    if event.protocol != PROTOCOL_VERSION:
        raise ProtocolMismatch(
            f"the worker speaks protocol version {event.protocol}, this app version "
            f"{PROTOCOL_VERSION}: reinstall xlagui so both come from the same release"
        )


COMMANDS = tuple(Command)


@dataclass(frozen=True)
class WorkerCommand:
    """What the parent asks a measuring worker to do next, one JSON object per stdin line.

    `warmup`: time the first step and `steps` steady ones. `block`: run `steps` steps as round
    `seq`. `finish`: train `steps` more steps, untimed (an arm catching up with the baseline's
    count), evaluate the validation set, report the summary and exit. `cancel`: stop at the
    next step (a training worker too; `worker_process.WorkerProcess.cancel` sends it, in this
    one format).
    """

    cmd: Command
    steps: int = 0
    seq: int = 0

    def __post_init__(self) -> None:
        if self.cmd not in COMMANDS:
            raise ProtocolError(f"unknown worker command {self.cmd!r}")
        object.__setattr__(self, "cmd", Command(self.cmd))
        for name in ("steps", "seq"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ProtocolError(f"worker command: field {name!r} must be a whole number ≥ 0")
        if self.cmd is Command.BLOCK and self.steps < 1:
            raise ProtocolError("worker command: a block needs at least 1 step")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> WorkerCommand:
        line = line.strip()
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
