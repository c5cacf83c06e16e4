"""The interleaved measurement with real TensorFlow workers on tiny images and a tiny budget."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.images import make_split_dataset
from xlagui.core.compare import new_report, run_measurement
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import BlockEvent, FinishedEvent, StartedEvent, WarmupEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> DatasetScan:
    root = tmp_path_factory.mktemp("measure") / "data"
    make_split_dataset(
        root, {"african": 16, "asian": 16}, {"african": 4, "asian": 4}, size=(48, 48)
    )
    return scan_dataset(root)


def test_real_workers_measure_interleaved(scan: DatasetScan, tmp_path: Path) -> None:
    # A budget is wall time, and how many rounds fit in one depends on what else the machine
    # does (10 s gave 6 pairs on a quiet machine, 5 beside a screenshot session). A target of
    # ±50% instead ends the measurement at its first interval after the minimum rounds, on a
    # quiet machine or a busy one; the long budget is only a safety net.
    config = RunConfig(batch_size=8, image_size=48, quick=True, budget_seconds=300,
                       target_percent=50, seed=1)
    report = new_report(scan, config)
    run_measurement(report, scan, tmp_path / "out", TaskState())
    base, xla = report.measure_runs
    assert [base.status, xla.status] == ["finished", "finished"]
    started = [next(e for e in r.events if isinstance(e, StartedEvent)) for r in (base, xla)]
    assert [s.mode for s in started] == ["measure", "measure"]
    assert [s.xla_in_effect for s in started] == [False, True]
    assert all(any(isinstance(e, WarmupEvent) for e in r.events) for r in (base, xla))
    b_blocks = [e for e in base.events if isinstance(e, BlockEvent)]
    x_blocks = [e for e in xla.events if isinstance(e, BlockEvent)]
    assert len(b_blocks) == len(x_blocks) >= 6
    assert [e.seq for e in b_blocks] == list(range(len(b_blocks)))
    assert all(e.seconds > 0 and e.loss is not None for e in b_blocks + x_blocks)
    c = report.comparison
    assert c is not None and c.valid, c.problems if c else None
    i = c.interleaved
    assert i is not None and i.ratio is not None and i.ratio > 0
    assert i.stopped_by == "target"
    assert i.low is not None and i.high is not None and i.low <= i.ratio <= i.high
    # The XLA worker really compiled (evidence), the baseline did not.
    assert xla.summary is not None and xla.summary.xla_evidence is not None
    assert base.summary is not None and base.summary.xla_evidence is not None
    assert xla.summary.xla_evidence.compiled and not base.summary.xla_evidence.compiled
    data = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert data["comparison"]["interleaved"]["pairs"] == i.pairs
    # Each worker compiled its training step at the first warm-up step and its evaluation at
    # the end (8 validation images: one full batch, no recompile), and the file lists them.
    for run, saved in zip((base, xla), data["measure_runs"], strict=True):
        assert [(c.function, c.reason.kind) for c in run.compilations] == [
            ("train", "first_call"), ("eval", "first_call")]
        assert [c["function"] for c in saved["compilations"]] == ["train", "eval"]
        assert run.compilations[0].shapes == ("float32[8,48,48,3]", "float32[8]")


@pytest.mark.parametrize("arm", ["bf16", "fp16", "jit+bf16", "autocluster"])
def test_each_arm_kind_reads_back_what_is_in_effect(
    scan: DatasetScan, tmp_path: Path, arm: str
) -> None:
    """A real worker per arm kind: the policy, dtypes and loss scaling it reports are read back
    from the compiled model, and an XLA arm's evidence shows XLA compiling."""
    from xlagui.core.compare import plan_measure_runs, spec_for
    from xlagui.core.measure.runner import samples_from_scan
    from xlagui.core.measure.worker_process import WorkerProcess
    from xlagui.core.protocol.arms import parse_arm
    from xlagui.core.protocol.events import WorkerCommand

    config = RunConfig(batch_size=8, image_size=48, quick=True, seed=1, arms=(arm,), xla="jit")
    report = new_report(scan, config)
    entry = next(e for e in plan_measure_runs(config) if e.arm.name == arm)
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    events: list = []
    worker = WorkerProcess(spec, events.append)
    state = TaskState()
    worker.start()
    try:
        started = worker.wait_for("started", state)
        assert isinstance(started, StartedEvent)
        want = parse_arm(arm)
        assert started.precision == want.precision.value
        assert started.policy == want.precision.value
        assert started.compute_dtype == want.precision.compute_dtype
        assert started.variable_dtype == "float32"
        assert started.output_dtype == "float32"  # the head stays float32
        assert started.loss_scale is (arm == "fp16")
        if want.xla.value != "off":
            worker.send(WorkerCommand("warmup", steps=1))
            worker.wait_for("warmup", state)
            worker.send(WorkerCommand("finish"))
            finished = worker.wait_for("finished", state)
            assert isinstance(finished, FinishedEvent)
            summary = finished.summary
            assert summary.xla_evidence is not None
            assert summary.xla_evidence.compiled, summary.xla_evidence
            assert summary.mode == "measure" and summary.final_val_accuracy is not None
        else:
            worker.stop()
    finally:
        worker.close()


def test_keras_auto_arm_leaves_xla_off_on_a_cpu(scan: DatasetScan, tmp_path: Path) -> None:
    """`auto` is Keras 3's default jit_compile="auto": on a CPU-only machine Keras resolves it to
    no XLA, and the worker says so (the arm is then NOT VALID: it did not engage)."""
    from xlagui.core.compare import plan_measure_runs, spec_for
    from xlagui.core.measure.runner import samples_from_scan
    from xlagui.core.measure.worker_process import WorkerProcess
    from xlagui.core.protocol.events import WorkerCommand

    config = RunConfig(batch_size=8, image_size=48, quick=True, seed=1, arms=("auto",), xla="jit")
    report = new_report(scan, config)
    entry = next(e for e in plan_measure_runs(config) if e.arm.name == "auto")
    assert entry.xla_mode == "auto"
    spec = spec_for(entry, report, samples_from_scan(scan), tmp_path / "out",
                    mode=WorkerMode.MEASURE)
    worker = WorkerProcess(spec, lambda e: None)
    state = TaskState()
    worker.start()
    try:
        started = worker.wait_for("started", state)
        assert isinstance(started, StartedEvent)
        assert started.xla_mode == "auto" and started.xla_in_effect is False
        worker.send(WorkerCommand("warmup", steps=1))
        worker.wait_for("warmup", state)
        worker.send(WorkerCommand("finish"))
        finished = worker.wait_for("finished", state)
        assert isinstance(finished, FinishedEvent)
        assert finished.summary.xla_evidence is not None
        assert not finished.summary.xla_evidence.compiled
    finally:
        worker.close()
