from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers.streams import recorded_events, run_events
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    EVENT_TYPES,
    PROTOCOL_VERSION,
    BatchEvent,
    BlockEvent,
    EpochEvent,
    FinishedEvent,
    ProtocolError,
    ProtocolMismatch,
    RunSummary,
    StartedEvent,
    WorkerCommand,
    check_protocol,
    parse_event,
    read_events,
)
from xlagui.core.xla.evidence import XlaEvidence
from xlagui.core.xla.hlo import XlaReport


def test_every_event_round_trips_through_one_json_line() -> None:
    events = run_events(variant="xla", xla_mode="jit")
    lines = [e.to_json() for e in events]
    assert all("\n" not in line for line in lines)
    assert list(read_events(lines)) == events


def test_schema_has_the_fourteen_types_with_time() -> None:
    assert set(EVENT_TYPES) == {
        "started",
        "batch",
        "epoch",
        "warmup",
        "block",
        "compiled",  # a step function compiled (again)
        "explained",  # an inspecting worker's why (its profile, its parity steps)
        "finished",
        "cancelled",
        "error",
        "model",  # the model check's answer (xlagui.core.model.check)
        "devices",  # the device probe's (`--probe`)
        "limits",  # the peak probe's (`--peak`)
        "text-written",  # the TensorBoard text writer's (`--tensorboard-text`)
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
        ('{"type":"warmup","t":1.0,"warm_step_seconds":[0.1,"slow"]}', "warm_step_seconds[1]"),
        ('{"type":"started","t":1.0,"versions":{"tf":2}}', "versions.tf"),
        ('{"type":"batch","t":"soon"}', "t"),
        ('{"type":"started","t":1.0,"config":{"epochs":"many"}}', "config.epochs"),
        ('{"type":"started","t":1.0,"config":{"xla":"warp"}}', "config.xla"),
        ('{"type":"started","t":1.0,"config":[3]}', "config"),
        ('{"type":"finished","t":1.0,"summary":{"epochs_done":"2"}}', "summary.epochs_done"),
        ('{"type":"finished","t":1.0,"summary":{"epoch_seconds":[1,null]}}',
         "summary.epoch_seconds[1]"),
        ('{"type":"finished","t":1.0,"summary":{"xla_evidence":{"fusions":1.5}}}',
         "summary.xla_evidence.fusions"),
        ('{"type":"finished","t":1.0,"summary":{"xla_did":{"modules":[{"module_id":"1",'
         '"name":"m","file":"f","instructions_after":"many"}]}}}',
         "summary.xla_did.modules[0].instructions_after"),
    ],
)
def test_decoding_names_the_field_of_the_wrong_type(line: str, field: str) -> None:
    with pytest.raises(ProtocolError, match=re.escape(f"field '{field}'")):
        parse_event(line)


def test_a_config_out_of_range_is_refused_naming_the_field() -> None:
    with pytest.raises(ProtocolError, match="field 'config': epochs must be between"):
        parse_event('{"type":"started","t":1.0,"config":{"epochs":0}}')


def test_started_carries_the_run_config_typed() -> None:
    started = next(e for e in recorded_events("jit") if isinstance(e, StartedEvent))
    assert isinstance(started.config, RunConfig)
    assert started.config.xla is XlaMode.JIT and started.config.image_size == 48
    again = parse_event(started.to_json())
    assert again == started and json.loads(started.to_json())["config"]["xla"] == "jit"


def test_the_summary_is_typed_and_round_trips() -> None:
    finished = next(e for e in recorded_events("jit") if isinstance(e, FinishedEvent))
    s = finished.summary
    assert isinstance(s, RunSummary) and s.mode == "train" and s.epochs_done == 3
    assert isinstance(s.xla_evidence, XlaEvidence) and s.xla_evidence.compiled
    assert isinstance(s.xla_did, XlaReport) and s.xla_did.modules[0].heavy_ops
    assert isinstance(s.epoch_seconds, tuple) and len(s.epoch_seconds) == 3
    assert parse_event(finished.to_json()) == finished
    assert RunSummary.from_dict(s.to_dict()) == s


