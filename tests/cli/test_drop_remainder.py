"""`--drop-remainder`: the validation set's last partial batch is dropped, so XLA compiles the
evaluation once (the recompile itself: tests/core/worker/test_compiles_tf.py)."""

from __future__ import annotations

import shlex

import pytest

from tests.helpers.reports import comparison_report
from xlagui.cli.compare import compare_config
from xlagui.cli.parser import build_parser
from xlagui.core.protocol.config import ConfigError, RunConfig


def test_the_flag_sets_the_setting_and_the_reproduce_line_repeats_it() -> None:
    assert compare_config(build_parser().parse_args(["compare", "--demo"])).drop_remainder is False
    config = compare_config(build_parser().parse_args(["compare", "--demo", "--drop-remainder"]))
    assert config.drop_remainder is True
    report = comparison_report()
    report.config = config
    words = shlex.split(report.reproduce_command())
    assert "--drop-remainder" in words
    again = compare_config(build_parser().parse_args(words[1:]))
    assert again.drop_remainder is True


def test_the_setting_round_trips_and_older_configs_lack_it() -> None:
    config = RunConfig(drop_remainder=True)
    assert RunConfig.from_dict(config.to_dict()).drop_remainder is True
    old = config.to_dict()
    del old["drop_remainder"]
    assert RunConfig.from_dict(old).drop_remainder is False
    with pytest.raises(ConfigError, match="drop_remainder"):
        RunConfig(drop_remainder="yes")  # type: ignore[arg-type]
