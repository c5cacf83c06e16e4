"""What a child process is asked to do (`ChildJob`): a training, measuring or inspecting run
(`WorkerJob`), the model check (`CheckJob`), the device probe (`DevicesJob`), the peak probe
(`PeakJob`) or the TensorBoard text (`TextJob`). Every one is `python -m
xlagui.core.worker.child WORDS`, started through a transport, with its own folder (its log,
its events, its temporary files) and the settings its environment needs before TensorFlow
loads (`ChildSettings`, made into variables by `transports/environment.py`).

A job says its request for a place (`Place`): on this computer a run's spec is its file; on a
host it comes as stdin's first line, with the host's paths, and a model file is the host's
copy. The transport that reaches the place maps the paths.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import ClassVar, Protocol

from xlagui.core.model.check import ModelCheckSpec
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import TERMINAL_TYPES, Event
from xlagui.core.protocol.identity import DumpChoice, EventType, WorkerMode
from xlagui.core.protocol.levers import BACKEND, TF_BACKEND
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.spec import SPEC_FILE, RunSpec

CHILD_MODULE = "xlagui.core.worker.child"
LOG_NAME = "worker.log"  # a child's stderr, in its folder

# What kind of worker a run's is, in the parent's messages about it.
_WORKER_WORDS = {
    WorkerMode.TRAIN: "training",
    WorkerMode.MEASURE: "measuring",
    WorkerMode.INSPECT: "inspecting",
}


def run_words(spec: RunSpec) -> str:
    """The run in a few words, for the parent's messages about its worker (its death, a lost
    connection): which arm, what kind of worker, and the sizes that decide its memory.

    Worded here, where those messages are made, not in `xlagui.present`: each is the `message`
    of the run's error event, which travels as it is (saved in comparison.json, and the one
    line every version shows of a failed run)."""
    arm = spec.variant if spec.xla_mode is XlaMode.OFF else (
        f"{spec.variant}, XLA {spec.xla_mode.value}"
    )
    precision = "" if spec.precision is Precision.FLOAT32 else f", {spec.precision}"
    return (
        f"{_WORKER_WORDS[spec.mode]} worker of {arm}{precision}, batch size "
        f"{spec.config.batch_size}, image size {spec.config.image_size}"
    )


class Place(Protocol):
    """Where a child runs, as its request needs it: whether its files are this computer's, and
    each local path or model as it is there."""

    @property
    def local(self) -> bool: ...

    def path(self, local: Path) -> PurePath: ...

    def spec(self, spec: RunSpec) -> RunSpec: ...

    def check_spec(self, spec: ModelCheckSpec) -> ModelCheckSpec: ...


class Here:
    """This computer: every path is itself."""

    local = True

    def path(self, local: Path) -> PurePath:
        return local

    def spec(self, spec: RunSpec) -> RunSpec:
        return spec

    def check_spec(self, spec: ModelCheckSpec) -> ModelCheckSpec:
        return spec


HERE = Here()


@dataclass(frozen=True)
class ChildSettings:
    """What a child's environment must say before it imports TensorFlow: the device it may
    see (None: every GPU), the XLA mode and dump of a run (its evidence), whether TensorFlow's
    log is kept quiet (a probe) or whole (a run: XLA's log lines are evidence), and the
    variables its arm's levers set (`env`: `Arm.environment`)."""

    device: str | None = "cpu"
    xla_mode: XlaMode = XlaMode.OFF
    dump: DumpChoice = DumpChoice.NONE
    quiet: bool = True
    env: tuple[tuple[str, str], ...] = ()
    # Its step is compiled by XLA on a backend that always compiles (JAX), with the XLA mode
    # off: its dump and compile log are its evidence as an XLA mode's are.
    compiles: bool = False


@dataclass(frozen=True)
class Request:
    """A child's arguments after the module, and what is written to its stdin first
    (`end_input`: then closed, for a child that reads its input to the end)."""

    words: list[str]
    stdin: str = ""
    end_input: bool = False


@dataclass(frozen=True)
class ChildJob:
    """One child process: its folder here, and `command`, a test's own command line instead of
    the child module's. Subclasses say the rest."""

    folder: Path
    command: tuple[str, ...] | None = field(default=None, kw_only=True)

    reads_commands: ClassVar[bool] = False  # a cancel goes to its stdin, else it is terminated
    answers: ClassVar[frozenset[str]] = frozenset({EventType.ERROR})  # event types that end it

    @property
    def log_path(self) -> Path:
        return self.folder / LOG_NAME

    def describe(self) -> str:
        """The child in words, for the parent's messages about it (see `run_words`)."""
        return "a helper process"

    def request(self, place: Place) -> Request:
        raise NotImplementedError

    def settings(self) -> ChildSettings:
        return ChildSettings()

    def homeward(self) -> tuple[Path, ...]:
        """The folders it writes: on a host, they come home when it has ended."""
        return (self.folder,)

    def is_last(self, event: Event, before: Sequence[Event]) -> bool:
        """Whether `event` (after `before`) is the child's last word."""
        return event.type in self.answers


@dataclass(frozen=True)
class WorkerJob(ChildJob):
    """A training, measuring or inspecting run of `spec` (its folder is the run's)."""

    spec: RunSpec = field(kw_only=True)

    reads_commands: ClassVar[bool] = True
    answers: ClassVar[frozenset[str]] = TERMINAL_TYPES

    @classmethod
    def of(cls, spec: RunSpec, command: Sequence[str] | None = None) -> WorkerJob:
        return cls(spec.run_dir, spec=spec, command=tuple(command) if command else None)

    @property
    def spec_path(self) -> Path:
        return self.spec.run_dir / SPEC_FILE

    def describe(self) -> str:
        return run_words(self.spec)

    def request(self, place: Place) -> Request:
        if place.local:
            return Request([str(self.spec_path)])
        return Request(["-"], json.dumps(place.spec(self.spec).to_dict()) + "\n")

    def settings(self) -> ChildSettings:
        # The arm as this comparison applies it: its levers for every worker, the arm's winning.
        applied = self.spec.arm.effective(self.spec.config)
        return ChildSettings(self.spec.config.device, self.spec.xla_mode, self.spec.xla_dump,
                             quiet=False, env=tuple(applied.environment().items()),
                             compiles=applied.compiles_with_xla)

    def homeward(self) -> tuple[Path, ...]:
        tensorboard = (Path(self.spec.tensorboard_dir),) if self.spec.tensorboard_dir else ()
        return (self.spec.run_dir, *tensorboard)


@dataclass(frozen=True)
class CheckJob(ChildJob):
    """The model check of `specs`, one `model` event each (or an `error` at the first model
    refused)."""

    specs: tuple[ModelCheckSpec, ...] = field(kw_only=True)
    # The Keras backend it builds on ("tf"; "jax": the JAX arm's check, issue 39).
    backend: str = field(default=TF_BACKEND, kw_only=True)

    def describe(self) -> str:
        return "the model check" + ("" if self.backend == TF_BACKEND else f" on {self.backend}")

    def request(self, place: Place) -> Request:
        lines = "".join(place.check_spec(s).to_json() + "\n" for s in self.specs)
        return Request(["--check-model", "-"], lines, end_input=True)

    def settings(self) -> ChildSettings:
        # As a training worker's log, on the CPU: a model is checked, not timed; on the
        # backend's environment (`KERAS_BACKEND`).
        return ChildSettings("cpu", quiet=False, env=BACKEND.of(self.backend).env)

    def is_last(self, event: Event, before: Sequence[Event]) -> bool:
        answered = sum(1 for e in [*before, event] if e.type == EventType.MODEL)
        return event.type == EventType.ERROR or answered >= len(self.specs)


@dataclass(frozen=True)
class DevicesJob(ChildJob):
    """The devices TensorFlow sees: every GPU visible."""

    answers: ClassVar[frozenset[str]] = frozenset({EventType.DEVICES, EventType.ERROR})

    def describe(self) -> str:
        return "the device probe"

    def request(self, place: Place) -> Request:
        return Request(["--probe"])

    def settings(self) -> ChildSettings:
        return ChildSettings(device=None)


@dataclass(frozen=True)
class PeakJob(ChildJob):
    """The peak probe on `device` (its peaks too with `peak`), at the comparison's sizes."""

    device: str = field(default="cpu", kw_only=True)
    image_size: int = field(default=150, kw_only=True)
    batch_size: int = field(default=64, kw_only=True)
    peak: bool = field(default=True, kw_only=True)
    quick: bool = field(default=False, kw_only=True)

    answers: ClassVar[frozenset[str]] = frozenset({EventType.LIMITS, EventType.ERROR})

    def describe(self) -> str:
        return "the peak probe"

    def request(self, place: Place) -> Request:
        words = ["--peak", "--device", self.device, "--image-size", str(self.image_size),
                 "--batch", str(self.batch_size)]
        if not self.peak:
            words.append("--ceiling-only")
        if self.quick:
            words.append("--quick")
        return Request(words)

    def settings(self) -> ChildSettings:
        return ChildSettings(device=self.device)


@dataclass(frozen=True)
class TextJob(ChildJob):
    """The comparison's summary `text` for TensorBoard, written into `target`."""

    target: Path = field(kw_only=True)
    text: str = field(default="", kw_only=True)

    answers: ClassVar[frozenset[str]] = frozenset({EventType.TEXT_WRITTEN, EventType.ERROR})

    def describe(self) -> str:
        return "the TensorBoard text"

    def request(self, place: Place) -> Request:
        return Request(["--tensorboard-text", str(place.path(self.target))], self.text,
                       end_input=True)

    def homeward(self) -> tuple[Path, ...]:
        return (self.folder, self.target)
