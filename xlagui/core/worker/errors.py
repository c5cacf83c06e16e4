"""A worker's exception as its `ErrorEvent`: the message in one line (the exception's own words),
and the kind of failure with the facts its advice needs (`present/errors.py` words it)."""

from __future__ import annotations

import traceback

from xlagui.core.model.files import ModelFileError
from xlagui.core.protocol.arms import Arm
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ErrorEvent, Fact
from xlagui.core.protocol.failures import Failure, run_sizes
from xlagui.core.worker.flags import UnknownXlaFlag


def error_message(exc: BaseException) -> str:
    """One line a person can read; TensorFlow's first line is often just "Graph execution
    error:", with the cause further down. Its own words, but for "out of memory: " before
    TensorFlow's allocation line: the message travels as it is (comparison.json, and the one
    line of a failed run every version shows), where the kind's advice may not be said."""
    text = str(exc)
    for line in text.splitlines():
        if "OOM when allocating" in line:
            return "out of memory: " + line.strip()[:300]
    for line in text.splitlines():
        line = line.strip()
        if line and line.rstrip(":") not in ("Graph execution error", "Detected at node"):
            return line[:500]
    return type(exc).__name__


def failure(exc: BaseException, config: RunConfig,
            arm: Arm | None = None) -> tuple[Failure, dict[str, Fact]]:
    """What kind of failure `exc` is, and the facts its advice names (`arm`: the run's)."""
    name = type(exc).__name__
    text = str(exc)
    if isinstance(exc, UnknownXlaFlag):
        return Failure.UNKNOWN_XLA_FLAG, {"flag": exc.flag, "variable": exc.variable}
    if isinstance(exc, ModelFileError):
        return Failure.MODEL_FILE, exc.event_facts
    if (
        name == "ResourceExhaustedError"
        or isinstance(exc, MemoryError)
        or "OOM" in text
        or "bad_alloc" in text
    ):
        return Failure.OUT_OF_MEMORY, run_sizes(config, arm)
    if "XLA" in text or "xla" in name.lower() or "jit" in text.lower():
        return Failure.XLA_FAILED, {}
    if "GPU" in text or "CUDA" in text:
        return Failure.GPU_UNUSABLE, {}
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return Failure.UNREADABLE_IMAGE, {}
    return Failure.SEE_LOG, {}


def error_event(exc: BaseException, config: RunConfig, arm: Arm | None = None) -> ErrorEvent:
    """The event a run that raised `exc` ends with (called inside its `except`; `arm`: the
    run's)."""
    kind, facts = failure(exc, config, arm)
    return ErrorEvent(
        error_type=type(exc).__name__,
        message=error_message(exc),
        kind=kind.value,
        facts=facts,
        details=traceback.format_exc(),
    )
