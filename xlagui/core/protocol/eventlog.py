"""What a run's recorded events say (`EventLog`), mixed into the records that keep them."""

from __future__ import annotations

from xlagui.core.protocol.compiles import Compilation
from xlagui.core.protocol.events import (
    CompiledEvent,
    ErrorEvent,
    Event,
    ExplainedEvent,
    FinishedEvent,
    RunSummary,
    StartedEvent,
)


class EventLog:
    """What a run's recorded events say: its `started`, its summary, its error. Mixed into the
    run records that keep an `events` list (`runner.RunResult`, `record.RunEntry`)."""

    events: list[Event]

    @property
    def started(self) -> StartedEvent | None:
        return next((e for e in self.events if isinstance(e, StartedEvent)), None)

    @property
    def summary(self) -> RunSummary | None:
        fin = next((e for e in self.events if isinstance(e, FinishedEvent)), None)
        return fin.summary if fin is not None else None

    @property
    def error(self) -> ErrorEvent | None:
        return next((e for e in self.events if isinstance(e, ErrorEvent)), None)

    @property
    def explained(self) -> ExplainedEvent | None:
        return next((e for e in self.events if isinstance(e, ExplainedEvent)), None)

    @property
    def compilations(self) -> list[Compilation]:
        """Every compilation the run reported, in order (none in a stream from before)."""
        return [e.compilation for e in self.events if isinstance(e, CompiledEvent)]
