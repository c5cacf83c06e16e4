from __future__ import annotations

import json

import pytest

from tests.helpers.streams import run_events
from xlagui.core.events import (
    EVENT_TYPES,
    BatchEvent,
    EpochEvent,
    ProtocolError,
    parse_event,
    read_events,
)


def test_every_event_round_trips_through_one_json_line() -> None:
    events = run_events(variant="xla", xla_mode="jit")
    lines = [e.to_json() for e in events]
    assert all("\n" not in line for line in lines)
    assert list(read_events(lines)) == events


def test_schema_has_the_six_types_with_time() -> None:
    assert set(EVENT_TYPES) == {"started", "batch", "epoch", "finished", "cancelled", "error"}
    for line in (e.to_json() for e in run_events()):
        d = json.loads(line)
        assert d["type"] in EVENT_TYPES and isinstance(d["t"], float)


def test_non_finite_numbers_become_null() -> None:
    d = json.loads(BatchEvent(t=1.0, epoch=1, step=1, loss=float("nan")).to_json())
    assert d["loss"] is None


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        '{"type": "nope", "t": 1}',
        '{"type": "epoch"}',
        '{"type":"batch","t":"x"}',
    ],
)
def test_bad_lines_are_protocol_errors(line: str) -> None:
    with pytest.raises(ProtocolError):
        parse_event(line)


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    ev = parse_event('{"type":"epoch","t":2.5,"epoch":3,"future_field":1}')
    assert isinstance(ev, EpochEvent) and ev.epoch == 3 and ev.t == 2.5
