"""The lever table: arms, their names and the arms offered are built from it, and each value
says what the worker sets for it."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.arms import BASELINE, Arm, offered_arms, parse_arm
from xlagui.core.protocol.levers import LEVERS, PRECISION, XLA, lever, offered_choices, parts
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision


def test_the_arms_offered_come_from_the_table_in_their_order() -> None:
    assert offered_arms() == (
        "autocluster", "bf16", "fp16", "jax", "jit+bf16", "jit+fp16", "jit+ynndot")
    assert [sorted(c) for c in offered_choices()][-2] == ["precision", "xla"]
    assert [sorted(c) for c in offered_choices()][-1] == ["xla", "xla_flags"]


def test_every_lever_starts_with_the_baselines_value_and_names_each_other_value() -> None:
    assert [one.default.value for one in LEVERS] == list(BASELINE.values)
    for one in LEVERS:
        assert one.default.part == "" and all(v.part for v in one.values[1:]), one.name
        assert lever(one.name) is one
        for value in one.values:
            assert one.of(value.value) is value and isinstance(value.value, one.kind)
    assert [p.part for _l, p in parts()] == [
        "jit", "autocluster", "auto", "bf16", "fp16", "dnn", "nodnn", "ynndot", "jax"]
    with pytest.raises(KeyError):
        lever("warp")
    with pytest.raises(ValueError, match="not a value of the xla lever"):
        XLA.of("warp")


def test_every_combination_of_values_is_an_arm_whose_name_parses_back() -> None:
    for mode in XlaMode:
        for precision in Precision:
            arm = Arm(mode, precision)
            assert parse_arm(arm.name) == arm and (arm.xla, arm.precision) == (mode, precision)
            assert arm == Arm(xla=mode, precision=precision)
            assert arm.is_baseline == (arm == BASELINE)
            assert len(arm.pulled) == (mode is not XlaMode.OFF) + (
                precision is not Precision.FLOAT32)


def test_an_arm_is_built_by_position_or_by_lever_name() -> None:
    assert Arm(precision=Precision.BF16) == Arm(XlaMode.OFF, Precision.BF16) == parse_arm("bf16")
    assert Arm("jit", "mixed_float16").name == "jit+fp16"  # strings become the enums
    assert Arm().value(PRECISION).value is Precision.FLOAT32
    with pytest.raises(TypeError, match="no lever called 'warp'"):
        Arm(warp="4")
    with pytest.raises(TypeError, match="at most 7 values"):
        Arm("jit", "float32", "4", "off", "8", "", "tf", "x")
    with pytest.raises(ValueError):
        Arm("warp")


def test_what_the_worker_sets_for_an_arm() -> None:
    assert BASELINE.environment() == {}
    assert parse_arm("autocluster+bf16").environment() == {
        "TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"}
    jit_fp16 = parse_arm("jit+fp16")
    assert jit_fp16.compile_arguments() == {"jit_compile": True}
    assert [(one.name, v.policy, v.tf_config) for one, v in jit_fp16.every_value()][:2] == [
        ("xla", "", (("optimizer.set_jit", (False,)),)),
        ("precision", "mixed_float16", ()),
    ]
    assert BASELINE.compile_arguments() == {"jit_compile": False}  # said, never left to Keras
    assert [BASELINE.value(one).policy for one in (XLA, PRECISION)] == ["", "float32"]
    assert parse_arm("auto").compile_arguments() == {"jit_compile": "auto"}
    autocluster = parse_arm("autocluster")
    assert autocluster.compile_arguments() == {"jit_compile": False}
    assert autocluster.value(XLA).tf_config == (("optimizer.set_jit", ("autoclustering",)),)


def test_colour_and_word_keys() -> None:
    assert [v.colour for v in XLA.values] == ["", "jit", "autocluster", "auto"]
    assert [v.colour for v in PRECISION.values] == ["", "bf16", "fp16"]
    assert [v.words for v in PRECISION.values] == [
        "precision.float32", "precision.mixed_bfloat16", "precision.mixed_float16"]
