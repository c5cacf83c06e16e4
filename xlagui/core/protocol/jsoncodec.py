"""JSON to typed dataclasses and back, every field checked: the decoder the event protocol, the
worker's spec and saved comparisons share.

`decode` turns what `json.loads` gave into a dataclass, checking each field against its
annotation and naming the bad one in a `ProtocolError`; `plain` turns a dataclass (enums, paths,
tuples, NaN) into what `json.dumps` takes.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from pathlib import Path
from typing import Any, TypeAlias, TypeVar, Union

# What json.loads gives and json.dumps takes.
JSONValue: TypeAlias = "bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"

T = TypeVar("T")


class ProtocolError(ValueError):
    """Data that does not fit its dataclass: a line that is not a valid event, a spec or a saved
    comparison with a field of the wrong type."""


def decode(cls: type[T], data: object, where: str, prefix: str = "") -> T:
    """`data` (as json.loads gave it) as a `cls` dataclass, every field's type checked, nested
    dataclasses decoded in turn. A field `data` lacks takes its default (a stream from an earlier
    version); keys `cls` does not know are ignored. Raises `ProtocolError` naming the bad field
    (`where`: what is decoded, in words; `prefix`: the path down to `data`)."""
    if not isinstance(data, dict):
        at = f"field {prefix.rstrip('.')!r}" if prefix else "it"
        raise ProtocolError(f"{where}: {at} should be a JSON object, got {_short(data)}")
    hints = _hints(cls)
    kwargs: dict[str, object] = {}
    missing: list[str] = []
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        if f.name in data:
            kwargs[f.name] = _decode_value(data[f.name], hints[f.name], where, prefix + f.name)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            missing.append(prefix + f.name)
    if missing:
        raise ProtocolError(f"{where} lacks {', '.join(missing)}")
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:  # the class's own checks (RunConfig's ranges)
        at = f"field {prefix.rstrip('.')!r}: " if prefix else ""
        raise ProtocolError(f"{where}: {at}{exc}") from None


def _decode_value(value: object, hint: Any, where: str, path: str) -> object:
    def bad() -> ProtocolError:
        return ProtocolError(
            f"{where}: field {path!r} should be {_spell(hint)}, got {_short(value)}"
        )

    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        others = [a for a in args if a is not type(None)]
        if len(others) == 1:
            return _decode_value(value, others[0], where, path)
        if _conforms(value, hint):
            return value
        raise bad()
    if isinstance(hint, type) and hasattr(hint, "from_json_value"):
        return hint.from_json_value(value)  # a type that reads itself (NaN kept as null)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return decode(hint, value, where, path + ".")
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise bad() from None
    if hint is Path:
        if isinstance(value, str):
            return Path(value)
        raise bad()
    if origin in (list, tuple):
        args = typing.get_args(hint)
        item = args[0] if args else Any
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            raise TypeError(f"only tuple[X, ...] fields can be decoded, not {hint}")
        if not isinstance(value, list):
            raise bad()
        items = [_decode_value(v, item, where, f"{path}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin is dict:
        key, item = typing.get_args(hint) or (Any, Any)
        if not isinstance(value, dict) or not all(_conforms(k, key) for k in value):
            raise bad()
        return {k: _decode_value(v, item, where, f"{path}.{k}") for k, v in value.items()}
    if _conforms(value, hint):
        return value
    raise bad()


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


_HINTS: dict[type, dict[str, object]] = {}  # a dataclass's field annotations, resolved


def _hints(cls: type) -> dict[str, object]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _conforms(value: object, hint: Any) -> bool:
    """Whether a decoded JSON value fits a field's annotation (the few shapes events use)."""
    if hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return any(_conforms(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint in (str, bool):
        return isinstance(value, hint)
    if origin is list:
        (item,) = typing.get_args(hint) or (Any,)
        return isinstance(value, list) and all(_conforms(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint) or (Any, Any)
        return isinstance(value, dict) and all(
            _conforms(k, key) and _conforms(v, item) for k, v in value.items()
        )
    return isinstance(value, hint) if isinstance(hint, type) else True


def _spell(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def plain(value: object) -> JSONValue:
    """A value as JSON has it: dataclasses become objects (every field), enums their value,
    tuples lists, paths strings, and NaN and infinities (a diverging loss) null: JSON has no
    spelling for them."""
    if value is None or isinstance(value, (bool, int, str)):
        if isinstance(value, enum.Enum):
            return plain(value.value)
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain_object(value)
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return str(value)  # what json.dumps(default=str) would write


def plain_object(obj: object) -> JSONObject:
    return {f.name: plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}  # type: ignore[arg-type]
