"""Typed identities (issue 28): no run-status string literal outside `xlagui/core/protocol/`.

An AST check on the string constants of every module of `xlagui/`: a constant whose whole value
is a run status ("queued", "running", "finished", "cancelled", "error", "interrupted",
"not run") is a status spelled by hand, which belongs to the run status enum in
`core/protocol/`. A sentence that contains the word is not a literal of it (only whole values
count), and docstrings cannot be one. The same word meaning something else (a problem's
severity "error", an event's type) is reported too: it is to become an identity of its own
rather than a string that reads like a status.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xlagui"
PROTOCOL = PACKAGE / "core" / "protocol"
STATUSES = frozenset(
    {"queued", "running", "finished", "cancelled", "error", "interrupted", "not run"})


def status_literals(source: str) -> list[tuple[int, str]]:
    """(line, value) of each string constant in `source` that is a run status."""
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        and node.value in STATUSES
    )


def literals_outside_protocol() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PROTOCOL):
            continue
        rel = path.relative_to(ROOT).as_posix()
        for line, value in status_literals(path.read_text(encoding="utf-8")):
            out.append(f"{rel}:{line} {value!r}")
    return out


def test_the_check_sees_whole_values_only() -> None:
    source = (
        '"""A docstring that says finished."""\n'
        'if entry.status == "finished":\n'
        '    say(f"{n} not run", "not run")\n'
        "STATES = ('queued', 'running later')\n"
    )
    assert status_literals(source) == [(2, "finished"), (3, "not run"), (4, "queued")]


def test_no_run_status_literal_outside_the_protocol() -> None:
    assert literals_outside_protocol() == []
