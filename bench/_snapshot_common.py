"""What the wording snapshot's modules share (`bench/snapshot_words.py`): a JSON value of
words, an attempt that records a failure in words, rows as lists, and the CLI's console."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Callable
from typing import Any

from rich.console import Console

WIDTH = 120  # the CLI's console width when it does not write to a terminal
Texts = Any  # a JSON value: str, list or dict of them


def attempt(fn: Callable[..., Texts], *args: Any) -> Texts:
    """`fn(*args)`, or the error it raised in words (the snapshot goes on)."""
    try:
        return fn(*args)
    except Exception as exc:
        return f"ERROR: {type(exc).__name__}: {exc}"


def plain(rows: Any) -> Texts:
    """Rows (tuples, dataclasses of words) as JSON lists."""
    if isinstance(rows, (list, tuple)):
        return [plain(r) for r in rows]
    return rows


def console() -> Console:
    return Console(file=io.StringIO(), width=WIDTH, color_system=None, force_terminal=False,
                   highlight=False, legacy_windows=False)


def printed(con: Console) -> str:
    file = con.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()




# Blocks that many comparisons show alike (what XLA did of the same recorded dump), kept once:
# the comparison holds "shared:<hash>", `SHARED` the words.
SHARED: dict[str, Texts] = {}


def share(value: Texts) -> Texts:
    """`value` kept once in `SHARED`; its reference in its place."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    key = "shared:" + hashlib.sha256(text.encode()).hexdigest()[:16]
    SHARED[key] = value
    return key
