"""The parent's account of a child that ended without its last word (`child_died`): for a run,
its arm and sizes (`died_event`), the same words for a training and a measuring worker.

The kind and its facts are what `xlagui.present.errors` words as advice; the `message`, what
happened in one line, is worded here: it travels with the run's error event as it is (saved in
comparison.json, and the one line of a failed run every version shows).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from xlagui.core.measure.jobs import ChildJob, WorkerJob, run_words
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure, run_sizes
from xlagui.core.protocol.spec import RunSpec

LOG_TAIL_CHARS = 4000

# What TensorFlow, the C++ runtime and Python print when an allocation fails.
OOM_MARKERS = (
    "bad_alloc",
    "ResourceExhausted",
    "OOM when allocating",
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
)


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - chars))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def died_event(returncode: int, log_path: Path, spec: RunSpec) -> ErrorEvent:
    """An error event for a worker that ended without saying why.

    A worker that dies of out-of-memory (a C++ `bad_alloc`, the kernel's OOM killer) cannot send
    its own error event, so the parent, which knows the run's spec, names the run and the sizes
    to change (`failures.run_sizes`): the same for a training and a measuring worker.
    """
    tail = log_tail(log_path)
    run = run_words(spec)
    sizes = run_sizes(spec.config, spec.arm)
    if any(marker in tail for marker in OOM_MARKERS):
        return ErrorEvent(
            error_type="OutOfMemory",
            message=f"the worker ran out of memory ({run})",
            kind=Failure.DIED_OUT_OF_MEMORY.value,
            facts=sizes,
            details=tail,
        )
    if returncode < 0:
        message = (f"the worker process was killed ({signal_name(returncode)}) before it "
                   f"finished ({run})")
        kind, facts = Failure.KILLED, sizes
    else:
        message = f"the worker process exited with code {returncode} without a result ({run})"
        kind, facts = Failure.EXITED, {}
    return ErrorEvent(error_type="WorkerDied", message=message, kind=kind.value, facts=facts,
                      details=tail)


def signal_name(returncode: int) -> str:
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def child_died(returncode: int, log_path: Path, job: ChildJob) -> ErrorEvent:
    """`died_event` for a run; for a helper child (a probe, the check), what it ended with: its
    caller words its own failure from it."""
    if isinstance(job, WorkerJob):
        return died_event(returncode, log_path, job.spec)
    how = (f"was killed ({signal_name(returncode)})" if returncode < 0
           else f"exited with code {returncode}")
    return ErrorEvent(error_type="WorkerDied", message=f"{job.describe()} {how} without an answer",
                      kind=Failure.EXITED.value, details=log_tail(log_path))
