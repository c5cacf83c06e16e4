"""Arms: names, combinations, what the machine runs well, and refusing an arm that did not
engage."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.arms import (
    HardwareFit,
    Precision,
    comparison_arms,
    hardware_fit,
    parse_arm,
    parse_arms,
)
from xlagui.core.protocol.config import ConfigError, RunConfig, XlaMode

AMX = frozenset({"avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})
OLD = frozenset({"avx2", "fma"})


@pytest.mark.parametrize(
    ("text", "xla", "precision", "name"),
    [
        ("jit", XlaMode.JIT, Precision.FLOAT32, "jit"),
        ("autocluster", XlaMode.AUTOCLUSTER, Precision.FLOAT32, "autocluster"),
        ("bf16", XlaMode.OFF, Precision.BF16, "bf16"),
        ("FP16", XlaMode.OFF, Precision.FP16, "fp16"),
        ("bf16+jit", XlaMode.JIT, Precision.BF16, "jit+bf16"),
        (" jit + fp16 ", XlaMode.JIT, Precision.FP16, "jit+fp16"),
        ("off", XlaMode.OFF, Precision.FLOAT32, "off"),
    ],
)
def test_arm_names_parse_to_one_canonical_arm(
    text: str, xla: XlaMode, precision: Precision, name: str
) -> None:
    arm = parse_arm(text)
    assert (arm.xla, arm.precision, arm.name) == (xla, precision, name)
    assert parse_arm(arm.name) == arm


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("jit+autocluster", "two XLA modes"),
        ("bf16+fp16", "two precisions"),
        ("int8", "unknown arm part 'int8'"),
        ("jit+", "unknown arm part ''"),
    ],
)
def test_bad_arm_names_say_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        parse_arm(text)


def test_arm_lists_drop_repeats_and_the_baseline() -> None:
    assert parse_arms(["jit,bf16", "bf16+jit", "off", "BF16", ""]) == ("jit", "bf16", "jit+bf16")
    assert RunConfig(arms=("bf16", "jit+bf16")).to_dict()["arms"] == ["bf16", "jit+bf16"]
    assert RunConfig.from_dict(RunConfig(arms=("fp16",)).to_dict()).arms == ("fp16",)
    with pytest.raises(ConfigError, match="list of arm names"):
        RunConfig(arms="bf16")  # type: ignore[arg-type]


def test_a_comparison_measures_the_baseline_then_xla_then_the_other_arms() -> None:
    got = comparison_arms(XlaMode.JIT, ("bf16", "jit", "jit+bf16"))
    assert [(v, a.name) for v, a in got] == [
        ("baseline", "off"),
        ("xla", "jit"),  # asked again in the list: still measured once, as the XLA side
        ("bf16", "bf16"),
        ("jit+bf16", "jit+bf16"),
    ]
    got = comparison_arms(XlaMode.AUTOCLUSTER, ("jit",))
    assert [(v, a.name) for v, a in got] == [
        ("baseline", "off"),
        ("xla", "autocluster"),
        ("jit", "jit"),
    ]


def test_what_is_known_of_how_the_hardware_runs_an_arm() -> None:
    bf16, fp16 = parse_arm("bf16"), parse_arm("fp16")
    assert hardware_fit(bf16, "CPU", AMX) is HardwareFit.NOTHING
    assert hardware_fit(bf16, "CPU", OLD) is HardwareFit.CPU_NOT_NATIVE
    assert hardware_fit(bf16, "CPU", frozenset()) is HardwareFit.CPU_FLAGS_UNKNOWN
    assert hardware_fit(fp16, "CPU", AMX) is HardwareFit.CPU_FP16
    assert hardware_fit(bf16, "gpu", OLD) is HardwareFit.GPU_BF16
    assert hardware_fit(fp16, "GPU", OLD) is HardwareFit.NOTHING
    assert hardware_fit(parse_arm("jit"), "CPU", OLD) is HardwareFit.NOTHING
