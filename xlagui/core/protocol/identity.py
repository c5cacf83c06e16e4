"""Typed identities: every closed set of names the app compares, stores or sends as a string.

Each is a `StrEnum`, so a member *is* its string: it compares equal to the text older files
and streams hold, it is written to JSON as that text, and it formats as it (`f"{status}"` is
"finished"). Decoding a saved value (`RunStatus("finished")`) checks it is one of the names.

They live here, at the bottom of the rooms that store them (`record`, `spec`, `events`), so that
no status, role or worker mode is spelled as a literal anywhere above `protocol/`.
"""

from __future__ import annotations

import enum
import sys


class StrEnum310(str, enum.Enum):
    """`enum.StrEnum` for Python 3.10 (the package still installs there): a member prints and
    formats as its value, not as `Class.MEMBER`."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


if sys.version_info >= (3, 11):
    from enum import StrEnum as StrEnum
else:  # pragma: no cover - Python 3.10
    StrEnum = StrEnum310


class RunStatus(StrEnum):
    """A run's status: where it stands, or how it ended (`RunEntry.status`)."""

    QUEUED = "queued"  # not started yet (or, in a one-side run, the side not asked for)
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"  # stopped by the user (Stop), or not started after a Stop
    ERROR = "error"
    # The app closed during this run (window closed, Ctrl+C, SIGTERM): its finished epochs or
    # pairs are kept in its events.
    INTERRUPTED = "interrupted"
    NOT_RUN = "not run"  # the app closed before this run started


class Split(StrEnum):
    """Which part of a dataset a file belongs to (`ImageFile.split`, the JSON's `counts`): the
    images trained on, and the test (validation) images."""

    TRAIN = "train"
    TEST = "test"


class Role(StrEnum):
    """What a run is to its comparison (`role_of` its variant).

    The baseline, the XLA side (the user's main question: its runs' variant is "xla" whatever
    its XLA mode) and the A/A check's twin (`--check`: the baseline again, measured like an arm
    but never ranked, charted or counted as one) are variants of their own; every other arm's
    variant is its canonical name ("bf16", "jit+fp16"), and its role `ARM` (never a variant).
    """

    BASELINE = "baseline"
    XLA = "xla"
    ARM = "arm"
    CHECK = "check"


def role_of(variant: str) -> Role:
    """The role of a run of this variant: BASELINE, XLA, CHECK, or ARM for any other arm."""
    if variant in (Role.BASELINE, Role.XLA, Role.CHECK):
        return Role(variant)
    return Role.ARM


def as_variant(variant: str) -> str:
    """`variant` as it is kept: the `Role` member for the baseline, the XLA side and the check,
    the arm's name otherwise."""
    role = role_of(variant)
    return variant if role is Role.ARM else role


class WorkerMode(StrEnum):
    """What kind of worker a run's process is (`RunSpec.mode`, `StartedEvent.mode`)."""

    TRAIN = "train"  # trains epochs, streaming batch and epoch events
    MEASURE = "measure"  # runs blocks of steps on request (the interleaved measurement)
    INSPECT = "inspect"  # one short compile with XLA's dump on ("What XLA did")


class DumpChoice(StrEnum):
    """What XLA writes to a run's `xla/` folder (`RunSpec.xla_dump`; the flags of each are
    `xlagui.core.measure.transports.environment.XLA_DUMPS`)."""

    TEXT = "text"  # the HLO as text, with its metadata
    NOMETA = "nometa"  # the HLO as text, without metadata (smaller)
    NONE = "none"  # no dump (every timed run: a dump slows a compile)


class EventType(StrEnum):
    """The `type` of an event on the protocol (`xlagui.core.protocol.events`)."""

    STARTED = "started"
    BATCH = "batch"
    EPOCH = "epoch"
    WARMUP = "warmup"
    BLOCK = "block"
    COMPILED = "compiled"  # a step function compiled (again), with its cost and reason
    EXPLAINED = "explained"  # an inspecting worker's why: its profile and parity steps
    FINISHED = "finished"
    CANCELLED = "cancelled"
    ERROR = "error"
    MODEL = "model"
    DEVICES = "devices"  # the device probe's answer
    LIMITS = "limits"  # the peak probe's answer
    TEXT_WRITTEN = "text-written"  # the TensorBoard text writer's answer


class Command(StrEnum):
    """What the parent asks a worker to do next (`WorkerCommand.cmd`, one JSON line on its
    stdin)."""

    WARMUP = "warmup"  # time the first step and a few steady ones
    BLOCK = "block"  # run a block of steps, timed
    FINISH = "finish"  # catch up untimed, evaluate, report the summary and exit
    CANCEL = "cancel"  # stop at the next step


class StopReason(StrEnum):
    """How an interleaved measurement ended (`InterleavedSummary.stopped_by`; "" while it
    runs, or in a comparison that measured nothing)."""

    TARGET = "target"  # every interval reached the precision asked for
    BUDGET = "budget"  # the measuring time was spent
    STOPPED = "stopped"  # by the user
    ERROR = "error"  # a worker failed


class Severity(StrEnum):
    """How much a dataset scan's problem matters (`xlagui.core.data.scan.model.Problem`)."""

    ERROR = "error"  # training is refused until it is fixed
    WARNING = "warning"
    INFO = "info"
