"""How a worker applies an arm's levers, from the data each value declares, and what the parent
sets before the worker loads TensorFlow: a new lever (`knob`, made up in
tests/helpers/levers.py) needs no worker code. The real worker's proof is test_levers_tf.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.levers import VARIABLE, register_knob
from xlagui.core.compare import new_report, plan_measure_runs, plan_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.jobs import WorkerJob
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.transports.environment import local_env
from xlagui.core.protocol.arms import BASELINE, Arm, parse_arm
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.levers import LeverValue
from xlagui.core.protocol.precision import Precision
from xlagui.core.worker import levers as worker_levers
from xlagui.core.worker.levers import apply_before_build, check_levers, tf_config_call


@pytest.fixture(autouse=True)
def knob(monkeypatch: pytest.MonkeyPatch) -> None:
    register_knob(monkeypatch)


class Calls:
    """Stands in for `tf` and `keras`: every call the worker makes, in order."""

    def __init__(self) -> None:
        self.made: list[tuple[str, tuple[object, ...]]] = []

        def record(name: str) -> Any:
            return lambda *args: self.made.append((name, args))

        self.tf = SimpleNamespace(config=SimpleNamespace(
            optimizer=SimpleNamespace(set_jit=record("optimizer.set_jit")),
            threading=SimpleNamespace(set_inter_op_parallelism_threads=record(
                "threading.set_inter_op_parallelism_threads")),
        ))
        self.keras = SimpleNamespace(mixed_precision=SimpleNamespace(
            set_global_policy=record("policy")))


def test_the_worker_makes_every_levers_calls_before_the_model() -> None:
    calls = Calls()
    apply_before_build(calls.tf, calls.keras, Arm(XlaMode.AUTOCLUSTER, Precision.BF16, knob="2"))
    assert calls.made == [
        ("optimizer.set_jit", ("autoclustering",)),
        ("policy", ("mixed_bfloat16",)),
        ("threading.set_inter_op_parallelism_threads", (2,)),
    ]
    # The baseline says each setting; the knob's baseline value sets nothing.
    calls = Calls()
    apply_before_build(calls.tf, calls.keras, BASELINE)
    assert calls.made == [("optimizer.set_jit", (False,)), ("policy", ("float32",))]
    with pytest.raises(AttributeError):
        tf_config_call(calls.tf, "threading.set_warp_speed")


def test_a_levers_check_is_found_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def check(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
        seen.append(value.value)
        return {}

    monkeypatch.setitem(worker_levers.CHECKS, "knob", check)
    monkeypatch.delitem(worker_levers.CHECKS, "precision")  # it reads a real Keras model
    model = SimpleNamespace(jit_compile=True)
    tf = SimpleNamespace(config=SimpleNamespace(
        optimizer=SimpleNamespace(get_jit=lambda: ""),
        threading=SimpleNamespace(get_intra_op_parallelism_threads=lambda: 0)))
    assert check_levers(tf, model, parse_arm("jit+knob2")) == {"xla_in_effect": True}
    assert seen == ["2"]
    with pytest.raises(RuntimeError, match="refusing to call it a baseline"):
        check_levers(tf, model, BASELINE)  # XLA on in a baseline


def test_its_runs_are_planned_and_its_workers_get_its_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(VARIABLE, "7")  # the shell's: no worker inherits it
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    config = RunConfig(image_size=48, batch_size=2, epochs=1, arms=("jit+knob2",))
    report = new_report(scan, config, environment={})
    assert [r.arm.name for r in plan_runs(config)] == ["off", "jit", "jit+knob2"]
    measure = plan_measure_runs(config)
    assert [(r.variant, r.levers) for r in measure] == [
        ("baseline", {}), ("xla", {"xla": "jit"}), ("jit+knob2", {"xla": "jit", "knob": "2"})]
    specs = [spec_for(r, report, samples_from_scan(scan), tmp_path / "out",
                      mode=WorkerMode.MEASURE) for r in measure]
    assert specs[2].arm == parse_arm("jit+knob2") and specs[2].xla_mode is XlaMode.JIT
    assert specs[2].arm.compile_arguments() == {"jit_compile": True, "steps_per_execution": 2}
    envs = [local_env(WorkerJob.of(s).settings(), s.run_dir) for s in specs]
    assert [env.get(VARIABLE) for env in envs] == [None, None, "2"]
