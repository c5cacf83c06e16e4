"""One run as a comparison records it: which arm, where it stands or how it ended, its events.

`RunEntry` is what `comparison.json` stores per run, and what the statistics (`analysis/`) and
the report (`results/`) read; it lives here, under both, so that neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xlagui.core.protocol.arms import Arm, Precision
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import Event, EventLog, event_from_dict

# A run's status: where it stands, or how it ended.
QUEUED = "queued"  # not started yet (or, in a one-side run, the side not asked for)
RUNNING = "running"
FINISHED = "finished"
CANCELLED = "cancelled"  # stopped by the user (Stop), or not started after a Stop
ERROR = "error"
# The app closed during this run (window closed, Ctrl+C, SIGTERM): its finished epochs or
# pairs are kept in its events.
INTERRUPTED = "interrupted"
NOT_RUN = "not run"  # the app closed before this run started
RUN_STATUSES = (QUEUED, RUNNING, FINISHED, CANCELLED, ERROR, INTERRUPTED, NOT_RUN)


@dataclass
class RunEntry(EventLog):
    run_id: str
    variant: str
    repeat: int
    xla_mode: str
    status: str = QUEUED  # one of RUN_STATUSES
    events: list[Event] = field(default_factory=list)
    precision: str = "float32"  # the arm's Keras dtype policy

    @property
    def arm(self) -> Arm:
        return Arm(XlaMode(self.xla_mode), Precision(self.precision))

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "variant": self.variant,
            "repeat": self.repeat,
            "xla_mode": self.xla_mode,
            "precision": self.precision,
            "status": self.status,
            "events": [e.to_dict() for e in self.events],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunEntry:
        status = d.get("status", FINISHED)
        if status not in RUN_STATUSES:
            raise ValueError(
                f"run {d.get('run_id')!r}: status {status!r} is not one of "
                f"{', '.join(RUN_STATUSES)}"
            )
        return cls(
            run_id=d["run_id"],
            variant=d["variant"],
            repeat=int(d["repeat"]),
            xla_mode=d["xla_mode"],
            status=status,
            events=[event_from_dict(e) for e in d.get("events", [])],
            precision=d.get("precision", "float32"),
        )
