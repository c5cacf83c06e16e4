"""A failed run's advice in words: what to do about an `ErrorEvent`, from its kind and facts
(`xlagui.core.protocol.failures`). The CLI, the window's dialogs and tooltips and the history all
show `error_hint(event)`; an event saved before kinds carries its advice as text, shown as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from xlagui.core.protocol.failures import Failure

if TYPE_CHECKING:
    from xlagui.core.protocol.events import ErrorEvent, Fact

Facts = Mapping[str, "Fact"]


def _sizes(facts: Facts) -> str:
    return (
        f"{facts.get('model')}, batch size {facts.get('batch_size')} and image size "
        f"{facts.get('image_size')}"
    )


def _lean(facts: Facts) -> str:
    """For an arm XLA compiles: the same arm with XLA's memory-saving schedule, as a clause."""
    lean = facts.get("lean_arm")
    if not lean:
        return ""
    return (f", or measure it as {lean} (XLA orders the step to hold the least memory instead "
            "of running independent work at once)")


def _out_of_memory(facts: Facts) -> str:
    return (
        f"The run ran out of memory training {facts.get('model')} with batch size "
        f"{facts.get('batch_size')} and image size {facts.get('image_size')}. Try a smaller "
        f"batch size or image size{_lean(facts)}."
    )


def _died_out_of_memory(facts: Facts) -> str:
    return (
        f"The images, the batch and the model did not fit in memory with {_sizes(facts)}: try "
        f"a smaller batch size or image size (memory grows with batch × image size²){_lean(facts)}."
    )


def _killed(facts: Facts) -> str:
    return (
        "If nobody killed it on purpose, the system probably ran out of memory and the "
        f"kernel stopped it with {_sizes(facts)}: try a smaller batch size or image size"
        f"{_lean(facts)}."
    )


def _unknown_xla_flag(facts: Facts) -> str:
    flag = str(facts.get("flag") or "")
    name = flag.lstrip("-").split("=", 1)[0]
    return (
        f"The installed XLA does not know the flag {name} ({facts.get('variable')}), so the "
        "run was refused before it started. Check its spelling, or whether this TensorFlow's "
        "XLA has it; the flags the window offers by name are known to it."
    )


HINTS: dict[Failure, Callable[[Facts], str]] = {
    Failure.UNKNOWN_XLA_FLAG: _unknown_xla_flag,
    Failure.OUT_OF_MEMORY: _out_of_memory,
    Failure.XLA_FAILED: lambda _: (
        "XLA failed to compile this model on this device. Compare with the other XLA mode "
        "(jit or autocluster) or report the TensorFlow version and the run's log."
    ),
    Failure.GPU_UNUSABLE: lambda _: (
        "The GPU could not be used. Check that a CUDA build of TensorFlow is installed "
        "(pip install 'tensorflow[and-cuda]') and that the driver works (nvidia-smi)."
    ),
    Failure.UNREADABLE_IMAGE: lambda _: (
        "An image could not be read: check that the dataset folder is still there."
    ),
    Failure.SEE_LOG: lambda _: "See the run's log for details.",
    Failure.DIED_OUT_OF_MEMORY: _died_out_of_memory,
    Failure.KILLED: _killed,
    Failure.EXITED: lambda _: "See the run's log for what happened.",
    Failure.CONNECTION_LOST: lambda _: (
        "What was measured before is kept. Check the network and that the host is up, then "
        "run the comparison again."
    ),
    Failure.PROTOCOL_MISMATCH: lambda _: "The worker and the app do not speak the same protocol.",
    # Its line names the file, the line and the fix (`present/model_files.py`).
    Failure.MODEL_FILE: lambda _: "Fix the model file as its line says, or choose a built-in "
    "model.",
    Failure.NOT_AN_EVENT: lambda _: (
        "The worker's events did not decode; events.jsonl has what came before, the run's log "
        "the rest. Reinstall xlagui if the worker comes from another release."
    ),
}


def error_hint(event: ErrorEvent) -> str:
    """What to do about `event`, in words ("" when there is nothing to say)."""
    try:
        words = HINTS[Failure(event.kind)]
    except ValueError:  # no kind (a stream from before kinds), or one this app does not know
        return event.hint
    return words(event.facts)
