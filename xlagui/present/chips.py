"""The states a run's chip shows (`ChipState`): what the window's theme colours, kept apart
from the run's words (`run_status`) so the theme loads without them (the first screen needs the
colours, not the statistics behind the words)."""

from __future__ import annotations

from xlagui.core.protocol.identity import RunStatus, StrEnum


class ChipState(StrEnum):
    """The state a column's chip shows, which picks its colour (`xlagui.ui.shared.theme.
    STATUS_COLORS`): a run's status (`RunStatus`, whose words it shares), or a step of a
    live run the record does not keep (starting, compiling, stopping), or no run yet (idle)."""

    IDLE = "idle"  # no comparison yet
    QUEUED = RunStatus.QUEUED.value
    NOT_RUN = RunStatus.NOT_RUN.value
    STARTING = "starting"  # the worker and TensorFlow are starting
    COMPILING = "compiling"  # tracing, compiling, warming up: no step timed yet
    RUNNING = RunStatus.RUNNING.value
    STOPPING = "stopping"  # Stop was pressed; the run has not ended yet
    FINISHED = RunStatus.FINISHED.value
    CANCELLED = RunStatus.CANCELLED.value
    INTERRUPTED = RunStatus.INTERRUPTED.value
    ERROR = RunStatus.ERROR.value


# The chips of a run under way: what Stop turns into "Stopping…".
LIVE_STATES = frozenset({ChipState.STARTING, ChipState.COMPILING, ChipState.RUNNING})
