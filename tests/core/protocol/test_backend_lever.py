"""The backend lever (issue 39): Keras on JAX as an arm, what it sets, which other levers it
takes, and its refusal on a Python without JAX."""

from __future__ import annotations

import importlib.util

import pytest

from xlagui.core.protocol.arms import (
    BASELINE,
    Arm,
    check_backends_here,
    comparison_arms,
    parse_arm,
)
from xlagui.core.protocol.config import ConfigError, RunConfig, XlaMode
from xlagui.core.protocol.levers import BACKEND, variables


def test_jax_sets_the_backend_and_its_compiled_step_together() -> None:
    arm = parse_arm("jax")
    assert arm == Arm(backend="jax") and arm.name == "jax" and arm.backend == "jax"
    assert arm.environment() == {"KERAS_BACKEND": "jax"}
    # after the XLA lever's jit_compile=False: the backend's wins (JAX eager is nobody's arm)
    assert arm.compile_arguments()["jit_compile"] is True
    assert arm.compiles_with_xla and not arm.xla.asks_for_xla
    assert BASELINE.backend == "tf" and not BASELINE.compiles_with_xla
    # a child never inherits the shell's KERAS_BACKEND: the baseline sets none and gets Keras'
    assert "KERAS_BACKEND" in variables() and BASELINE.environment() == {}


@pytest.mark.parametrize("text", ["jax+bf16", "jax+spe4", "jax+xla_cpu_use_xnnpack=false",
                                  "jax+fastmath"])
def test_the_levers_jax_takes(text: str) -> None:
    arm = parse_arm(text)
    assert arm.backend == "jax" and parse_arm(arm.name) == arm


@pytest.mark.parametrize(("text", "words"), [
    ("jit+jax", "cannot change XLA modes"),
    ("autocluster+jax", "cannot change XLA modes"),
    ("jax+t2", "cannot change thread counts"),
    ("jax+dnn", "cannot change oneDNN settings"),
])
def test_tensorflows_own_levers_are_refused_on_jax_by_name(text: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words) as refused:
        parse_arm(text)
    assert "TensorFlow's" in str(refused.value) and "precisions" in str(refused.value)


def test_a_comparisons_levers_for_every_worker_are_checked_against_each_arm() -> None:
    with pytest.raises(ConfigError, match="cannot change thread counts"):
        RunConfig(arms=("jax",), levers={"threads": "2"})
    assert RunConfig(arms=("jax",), levers={"spe": "4"}).arms == ("jax",)
    with pytest.raises(ConfigError, match="backend"):  # the backend is an arm's, not everyone's
        RunConfig(levers={"backend": "jax"})


def test_jax_is_measured_beside_tf_xla_and_the_baseline() -> None:
    assert [v for v, _a in comparison_arms(XlaMode.JIT, ("jax",))] == ["baseline", "xla", "jax"]


def test_an_arm_on_a_backend_this_python_lacks_is_refused_with_its_install_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "jax" else real(name, *a))
    config = RunConfig(arms=("jax",))
    with pytest.raises(ConfigError) as refused:
        check_backends_here(config, config.arms)
    assert str(refused.value) == ("the jax arm needs JAX, which this Python does not have: "
                                  "pip install 'xlagui[jax]'")
    check_backends_here(config, ("bf16",))  # TensorFlow's arms need nothing more


def test_the_backend_table_has_tensorflow_first() -> None:
    assert [v.value for v in BACKEND.values] == ["tf", "jax"]
