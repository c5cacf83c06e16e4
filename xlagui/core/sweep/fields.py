"""A sweep's axes as a person types them in the window's fields: comma lists, one field per
kind of axis, and the runtime settings as `name=values; name=values`. The settings a sweep may
vary each have a field of their own, named after the setting (`plan.SETTING_AXES`, from the
settings table).

The CLI takes the same lists through its options (`--batch 16,128 --set threads=1,2`); this
turns a field's text into the `Axis` values the planner takes, refusing what cannot be one with
a `ConfigError` that says what is wrong with which value. An empty field is no axis.
"""

from __future__ import annotations

from collections.abc import Sequence

from xlagui.core.model.sources import parse_model
from xlagui.core.protocol import levers
from xlagui.core.protocol.arms import parse_arms
from xlagui.core.protocol.config import ConfigError
from xlagui.core.sweep.plan import ARMS, LEVER_PREFIX, MODEL, SETTING_AXES, Axis

# The window's fields, by the kind of axis each holds: one per setting a sweep may vary (its
# name), then these.
MODEL_FIELD, ARMS_FIELD, LEVERS = "model", "arms", "levers"
KINDS = (*SETTING_AXES, MODEL_FIELD, ARMS_FIELD, LEVERS)
_AXIS_OF = {**{name: name for name in SETTING_AXES}, MODEL_FIELD: MODEL, ARMS_FIELD: ARMS}


def _items(text: str, sep: str = ",") -> list[str]:
    return [p.strip() for p in text.split(sep) if p.strip()]


def _whole(value: str) -> str:
    try:
        number = int(value, 10)
    except ValueError:
        raise ConfigError(f"{value!r} is not a whole number") from None
    if number < 1:
        raise ConfigError(f"{value!r} is not a positive whole number")
    return str(number)


def parse(kind: str, text: str) -> list[Axis]:
    """The axes the field of `kind` holds (none when empty)."""
    if not text.strip():
        return []
    if kind in SETTING_AXES:
        return [Axis(kind, tuple(_whole(v) for v in _items(text)))]
    if kind == MODEL_FIELD:
        for value in _items(text):
            parse_model(value)  # a name it does not know, a file that is not there
        return [Axis(MODEL, tuple(_items(text)))]
    if kind == ARMS_FIELD:
        lists = [",".join(parse_arms([one])) for one in _items(text, ";")]
        if any(not one for one in lists):
            raise ConfigError("an arm list measures nothing but the baseline")
        return [Axis(ARMS, tuple(lists))]
    if kind == LEVERS:
        return [_lever_axis(part) for part in _items(text, ";")]
    raise ConfigError(f"no sweep field is called {kind!r}")


def _lever_axis(part: str) -> Axis:
    name, sep, values = part.partition("=")
    name = name.strip().lower()
    if not sep or not name or not _items(values):
        raise ConfigError(f"{part!r} is not name=values (for example threads=1,2)")
    known = [one.name for one in levers.registered()]
    if name not in known:
        raise ConfigError(f"no runtime setting is called {name!r}; the settings are "
                          f"{', '.join(known)}")
    return Axis(LEVER_PREFIX + name, tuple(_items(values)))


def texts(axes: Sequence[Axis]) -> dict[str, str]:
    """The fields' texts that give back `axes` (a reopened sweep fills the form with them)."""
    out: dict[str, str] = {}
    lever_parts = []
    for axis in axes:
        if axis.name.startswith(LEVER_PREFIX):
            lever_parts.append(f"{axis.name[len(LEVER_PREFIX):]}={','.join(axis.values)}")
            continue
        kind = next((k for k, name in _AXIS_OF.items() if name == axis.name), None)
        if kind is not None:
            sep = "; " if kind == ARMS_FIELD else ", "
            out[kind] = sep.join(axis.values)
    if lever_parts:
        out[LEVERS] = "; ".join(lever_parts)
    return out
