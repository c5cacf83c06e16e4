"""`--no-explain`: the comparison skips the why (the inspecting worker of each arm that does not
use XLA, the profile and the parity steps); the reproduce line repeats it."""

from __future__ import annotations

import shlex

import pytest

from tests.helpers.reports import comparison_report
from xlagui.cli.compare import compare_config
from xlagui.cli.parser import build_parser
from xlagui.core.protocol.config import ConfigError, RunConfig


def test_the_flag_turns_the_why_off_and_the_reproduce_line_repeats_it() -> None:
    assert compare_config(build_parser().parse_args(["compare", "--demo"])).explain is True
    config = compare_config(build_parser().parse_args(["compare", "--demo", "--no-explain"]))
    assert config.explain is False
    report = comparison_report()
    report.config = config
    words = shlex.split(report.reproduce_command())
    assert "--no-explain" in words
    assert compare_config(build_parser().parse_args(words[1:])).explain is False
    report.config = RunConfig()
    assert "--no-explain" not in shlex.split(report.reproduce_command())


def test_the_setting_round_trips_and_older_configs_explain() -> None:
    old = RunConfig(explain=False).to_dict()
    assert RunConfig.from_dict(old).explain is False
    del old["explain"]
    assert RunConfig.from_dict(old).explain is True
    with pytest.raises(ConfigError, match="explain"):
        RunConfig(explain="no")  # type: ignore[arg-type]
