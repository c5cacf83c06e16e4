"""A new lever is its entry in the registry: arms, their names, the arms offered and the records
that keep them need nothing else (`knob`, made up in tests/helpers/levers.py, registered only
here)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.helpers.levers import KNOB, VARIABLE, register_knob
from tests.helpers.recipes import seen_after_registering
from xlagui.core.protocol.arms import (
    BASELINE,
    Arm,
    offered_arms,
    parse_arm,
    parse_arms,
    record_fields,
)
from xlagui.core.protocol.config import ConfigError, RunConfig, XlaMode
from xlagui.core.protocol.events import StartedEvent, event_from_dict
from xlagui.core.protocol.levers import PRECISION, XLA, variables
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec


@pytest.fixture(autouse=True)
def knob(monkeypatch: pytest.MonkeyPatch) -> None:
    register_knob(monkeypatch)


def test_an_arm_of_it_parses_and_joins_the_others() -> None:
    arm = parse_arm("jit+knob2")
    assert arm.name == "jit+knob2" and parse_arm("knob2+jit") == arm
    assert arm.levers == {"xla": "jit", "knob": "2"}
    assert (arm.xla, arm.precision, arm.value(KNOB).value) == (XlaMode.JIT, Precision.FLOAT32, "2")
    assert [arm.value(one).value for one in (XLA, PRECISION, KNOB)] == [
        XlaMode.JIT, Precision.FLOAT32, "2"]
    assert Arm(knob="2") == parse_arm("knob2") and Arm(knob="1") == BASELINE
    assert parse_arm("bf16").value(KNOB).value == "1"  # the baseline's, not given
    with pytest.raises(ConfigError, match="names two knob settings"):
        parse_arm("knob2+knob2")
    with pytest.raises(ValueError, match="not a value of the knob lever"):
        Arm(knob="3")
    assert parse_arms(["knob2,jit+knob2", "knob2"]) == ("knob2", "jit+knob2")
    assert RunConfig(arms=("knob2",)).arms == ("knob2",)


def test_the_window_offers_it_alone() -> None:
    # After every value offered alone before it (it is registered last), before the pairs.
    offered = offered_arms()
    alone = [name for name in offered if "+" not in name]
    assert alone[-1] == "knob2" and offered[len(alone):][:2] == ("jit+bf16", "jit+fp16")


def test_what_the_worker_sets_for_it() -> None:
    arm = parse_arm("autocluster+knob2")
    assert arm.environment() == {"TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
                                 VARIABLE: "2"}
    assert arm.compile_arguments() == {"jit_compile": False, "steps_per_execution": 2}
    knob = dict((one.name, value) for one, value in arm.every_value())["knob"]
    assert knob.tf_config == (("threading.set_inter_op_parallelism_threads", (2,)),)
    # The baseline's value sets nothing, and no child inherits the variable from the shell.
    assert BASELINE.compile_arguments() == {"jit_compile": False}
    assert VARIABLE not in BASELINE.environment() and VARIABLE in variables()


def test_a_run_entry_keeps_it_through_json() -> None:
    entry = RunEntry.of_arm("m3-jit+knob2", "jit+knob2", 1, parse_arm("jit+knob2"))
    saved = json.loads(json.dumps(entry.to_dict()))
    # Readers from before find the levers they know where they always were.
    assert (saved["xla_mode"], saved["precision"]) == ("jit", "float32")
    assert saved["levers"] == {"xla": "jit", "knob": "2"}
    again = RunEntry.from_dict(saved)
    assert again == entry and again.arm == parse_arm("jit+knob2")


def test_a_run_spec_and_the_started_event_keep_it(tmp_path: Path) -> None:
    spec = RunSpec(run_id="m3-knob2", variant="knob2", config=RunConfig(image_size=48),
                   class_names=["a", "b"], train=[], val=[], run_dir=tmp_path,
                   **record_fields(parse_arm("knob2")))
    assert json.loads(spec.to_json())["levers"] == {"knob": "2"}
    again = RunSpec.from_json(spec.to_json())
    assert again == spec and again.arm == parse_arm("knob2")
    started = StartedEvent(variant="knob2", **record_fields(spec.arm))
    assert event_from_dict(json.loads(started.to_json())) == started
    assert started.levers == {"knob": "2"} and started.xla_mode is XlaMode.OFF


def test_records_from_before_open_as_they_did() -> None:
    old = {"run_id": "m3-jit+bf16", "variant": "jit+bf16", "repeat": 1, "xla_mode": "jit",
           "precision": "mixed_bfloat16", "status": "finished", "events": []}
    entry = RunEntry.from_dict(old)
    assert entry.arm == parse_arm("jit+bf16") and entry.levers == {
        "xla": "jit", "precision": "mixed_bfloat16"}
    # A field changed by a caller (dataclasses.replace) is heard, and levers follows it.
    knob2 = StartedEvent(variant="knob2", **record_fields(parse_arm("knob2")))
    changed = dataclasses.replace(knob2, xla_mode=XlaMode.JIT)
    assert changed.levers == {"xla": "jit", "knob": "2"}


def test_a_lever_this_version_does_not_know_is_refused_by_name() -> None:
    saved = {**RunEntry.of_arm("m3-knob2", "knob2", 1, parse_arm("knob2")).to_dict(),
             "levers": {"warp": "9"}}
    with pytest.raises(ValueError, match="levers: no lever called 'warp'"):
        RunEntry.from_dict(saved)


# docs/ARCHITECTURE.md, "A lever": the entry, registered in one line in a module of its own, as a
# plugin (or a later issue) would write it.
THROWAWAY = (
    "from xlagui.core.protocol.levers import Lever, LeverValue, register\n"
    'register(Lever(name="inter", plural="inter-op thread counts", values=('
    'LeverValue("default"), LeverValue("1", part="inter1", offered=True, '
    'tf_config=(("threading.set_inter_op_parallelism_threads", (1,)),)))))\n'
)
# What a user sees of it, in a fresh interpreter that loads the throwaway module first.
SEEN = '''import json, sys
sys.path.insert(0, sys.argv[1])
import throwaway_lever
from PySide6.QtWidgets import QApplication, QCheckBox
app = QApplication([])
from xlagui.cli.parser import build_parser
from xlagui.cli.compare import compare_config
from xlagui.cli.sweep import sweep_plan
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.sweep import fields
from xlagui.core.worker.levers import apply_before_build
from xlagui.ui.settings.settings_form import SettingsForm
parser = build_parser()
sub = next(a for a in parser._actions if a.dest == "command")
calls = []
class Threading:
    def __getattr__(self, name):
        return lambda *args: calls.append([name, list(args)])
class Config:
    threading = Threading()
    class optimizer:
        set_jit = staticmethod(lambda *args: None)
class Tf:
    config = Config()
class Keras:
    class mixed_precision:
        set_global_policy = staticmethod(lambda *args: None)
apply_before_build(Tf(), Keras(), parse_arm("inter1"))
form = SettingsForm()
box = form.findChild(QCheckBox, "arm:inter1")
plan = sweep_plan(parser.parse_args(["sweep", "--demo", "--set", "inter=default,1"]))
print(json.dumps({
    "help": " ".join(sub.choices["compare"].format_help().split()),
    "arms": list(compare_config(parser.parse_args(["compare", "--arms", "inter1"])).arms),
    "levers": parse_arm("inter1").levers,
    "box": None if box is None else box.text(),
    "cells": [c.config.levers for c in plan.cells],
    "field": [[a.name, list(a.values)] for a in fields.parse("levers", "inter=default,1")],
    "calls": calls,
}))
'''


def test_the_recipe_one_registered_lever_is_an_arm_a_box_a_sweep_axis_and_a_worker_call(
        tmp_path: Path) -> None:
    """docs/ARCHITECTURE.md, "A lever": one `Lever`, registered in one line in a throwaway
    module, is an arm of `compare` (in `--arms`' help, parsed), a box under "Also measure" in
    the window, a runtime axis of a sweep (`--set`, the Sweep tab's field) and a `tf.config`
    call of the worker, with no other file touched."""
    seen = seen_after_registering(tmp_path, "throwaway_lever", THROWAWAY, SEEN)
    assert "inter1" in seen["help"]
    assert seen["arms"] == ["inter1"] and seen["levers"] == {"inter": "1"}
    assert seen["box"] is not None and "inter" in seen["box"]
    assert [c.get("inter") for c in seen["cells"]] == ["default", "1"]
    assert seen["field"] == [["lever:inter", ["default", "1"]]]
    assert ["set_inter_op_parallelism_threads", [1]] in seen["calls"]
