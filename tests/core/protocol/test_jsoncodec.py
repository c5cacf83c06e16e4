"""JSON to checked dataclasses and back (`xlagui.core.protocol.jsoncodec`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from xlagui.core.protocol.jsoncodec import ProtocolError, decode, plain


class Colour(enum.Enum):
    RED = "red"


@dataclass
class Inner:
    n: int
    xs: list[float] = field(default_factory=list)


@dataclass
class Outer:
    name: str
    inner: Inner
    colour: Colour = Colour.RED
    where: Path | None = None
    ratio: float = 1.0


def test_a_nested_object_round_trips() -> None:
    obj = Outer("a", Inner(2, [0.5, 1.0]), where=Path("/tmp/x"), ratio=0.25)
    data = plain(obj)
    assert data == {"name": "a", "inner": {"n": 2, "xs": [0.5, 1.0]}, "colour": "red",
                    "where": "/tmp/x", "ratio": 0.25}
    assert decode(Outer, data, "outer") == obj


def test_the_bad_field_is_named_by_its_path() -> None:
    with pytest.raises(ProtocolError, match=r"outer: field 'inner.xs\[1\]' should be float"):
        decode(Outer, {"name": "a", "inner": {"n": 1, "xs": [1.0, "x"]}}, "outer")
    with pytest.raises(ProtocolError, match="outer lacks inner"):
        decode(Outer, {"name": "a"}, "outer")
    with pytest.raises(ProtocolError, match="field 'colour'"):
        decode(Outer, {"name": "a", "inner": {"n": 1}, "colour": "blue"}, "outer")


def test_booleans_are_not_numbers_and_integers_are_floats() -> None:
    with pytest.raises(ProtocolError, match=r"field 'inner\.n'"):
        decode(Outer, {"name": "a", "inner": {"n": True}}, "outer")
    assert decode(Outer, {"name": "a", "inner": {"n": 1}, "ratio": 2}, "outer").ratio == 2


def test_non_finite_floats_become_null() -> None:
    assert plain([float("nan"), float("inf"), 1.5]) == [None, None, 1.5]
