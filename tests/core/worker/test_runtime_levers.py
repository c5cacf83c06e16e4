"""The runtime levers in a worker: the comparison's levers (`RunConfig.levers`) reach every
worker, the baseline too, an arm's own values winning; what each sets is made before the model
is built; and a worker that did not get a value is refused (no TensorFlow: stand-ins)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import new_report, plan_measure_runs, spec_for
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.jobs import WorkerJob
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.transports.environment import local_env
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.levers import ONEDNN, SPE, THREADS, XLA_FLAGS
from xlagui.core.worker.levers import CHECKS, apply_before_build

ONEDNN_VARIABLE = "TF_ENABLE_ONEDNN_OPTS"


def test_the_comparisons_levers_reach_every_worker_and_an_arms_own_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ONEDNN_VARIABLE, "1")  # the shell's: no worker inherits it
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    config = RunConfig(image_size=48, batch_size=2, arms=("jit+dnn",),
                       levers={"onednn": "off", "threads": "1"})
    report = new_report(scan, config, environment={})
    specs = [spec_for(r, report, samples_from_scan(scan), tmp_path / "out",
                      mode=WorkerMode.MEASURE) for r in plan_measure_runs(config)]
    assert [s.variant for s in specs] == ["baseline", "xla", "jit+dnn"]
    assert specs[0].levers == {}  # the record keeps the arm compared, not the settings
    envs = [local_env(WorkerJob.of(s).settings(), s.run_dir) for s in specs]
    assert [env.get(ONEDNN_VARIABLE) for env in envs] == ["0", "0", "1"]
    assert [s.arm.effective(s.config).value(THREADS).value for s in specs] == ["1"] * 3
    plain = RunConfig(image_size=48, batch_size=2)
    baseline = spec_for(plan_measure_runs(plain)[0], new_report(scan, plain, environment={}),
                        samples_from_scan(scan), tmp_path / "plain", mode=WorkerMode.MEASURE)
    assert ONEDNN_VARIABLE not in local_env(WorkerJob.of(baseline).settings(), tmp_path)


def test_threads_and_steps_are_set_before_the_model() -> None:
    made: list[tuple[str, tuple[object, ...]]] = []

    def record(name: str) -> Any:
        return lambda *args: made.append((name, args))

    tf = SimpleNamespace(config=SimpleNamespace(
        optimizer=SimpleNamespace(set_jit=record("set_jit")),
        threading=SimpleNamespace(set_intra_op_parallelism_threads=record("intra"))))
    keras = SimpleNamespace(mixed_precision=SimpleNamespace(set_global_policy=record("policy")))
    arm = parse_arm("jit+spe8").effective(RunConfig(levers={"threads": "2"}))
    apply_before_build(tf, keras, arm)
    assert made == [("set_jit", (False,)), ("policy", ("float32",)), ("intra", (2,))]
    assert arm.compile_arguments() == {"jit_compile": True, "steps_per_execution": 8}


def test_a_worker_that_did_not_get_a_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    tf = SimpleNamespace(config=SimpleNamespace(threading=SimpleNamespace(
        get_intra_op_parallelism_threads=lambda: 0)))
    assert CHECKS["threads"](tf, None, THREADS.default) == {}
    with pytest.raises(RuntimeError, match="asked for 2 intra-op threads but TensorFlow uses 0"):
        CHECKS["threads"](tf, None, THREADS.of("2"))
    model = SimpleNamespace(steps_per_execution=1)
    assert CHECKS["spe"](tf, model, SPE.default) == {}
    with pytest.raises(RuntimeError, match="asked for steps_per_execution=8 but the model has 1"):
        CHECKS["spe"](tf, model, SPE.of("8"))
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_use_xnnpack=false --xla_dump_to=/x")
    monkeypatch.delenv(ONEDNN_VARIABLE, raising=False)
    assert CHECKS["xla_flags"](tf, model, XLA_FLAGS.of("--xla_cpu_use_xnnpack=false")) == {}
    assert CHECKS["onednn"](tf, model, ONEDNN.default) == {}
    with pytest.raises(RuntimeError, match="asked for TF_ENABLE_ONEDNN_OPTS=0"):
        CHECKS["onednn"](tf, model, ONEDNN.of("off"))
