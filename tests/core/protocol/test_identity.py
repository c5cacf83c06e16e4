"""Typed identities: each is its string in JSON and in words, and a saved string reads back as
the member; the records that store them take strings and keep enums."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from xlagui.core.protocol.arms import Precision
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import EVENT_TYPES, TERMINAL_TYPES
from xlagui.core.protocol.identity import (
    DumpChoice,
    EventType,
    Role,
    RunStatus,
    StrEnum310,
    WorkerMode,
    as_variant,
    role_of,
)
from xlagui.core.protocol.record import RUN_STATUSES, RunEntry
from xlagui.core.protocol.spec import RunSpec


class Colour(StrEnum310):
    RED = "red"


def test_the_python_310_strenum_prints_and_formats_as_its_value() -> None:
    assert str(Colour.RED) == "red" and f"{Colour.RED}" == "red" and f"{Colour.RED:>5}" == "  red"
    assert Colour.RED == "red" and json.dumps({"c": Colour.RED}) == '{"c": "red"}'


@pytest.mark.parametrize("enum", [RunStatus, Role, WorkerMode, DumpChoice, EventType, XlaMode,
                                  Precision])
def test_every_identity_is_its_string(enum: type[StrEnum310]) -> None:
    for member in enum:
        assert member == member.value and str(member) == member.value == f"{member}"
        assert json.loads(json.dumps(member)) == member.value


def test_the_statuses_keep_their_words_and_order() -> None:
    assert RUN_STATUSES == ("queued", "running", "finished", "cancelled", "error",
                            "interrupted", "not run")


def test_roles_of_variants() -> None:
    assert [role_of(v) for v in ("baseline", "xla", "check", "bf16", "jit+fp16")] == [
        Role.BASELINE, Role.XLA, Role.CHECK, Role.ARM, Role.ARM]
    assert as_variant("xla") is Role.XLA and as_variant("bf16") == "bf16"


def test_the_event_types_are_the_enum() -> None:
    assert set(EVENT_TYPES) == set(EventType)
    assert TERMINAL_TYPES == {"finished", "cancelled", "error"}


def test_a_run_entry_from_strings_keeps_enums_and_saves_strings() -> None:
    entry = RunEntry("m3-bf16", "bf16", 1, "off", "finished", [], "mixed_bfloat16")  # type: ignore[arg-type]
    assert entry.status is RunStatus.FINISHED and entry.xla_mode is XlaMode.OFF
    assert entry.precision is Precision.BF16 and entry.role is Role.ARM
    saved = entry.to_dict()
    assert saved["status"] == "finished" and type(saved["status"]) is str
    assert type(saved["xla_mode"]) is str and type(saved["precision"]) is str
    again = RunEntry.from_dict(json.loads(json.dumps(saved)))
    assert again == entry and again.status is RunStatus.FINISHED


def test_an_old_run_entry_without_precision_or_status_still_opens() -> None:
    old = {"run_id": "01-xla-r1", "variant": "xla", "repeat": 1, "xla_mode": "jit",
           "events": []}
    entry = RunEntry.from_dict(old)
    assert entry.status is RunStatus.FINISHED and entry.precision is Precision.FLOAT32
    assert entry.variant is Role.XLA and entry.arm.name == "jit"
    with pytest.raises(ValueError, match="status 'done' is not one of queued, running"):
        RunEntry.from_dict({**old, "status": "done"})


def test_a_run_spec_types_its_identities_and_writes_strings(tmp_path: Path) -> None:
    spec = RunSpec("i-xla", "xla", XlaMode.JIT, RunConfig(epochs=3, image_size=48), ["a", "b"],
                   [], [], tmp_path, mode="inspect", precision="mixed_float16",  # type: ignore[arg-type]
                   xla_dump="nometa")  # type: ignore[arg-type]
    assert spec.mode is WorkerMode.INSPECT and spec.precision is Precision.FP16
    assert spec.xla_dump is DumpChoice.NOMETA and spec.variant is Role.XLA
    data = json.loads(spec.to_json())
    assert (data["mode"], data["precision"], data["xla_dump"]) == (
        "inspect", "mixed_float16", "nometa")
    again = RunSpec.from_json(spec.to_json())
    assert again == spec and again.mode is WorkerMode.INSPECT
