"""A pytest plugin for tests/test_lanes.py: after collection, which tests each lane's `-m`
expression selects, evaluated by pytest's own marker matching, written as JSON.

    XLAGUI_LANES='{"fast": "not tf and not serial", ...}' XLAGUI_LANES_OUT=out.json \
        python -m pytest --collect-only -q -p tests.helpers.lane_markers

(`_pytest.mark` is pytest's private module: these are the two names its `-m` option itself uses,
so a lane is selected here exactly as `pytest -m` selects it. Should pytest rename them, this
plugin fails loudly, never quietly.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _pytest.mark import MarkMatcher
from _pytest.mark.expression import Expression


def pytest_collection_finish(session: pytest.Session) -> None:
    out = os.environ.get("XLAGUI_LANES_OUT")
    if not out:
        return
    lanes = {name: Expression.compile(expr)
             for name, expr in json.loads(os.environ["XLAGUI_LANES"]).items()}
    selected: dict[str, list[str]] = {name: [] for name in lanes}
    selected["all"] = []
    for item in session.items:
        selected["all"].append(item.nodeid)
        matcher = MarkMatcher.from_markers(item.iter_markers())
        for name, expression in lanes.items():
            if expression.evaluate(matcher):
                selected[name].append(item.nodeid)
    Path(out).write_text(json.dumps(selected), encoding="utf-8")
