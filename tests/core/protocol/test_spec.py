"""The run spec a parent hands its worker (`spec.json`): it round-trips, and a bad one names
the field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import ProtocolError
from xlagui.core.protocol.spec import RunSpec, Sample


def spec(tmp_path: Path) -> RunSpec:
    return RunSpec(
        run_id="r1",
        variant="baseline",
        xla_mode=XlaMode.OFF,
        config=RunConfig(epochs=3, image_size=48, batch_size=4),
        class_names=["a", "b"],
        train=[Sample("x.jpg", 0, "JPEG", "RGB")],
        val=[],
        run_dir=tmp_path / "run",
    )


def test_the_run_spec_round_trips_through_spec_json(tmp_path: Path) -> None:
    s = RunSpec(
        run_id="r1",
        variant="xla",
        xla_mode=XlaMode.JIT,
        config=RunConfig(epochs=3, image_size=48, arms=("jit+bf16",), extra={"fake": {"a": 1}}),
        class_names=["a", "b"],
        train=[Sample("x.jpg", 0, "JPEG", "RGB"), Sample("y.png", 1, "PNG", "L")],
        val=[Sample("z.gif", 1, "GIF", "P")],
        run_dir=tmp_path / "run",
        mode="measure",
        precision="mixed_bfloat16",
        tensorboard_dir=str(tmp_path / "tb"),
    )
    assert RunSpec.from_json(s.to_json()) == s
    assert json.loads(s.to_json())["train"][0] == ["x.jpg", 0, "JPEG", "RGB"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"xla_mode": "warp"}, "xla_mode"),
        ({"run_dir": 3}, "run_dir"),
        ({"train": [["x.jpg", "zero", "JPEG", "RGB"]]}, "train[0].label"),
        ({"val": ["x.jpg"]}, "val[0]"),
        ({"config": {"batch_size": "big"}}, "config.batch_size"),
        ({"class_names": ["a", 2]}, "class_names[1]"),
    ],
)
def test_a_bad_run_spec_names_the_field(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    data = {**json.loads(spec(tmp_path).to_json()), **change}
    with pytest.raises(ProtocolError, match=re.escape(f"field '{field}'")):
        RunSpec.from_json(json.dumps(data))


def test_a_run_spec_without_a_field_it_needs_says_which() -> None:
    with pytest.raises(ProtocolError, match=r"run spec lacks .*run_dir"):
        RunSpec.from_json('{"run_id":"r","variant":"baseline","xla_mode":"off","config":{},'
                          '"class_names":[],"train":[],"val":[]}')
