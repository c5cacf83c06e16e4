"""A lever that brings no words of its own reads in plain words built from its names and what it
sets, and joins the lists built from the registry (`knob`, made up in tests/helpers/levers.py)."""

from __future__ import annotations

import pytest

from tests.helpers.levers import KNOB, register_knob
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.identity import Role
from xlagui.present import format as fmt
from xlagui.present.levers import arm_description, arm_label, arms_words, value_words


@pytest.fixture(autouse=True)
def knob(monkeypatch: pytest.MonkeyPatch) -> None:
    register_knob(monkeypatch)


def test_its_arms_read_in_plain_words() -> None:
    words = value_words(KNOB, KNOB.values[1])
    assert (words.label, words.short, words.words, words.brief) == ("knob=2",) * 4
    assert words.how == ("XLAGUI_TEST_KNOB=2, "
                         "tf.config.threading.set_inter_op_parallelism_threads(2), "
                         "model.compile(steps_per_execution=2)")
    assert not words.choice  # never a radio button of the XLA side
    assert arm_label(parse_arm("knob2")) == "knob=2"
    assert arm_label(parse_arm("jit+bf16+knob2")) == "XLA jit_compile + mixed_bfloat16 + knob=2"
    assert arm_description(parse_arm("jit+knob2")) == (
        f"model.compile(jit_compile=True); {words.how}")
    # A column's subtitle; the sides' own words are unchanged.
    assert fmt.mode_words("knob2", "off") == "knob=2"
    assert fmt.mode_words(Role.XLA, "jit") == "jit_compile=True"


def test_the_arms_help_lists_it() -> None:
    words = arms_words()
    assert words.startswith("jit, autocluster, bf16 (mixed_bfloat16), fp16 (mixed_float16), ")
    assert words.split("; ")[0].endswith(
        ", knob2 (2), or one XLA mode and one precision joined with + (jit+bf16)")
