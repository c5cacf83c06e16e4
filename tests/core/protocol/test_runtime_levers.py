"""The runtime levers (threads, oneDNN, steps per execution, XLA flags): how an arm's name
writes them, what a worker sets for them, and the comparison's levers for every worker
(`RunConfig.levers`, `Arm.effective`)."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.arms import BASELINE, Arm, parse_arm, parse_arms
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.levers import ONEDNN, SPE, THREADS, XLA_FLAGS, variables


def test_each_runtime_part_parses_and_says_what_it_sets() -> None:
    t1 = parse_arm("t1")
    assert t1.levers == {"threads": "1"} and t1.name == "t1"
    assert t1.value(THREADS).tf_config == (("threading.set_intra_op_parallelism_threads", (1,)),)
    assert parse_arm("t12").value(THREADS).part == "t12"
    assert parse_arm("nodnn").environment() == {"TF_ENABLE_ONEDNN_OPTS": "0"}
    assert parse_arm("dnn").environment() == {"TF_ENABLE_ONEDNN_OPTS": "1"}
    assert BASELINE.value(ONEDNN).env == ()  # TensorFlow's default, never the shell's:
    assert "TF_ENABLE_ONEDNN_OPTS" in variables()
    spe8 = parse_arm("spe8")
    assert spe8.compile_arguments() == {"jit_compile": False, "steps_per_execution": 8}
    assert BASELINE.value(SPE).compile == () and "steps_per_execution" not in (
        BASELINE.compile_arguments())


def test_runtime_parts_combine_with_the_others_in_the_registrys_order() -> None:
    arm = parse_arm("spe8+bf16+jit")
    assert arm.name == "jit+bf16+spe8" and parse_arm(arm.name) == arm
    arm = parse_arm("nodnn + T1 + jit")
    assert arm.name == "jit+t1+nodnn"
    assert arm.levers == {"xla": "jit", "threads": "1", "onednn": "off"}
    assert parse_arms(["jit+t1+nodnn,t1+nodnn+jit,spe4"]) == ("jit+t1+nodnn", "spe4")


def test_xla_flags_free_and_named() -> None:
    free = parse_arm("jit+xla_cpu_use_xnnpack=false")
    assert free.name == "jit+noxnnpack"  # a named flag is written by its name
    assert free.environment() == {"XLA_FLAGS": "--xla_cpu_use_xnnpack=false"}
    arm = parse_arm("jit+--xla_cpu_prefer_vector_width=128+fastmath")
    assert arm.name == "jit+fastmath+xla_cpu_prefer_vector_width=128"
    assert parse_arm(arm.name) == arm == parse_arm("fastmath+jit+xla_cpu_prefer_vector_width=128")
    assert arm.value(XLA_FLAGS).value == (
        "--xla_cpu_enable_fast_math=true --xla_cpu_prefer_vector_width=128")
    # TensorFlow's own flags go to TF_XLA_FLAGS, after the XLA mode's.
    auto = parse_arm("autocluster+tf_xla_min_cluster_size=2")
    assert auto.environment() == {
        "TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit --tf_xla_min_cluster_size=2"}
    assert Arm(xla="jit", xla_flags="--xla_cpu_use_xnnpack=false") == free


@pytest.mark.parametrize(("text", "needle"), [
    ("t0", "threads must be a whole number from 1 to 1024, got '0'"),
    ("spe1", "steps per execution must be a whole number from 2 to 4096, got '1'"),
    ("jit+t1+t2", "names two thread counts"),
    ("jit+dnn+nodnn", "names two oneDNN settings"),
    ("noxnnpack", "need one of the XLA modes or Keras backends: join it with one (for example "
                  "jit+noxnnpack)"),
    ("jit+xla_cpu_use_xnnpack", "needs a value: write it as xla_cpu_use_xnnpack=VALUE"),
    ("jit+xla_cpu_use_xnnpack=(1)", "write a flag as name=value"),
    ("jit+noxnnpack+xla_cpu_use_xnnpack=true", "XLA flag xla_cpu_use_xnnpack is given twice"),
    ("jit+x4", "unknown arm part 'x4'"),
])
def test_refused_parts_say_why(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        parse_arm(text)


def test_a_comparisons_levers_round_trip_and_reach_every_worker() -> None:
    config = RunConfig(levers={"onednn": "off", "threads": "t1", "precision": "bf16"})
    assert config.levers == {"precision": "mixed_bfloat16", "threads": "1", "onednn": "off"}
    assert RunConfig.from_dict(config.to_dict()) == config
    assert config.to_dict()["levers"] == config.levers
    old = RunConfig().to_dict()
    del old["levers"]  # a comparison from before the field opens
    assert RunConfig.from_dict(old).levers == {}
    # The baseline takes them too; an arm's own values win.
    assert BASELINE.effective(config).name == "bf16+t1+nodnn"
    assert parse_arm("jit+t2").effective(config).levers == {
        "xla": "jit", "precision": "mixed_bfloat16", "threads": "2", "onednn": "off"}
    assert parse_arm("jit").effective(RunConfig()) == parse_arm("jit")


@pytest.mark.parametrize(("levers", "needle"), [
    ({"xla": "jit"}, "lever xla is XLA's own"),
    ({"xla_flags": "--xla_cpu_use_xnnpack=false"}, "lever xla_flags is XLA's own"),
    ({"cores": "1"}, "no lever called 'cores': the levers are precision, threads, onednn, spe"),
    ({"threads": "0"}, "threads must be a whole number from 1 to 1024"),
    ({"onednn": "maybe"}, "'maybe' is not a value of the onednn lever"),
])
def test_a_comparisons_levers_refuse_what_is_not_one(levers: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        RunConfig(levers=levers)
