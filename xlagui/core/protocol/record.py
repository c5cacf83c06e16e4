"""One run as a comparison records it: which arm, where it stands or how it ended, its events.

`RunEntry` is what `comparison.json` stores per run, and what the statistics (`analysis/`) and
the report (`results/`) read; it lives here, under both, so that neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xlagui.core.protocol.arms import Arm, Precision, record_arm, record_fields
from xlagui.core.protocol.eventlog import EventLog
from xlagui.core.protocol.events import Event, event_from_dict
from xlagui.core.protocol.identity import EventType, Role, RunStatus, as_variant, role_of
from xlagui.core.protocol.modes import XlaMode

# The statuses by their old names (`RunStatus` is the type): code above `protocol/` still
# imports these; they are the enum's members.
QUEUED = RunStatus.QUEUED
RUNNING = RunStatus.RUNNING
FINISHED = RunStatus.FINISHED
CANCELLED = RunStatus.CANCELLED
ERROR = RunStatus.ERROR
INTERRUPTED = RunStatus.INTERRUPTED
NOT_RUN = RunStatus.NOT_RUN
RUN_STATUSES = tuple(RunStatus)

# How a run's last word leaves it: finished, failed, or cancelled (a stream that ended on any
# other event was cut short).
_ENDED_BY: dict[str, RunStatus] = {
    EventType.FINISHED: RunStatus.FINISHED,
    EventType.ERROR: RunStatus.ERROR,
}


def ended_by(last: Event | None) -> RunStatus:
    """The status of a run whose worker's last event was `last`: `finished` or `error` when
    it said so, `cancelled` otherwise (a stop, or no word at all)."""
    return _ENDED_BY.get(last.type, RunStatus.CANCELLED) if last else RunStatus.CANCELLED


@dataclass
class RunEntry(EventLog):
    """One run of a comparison. `variant` is a `Role` member for the baseline, the XLA side and
    the A/A check's twin, another arm's canonical name otherwise (`role` says which); the
    identities are typed, and strings given for them (older callers, tests) are converted."""

    run_id: str
    variant: str
    repeat: int
    xla_mode: XlaMode
    status: RunStatus = RunStatus.QUEUED
    events: list[Event] = field(default_factory=list)
    precision: Precision = Precision.FLOAT32  # the arm's Keras dtype policy
    # The arm: the value of every lever it changes, by lever name (`Arm.levers`). None (a file
    # from before, or a caller that gives only the fields above): read from `xla_mode` and
    # `precision`, which are kept filled for readers from before (`arms.record_fields`).
    levers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        self.variant = as_variant(self.variant)
        self.status = RunStatus(self.status)
        for name, value in record_fields(record_arm(vars(self), self.levers)).items():
            setattr(self, name, value)

    @classmethod
    def of_arm(cls, run_id: str, variant: str, repeat: int, arm: Arm) -> RunEntry:
        """A queued run of `arm`, every lever's value kept."""
        return cls(run_id=run_id, variant=variant, repeat=repeat, **record_fields(arm))

    @property
    def role(self) -> Role:
        return role_of(self.variant)

    @property
    def arm(self) -> Arm:
        return Arm(**(self.levers or {}))

    def to_dict(self) -> dict[str, Any]:
        d = self._record()
        found = self.compilations
        if found:
            # Derived from the `compiled` events, for readers of the file (a run without them,
            # recorded before they existed, has no key: "not recorded", not "none"); read
            # back from the events.
            d["compilations"] = [c.to_dict() for c in found]
        return d

    def _record(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "variant": str(self.variant),
            "repeat": self.repeat,
            # str(): the value, even where code still assigns a plain string
            "xla_mode": str(self.xla_mode),
            "precision": str(self.precision),
            "levers": dict(self.levers or {}),
            "status": str(self.status),
            "events": [e.to_dict() for e in self.events],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunEntry:
        status = d.get("status", RunStatus.FINISHED)
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
            precision=Precision(d.get("precision") or Precision.FLOAT32),
            levers=_levers(d.get("levers"), d.get("run_id")),
        )


def _levers(saved: object, run_id: object) -> dict[str, str] | None:
    """A run's saved `levers` (None in a file from before), checked to be names and values."""
    if saved is None:
        return None
    if not isinstance(saved, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in saved.items()
    ):
        raise ValueError(f"run {run_id!r}: levers should map lever names to values, got "
                         f"{saved!r}")
    return saved
