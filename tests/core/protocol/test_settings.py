"""The settings table (`core/protocol/settings.py`) is where a setting is declared: every plain
field of `RunConfig` has an entry, `RunConfig` checks its fields with them, the CLI's options
and the window's fields are made from them, and a new entry reaches the command line."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
from pytestqt.qtbot import QtBot

from xlagui.cli import parser as cli_parser
from xlagui.core.protocol import settings
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.settings import DEFAULTS, RANGES, SETTING, SETTINGS, Setting

# The fields that are not one value a user types: lists, records and maps, each with its own
# check (`arms`, `levers`) or its own source (`model`, `extra`).
STRUCTURED = {"arms", "extra", "model", "levers"}


def test_every_plain_field_of_run_config_is_in_the_table_and_nothing_else() -> None:
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    assert {one.name for one in SETTINGS} == fields - STRUCTURED
    assert len(SETTING) == len(SETTINGS)  # no name twice


def test_defaults_and_ranges_are_views_of_the_table() -> None:
    config = RunConfig()
    for one in SETTINGS:
        assert DEFAULTS[one.name] == one.default
        assert getattr(config, one.name) == one.default or one.name == "xla"
        if one.range is not None:
            assert RANGES[one.name] == one.range


@pytest.mark.parametrize("one", [s for s in SETTINGS if s.range is not None],
                         ids=lambda s: s.name)
def test_run_config_refuses_a_number_outside_its_entrys_range(one: Setting) -> None:
    assert one.range is not None
    with pytest.raises(ConfigError, match=one.words):
        RunConfig(**{one.name: one.range.high + 1})


@pytest.mark.parametrize("one", [s for s in SETTINGS if s.kind is bool], ids=lambda s: s.name)
def test_run_config_refuses_a_true_or_false_setting_that_is_not(one: Setting) -> None:
    with pytest.raises(ConfigError, match="true or false"):
        RunConfig(**{one.name: "yes"})


def test_every_entry_with_a_flag_is_an_option_of_compare_that_lands_under_its_name() -> None:
    parser = cli_parser.build_parser()
    args = parser.parse_args(["compare"])
    for one in SETTINGS:
        if one.flag:
            assert hasattr(args, one.name), one.name
    sub = next(a for a in parser._actions if a.dest == "command")
    compare = sub.choices["compare"]  # type: ignore[attr-defined]
    flags = {flag for action in compare._actions for flag in action.option_strings}
    assert {one.flag for one in SETTINGS if one.flag} <= flags


def test_a_new_entry_is_a_new_option(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recipe: one entry in the table, and `add_settings` makes its option, typed, with its
    default and help, under its own name."""
    extra = Setting("warmup_steps", 3, "warm-up steps", "steps before timing", "--warmup-steps",
                    "Warm-up", low=1, high=50)
    monkeypatch.setattr(settings, "SETTING", settings.SETTING | {extra.name: extra})
    monkeypatch.setattr(cli_parser, "SETTING", settings.SETTING)
    p = argparse.ArgumentParser(formatter_class=cli_parser.HelpFormatter)
    cli_parser.add_settings(p, "warmup_steps")
    assert p.parse_args([]).warmup_steps == 3
    assert p.parse_args(["--warmup-steps", "7"]).warmup_steps == 7
    assert "steps before timing (default: 3)" in " ".join(p.format_help().split())


def test_the_windows_fields_take_their_ranges_and_labels_from_the_table(qtbot: QtBot) -> None:
    from PySide6.QtWidgets import QLabel, QSpinBox

    from xlagui.ui.settings.settings_form import SettingsForm

    form = SettingsForm()
    qtbot.addWidget(form)
    labels = {w.text() for w in form.findChildren(QLabel)}
    checked = 0
    for one in SETTINGS:
        box = form.findChild(QSpinBox, one.name)
        if box is None or one.range is None:
            continue
        low = 1 if one.name == "image_size" else one.range.low  # a note says why not
        assert (box.minimum(), box.maximum(), box.suffix()) == (low, one.range.high, one.unit)
        assert one.label in labels, one.name
        checked += 1
    assert checked == 8  # every whole number with a range has its box


