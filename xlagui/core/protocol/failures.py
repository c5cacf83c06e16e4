"""What went wrong with a run, as data: the kinds of failure an `ErrorEvent` carries
(`ErrorEvent.kind`) and the facts each kind's words need (`ErrorEvent.facts`).

The worker (`xlagui.core.worker.errors`) and the parent (`xlagui.core.measure.worker_process`, a
transport's `died`) name the kind; `xlagui.present.errors` words it. No sentence travels.
"""

from __future__ import annotations

from xlagui.core.protocol.arms import Arm, parse_arm
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import Fact
from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.settings import ConfigError


class Failure(StrEnum):
    """A kind of failure, with what to do about it (`present/errors.py` says it)."""

    # Said by the worker, from its exception.
    OUT_OF_MEMORY = "out_of_memory"  # facts: `run_sizes`
    XLA_FAILED = "xla_failed"
    GPU_UNUSABLE = "gpu_unusable"
    UNREADABLE_IMAGE = "unreadable_image"
    SEE_LOG = "see_log"  # nothing more to say than the run's log
    UNKNOWN_XLA_FLAG = "unknown_xla_flag"  # facts: "flag" (the first refused), "variable"
    # A model file it cannot train: facts `ModelFileError.event_facts` (the problem, the file,
    # the line and what the problem names); `xlagui.present.model_files` words it.
    MODEL_FILE = "model_file"
    # Said by the parent, for a worker that ended without its last word.
    DIED_OUT_OF_MEMORY = "died_out_of_memory"  # facts: `run_sizes`
    KILLED = "killed"  # by a signal; facts: `run_sizes`
    EXITED = "exited"  # with a status but without a result
    CONNECTION_LOST = "connection_lost"  # the transport's connection to the host went
    # Said by the parent, for a stream it refused.
    PROTOCOL_MISMATCH = "protocol_mismatch"
    NOT_AN_EVENT = "not_an_event"

    def __str__(self) -> str:
        return str(self.value)


# The named XLA flag that orders a compiled step to hold the least memory
# (`xla_flags.NAMED`): a memory failure of an arm that XLA compiles names the arm with it.
MEMORY_SCHEDULE_PART = "memsched"


def run_sizes(config: RunConfig, arm: Arm | None = None) -> dict[str, Fact]:
    """The sizes a memory failure's words name: the model, the batch size, the image size;
    for an `arm` that XLA compiles, "lean_arm": the same arm with XLA's memory-saving schedule
    (`jax+memsched`), unless it has it already."""
    facts: dict[str, Fact] = {
        "model": config.model.label,
        "batch_size": config.batch_size,
        "image_size": config.image_size,
    }
    if arm is not None and arm.compiles_with_xla:
        try:
            facts["lean_arm"] = parse_arm(f"{arm.name}+{MEMORY_SCHEDULE_PART}").name
        except ConfigError:  # the arm sets that flag already, either way: nothing to add
            pass
    return facts
