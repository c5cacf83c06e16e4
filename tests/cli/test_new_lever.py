"""`--arms` takes the arms of every registered lever, and its help lists them (`knob`, made up in
tests/helpers/levers.py, registered only here)."""

from __future__ import annotations

import pytest

from tests.helpers.levers import register_knob
from xlagui.cli import main
from xlagui.cli.compare import compare_config
from xlagui.cli.parser import build_parser


def test_arms_takes_a_new_levers_arms(monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    register_knob(monkeypatch)
    args = build_parser().parse_args(["compare", "--demo", "--arms", "knob2,jit+knob2"])
    config = compare_config(args)
    assert config.arms == ("knob2", "jit+knob2")
    assert config.budget_seconds == 240  # two arms besides the XLA side
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "knob2 (2), or one XLA mode" in " ".join(
        capsys.readouterr().out.split())