def test_the_settings_a_sweep_may_vary_are_its_axes_and_its_options() -> None:
    from xlagui.cli.sweep import sweep_plan
    from xlagui.core.sweep.plan import AXES, SETTING_AXES

    swept = [one for one in SETTINGS if one.sweep]
    assert [one.name for one in swept] == list(SETTING_AXES) == list(AXES[:len(swept)])
    words = ["sweep", "--demo"]
    for one in swept:
        words += [one.flag, one.example]
    plan = sweep_plan(cli_parser.build_parser().parse_args(words))
    assert [(a.name, ",".join(a.values)) for a in plan.axes] == [
        (one.name, one.example) for one in swept]
    assert len(plan.cells) == 4


# The recipe's one line, in a module of its own, as a plugin (or a later issue) would write it.
THROWAWAY = (
    "from xlagui.core.protocol.settings import Setting, register\n"
    'register(Setting("warmup_steps", 3, "warm-up steps", "steps before timing", '
    '"--warmup-steps", "Warm-up", low=1, high=50, sweep=True, plural="warm-up steps", '
    'example="2,4", group="measurement"))\n'
)
# What a user sees of it, in a fresh interpreter that loads the throwaway module first.
SEEN = '''import json, sys
sys.path.insert(0, sys.argv[1])
import throwaway_setting
from PySide6.QtWidgets import QApplication, QGroupBox, QLabel, QSpinBox
app = QApplication([])
from xlagui.cli.parser import build_parser
from xlagui.core.sweep import fields
from xlagui.core.sweep.plan import AXES
from xlagui.ui.settings.settings_form import SettingsForm
from xlagui.ui.sweep.sweep_form import FIELDS
parser = build_parser()
sub = next(a for a in parser._actions if a.dest == "command")
form = SettingsForm()
box = form.findChild(QSpinBox, "warmup_steps")
group = box.parent() if box is not None else None
while group is not None and not isinstance(group, QGroupBox):
    group = group.parent()
axis = fields.parse("warmup_steps", "2, 4")[0]
print(json.dumps({
    "help": " ".join(sub.choices["compare"].format_help().split()),
    "parsed": parser.parse_args(["compare", "--warmup-steps", "7"]).warmup_steps,
    "box": None if box is None else [box.minimum(), box.maximum(), box.value()],
    "group": group.title() if group is not None else None,
    "labels": [w.text() for w in form.findChildren(QLabel)],
    "axes": list(AXES), "fields": [kind for kind, _ in FIELDS],
    "axis": [axis.name, list(axis.values)],
}))
'''


def test_the_recipe_one_registered_entry_is_an_option_a_field_and_a_sweep_axis(
        tmp_path: pytest.TempPathFactory) -> None:
    """docs/ARCHITECTURE.md, "To add a setting": one entry, registered in one line in a
    throwaway module, is an option of `compare` (in its help, parsed under its name), a spin
    box in its group of the window with its label and range, and a sweep axis with a field of
    its own in the Sweep tab, with no other file touched. (`RunConfig` needs a field of its
    name before a comparison can carry its value: the recipe's second file.)"""
    from pathlib import Path

    from tests.helpers.recipes import seen_after_registering

    seen = seen_after_registering(Path(str(tmp_path)), "throwaway_setting", THROWAWAY, SEEN)
    assert "--warmup-steps WARMUP_STEPS steps before timing (default: 3)" in seen["help"]
    assert seen["parsed"] == 7
    assert seen["box"] == [1, 50, 3] and seen["group"] == "Measurement"
    assert "Warm-up" in seen["labels"]
    assert "warmup_steps" in seen["axes"] and "warmup_steps" in seen["fields"]
    assert seen["axis"] == ["warmup_steps", ["2", "4"]]