def test_a_summary_from_an_earlier_version_loads_with_defaults() -> None:
    """Comparisons saved before the summary was typed hold it as a plain object with only the
    keys of its day (no mode, no xla_did, a measuring one without accuracy): they still load."""
    old = RunSummary.from_dict(
        {"epochs_done": 2, "total_seconds": 3, "epoch_seconds": [2, 1],
         "xla_evidence": {"hlo_modules": 2, "fusions": 9}, "future_key": [1]}
    )
    assert old.mode == "train" and old.total_seconds == 3 and old.epoch_seconds == (2, 1)
    assert old.xla_did is None and old.final_val_accuracy is None and old.peak_rss_bytes is None
    assert old.xla_evidence is not None and old.xla_evidence.compiled  # counted modules say so
    measured = RunSummary.from_dict({"mode": "measure", "steps_done": 40})
    assert measured.steps_done == 40 and measured.nonfinite_losses == 0
    assert measured.xla_evidence is None
    assert RunSummary.from_dict({}) == RunSummary()


def test_a_stream_of_protocol_3_still_replays() -> None:
    # A real worker's stream recorded before the summary was typed (kept when the recordings
    # were made again for per-image validation results).
    path = Path(__file__).resolve().parents[2] / "helpers" / "recorded" / "protocol3-baseline.jsonl"
    with path.open(encoding="utf-8") as fh:
        events = list(read_events(fh))
    started = next(e for e in events if isinstance(e, StartedEvent))
    assert started.protocol == 3
    with pytest.raises(ProtocolMismatch):
        check_protocol(started)  # a live worker of that release would be refused
    finished = next(e for e in events if isinstance(e, FinishedEvent))
    assert finished.summary.epochs_done == 3 and finished.summary.val_correct == ""


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
    assert WorkerCommand.from_json(WorkerCommand("cancel").to_json() + "\n") == WorkerCommand(
        "cancel"
    )
    for bad, match in (
        ("cancel", "not a worker command"),  # one format: the bare word is not a command
        ('{"cmd":"explode"}', "unknown worker command"),
        ('{"cmd":"block","steps":0}', "at least 1 step"),
        ('{"cmd":"block","steps":"4"}', "'steps'"),
        ('{"cmd":"block","steps":4,"speed":9}', "unknown field"),
        ("[1]", "JSON object"),
    ):
        with pytest.raises(ProtocolError, match=match):
            WorkerCommand.from_json(bad)


def test_the_short_childrens_answers_round_trip() -> None:
    from xlagui.core.protocol.events import DevicesEvent, LimitsEvent, TextWrittenEvent
    from xlagui.core.protocol.probes import DeviceInfo, LayerCeiling

    ceiling = LayerCeiling(["conv2d_1", "conv2d"], 48, 2, 1e9, 0.05, 2e10)
    answers = [
        DevicesEvent(t=0.5, protocol=PROTOCOL_VERSION,
                     devices=[DeviceInfo("cpu", "x86_64", "CPU"),
                              DeviceInfo("gpu:0", "NVIDIA H200", "GPU", 150 * 2**30)]),
        LimitsEvent(t=3.0, protocol=PROTOCOL_VERSION, device="cpu", matmul_size=256,
                    matmul_peaks={"float32": 1e11}, ceiling=ceiling),
        TextWrittenEvent(t=1.0, protocol=PROTOCOL_VERSION, target="/out/tensorboard/comparison"),
    ]
    assert [parse_event(e.to_json()) for e in answers] == answers
    bad = json.loads(answers[0].to_json())
    bad["devices"][1]["memory_bytes"] = "lots"
    with pytest.raises(ProtocolError, match="memory_bytes"):
        parse_event(json.dumps(bad))
