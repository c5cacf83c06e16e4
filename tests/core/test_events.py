from __future__ import annotations

import json

import pytest

from tests.helpers.streams import run_events
from xlagui.core.events import (
    EVENT_TYPES,
    PROTOCOL_VERSION,
    BatchEvent,
    BlockEvent,
    EpochEvent,
    ProtocolError,
    ProtocolMismatch,
    StartedEvent,
    WorkerCommand,
    check_protocol,
    parse_event,
    read_events,
)


def test_every_event_round_trips_through_one_json_line() -> None:
    events = run_events(variant="xla", xla_mode="jit")
    lines = [e.to_json() for e in events]
    assert all("\n" not in line for line in lines)
    assert list(read_events(lines)) == events


def test_schema_has_the_eight_types_with_time() -> None:
    assert set(EVENT_TYPES) == {
        "started",
        "batch",
        "epoch",
        "warmup",
        "block",
        "finished",
        "cancelled",
        "error",
    }
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


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"type":"block","t":1.0,"seq":"3"}', "seq"),
        ('{"type":"block","t":1.0,"seconds":true}', "seconds"),
        ('{"type":"epoch","t":1.0,"val_loss":"x"}', "val_loss"),
        ('{"type":"warmup","t":1.0,"warm_step_seconds":[0.1,"slow"]}', "warm_step_seconds"),
        ('{"type":"started","t":1.0,"versions":{"tf":2}}', "versions"),
        ('{"type":"batch","t":"soon"}', "t"),
    ],
)
def test_decoding_names_the_field_of_the_wrong_type(line: str, field: str) -> None:
    with pytest.raises(ProtocolError, match=f"field '{field}'"):
        parse_event(line)


def test_optional_and_integer_floats_decode() -> None:
    ev = parse_event('{"type":"block","t":1,"seq":2,"steps":4,"seconds":3,"loss":null}')
    assert ev == BlockEvent(t=1, seq=2, steps=4, seconds=3, loss=None)


def test_protocol_version_is_checked() -> None:
    check_protocol(StartedEvent(protocol=PROTOCOL_VERSION))
    with pytest.raises(ProtocolMismatch, match="protocol version 1"):
        check_protocol(StartedEvent(protocol=1))


def test_worker_commands_round_trip_and_refuse_bad_fields() -> None:
    for cmd in (WorkerCommand("block", steps=4, seq=7), WorkerCommand("finish")):
        assert WorkerCommand.from_json(cmd.to_json()) == cmd
    assert WorkerCommand.from_json("cancel\n") == WorkerCommand("cancel")
    for bad, match in (
        ('{"cmd":"explode"}', "unknown worker command"),
        ('{"cmd":"block","steps":0}', "at least 1 step"),
        ('{"cmd":"block","steps":"4"}', "'steps'"),
        ('{"cmd":"block","steps":4,"speed":9}', "unknown field"),
        ("[1]", "JSON object"),
    ):
        with pytest.raises(ProtocolError, match=match):
            WorkerCommand.from_json(bad)
