"""Every compile and recompile of real workers (TensorFlow, 48 px, CPU): a validation set of
10 images in batches of 8 leaves a last partial batch of 2, which XLA compiles once more (the
baseline does not), found with its reason; `drop_remainder` removes it. Checked against XLA's
own log (`hlo.compile_times`: one `device_compilation_profiler` line per compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.measure.runner import RunResult, run_worker, samples_from_scan
from xlagui.core.protocol.compiles import CompileReasonKind, StepFunction
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import CompiledEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.xla.hlo import compile_times

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> DatasetScan:
    # 16 training images a class (4 steps of 8), 5 validation images a class: 10 = 8 + 2.
    return scan_dataset(tiny_split_dataset(tmp_path_factory.mktemp("data"), train=16, test=5))


def train_run(scan: DatasetScan, run_dir: Path, mode: XlaMode,
              worker: WorkerMode = WorkerMode.TRAIN, **config: object) -> RunResult:
    names, train, val = samples_from_scan(scan)
    cfg = RunConfig(**{"epochs": 2, "batch_size": 8, "image_size": 48, **config})  # type: ignore[arg-type]
    spec = RunSpec("r", "baseline" if mode is XlaMode.OFF else "xla", mode, cfg, names, train,
                   val, run_dir, mode=worker)
    return run_worker(spec, TaskState(), None)


def compiled(result: RunResult) -> list[CompiledEvent]:
    return [e for e in result.events if isinstance(e, CompiledEvent)]


def by_function(events: list[CompiledEvent]) -> dict[StepFunction, list[CompiledEvent]]:
    out: dict[StepFunction, list[CompiledEvent]] = {}
    for e in events:
        out.setdefault(e.function, []).append(e)
    return out


def test_xla_recompiles_the_partial_validation_batch_and_says_why(
    scan: DatasetScan, tmp_path: Path
) -> None:
    result = train_run(scan, tmp_path / "jit", XlaMode.JIT)
    assert result.summary is not None, result.events[-1]
    events = compiled(result)
    found = by_function(events)
    assert [e.reason.kind for e in found[StepFunction.TRAIN]] == [CompileReasonKind.FIRST_CALL]
    assert found[StepFunction.TRAIN][0].shapes == ["float32[8,48,48,3]", "float32[8]"]
    for fn in (StepFunction.EVAL, StepFunction.PREDICT):
        first, again = found[fn]
        assert first.reason.kind is CompileReasonKind.FIRST_CALL
        assert first.shapes == ["float32[8,48,48,3]", "float32[8]"]
        assert again.shapes == ["float32[2,48,48,3]", "float32[2]"]
        reason = again.reason
        assert (reason.kind, reason.dimension, reason.was, reason.now, reason.partial_batch) == (
            CompileReasonKind.NEW_SHAPE, 0, 8, 2, True)
    # XLA's own log: one compile line per compile found, no more, no fewer, in the same
    # order; a compile that traced anew is a function XLA had not compiled before, one that
    # did not (the partial batch in the same trace) compiles the last traced one again.
    logged = compile_times(tmp_path / "jit" / "worker.log")
    assert len(logged) == len(events) == 5
    in_order = sorted(events, key=lambda e: e.started)
    last_name: dict[StepFunction, str] = {}
    for event, (name, _) in zip(in_order, logged, strict=True):
        if event.traced:
            assert name not in last_name.values()
            last_name[event.function] = name
        else:
            assert name == last_name[event.function]
    for e in events:
        assert 0 < e.seconds <= e.step_seconds
    # Each compile's cost covers what XLA says its compile took (the step also traces).
    assert sum(e.seconds for e in events) >= 0.8 * sum(s for _, s in logged)
    # The comparison's record reads them back from the events.
    assert [c.function for c in result.compilations] == [e.function for e in events]


def test_the_baseline_compiles_once_per_function(scan: DatasetScan, tmp_path: Path) -> None:
    result = train_run(scan, tmp_path / "base", XlaMode.OFF)
    found = by_function(compiled(result))
    assert [e.reason.kind for e in found[StepFunction.TRAIN]] == [CompileReasonKind.FIRST_CALL]
    # Keras' evaluation traces once for the shape-relaxed iterator: no recompile without XLA.
    assert [e.reason.kind for e in found[StepFunction.EVAL]] == [CompileReasonKind.FIRST_CALL]


def test_drop_remainder_removes_the_recompile(scan: DatasetScan, tmp_path: Path) -> None:
    result = train_run(scan, tmp_path / "drop", XlaMode.JIT, drop_remainder=True, epochs=1)
    events = compiled(result)
    assert not [e for e in events if e.reason.kind is not CompileReasonKind.FIRST_CALL]
    assert sorted(e.function for e in events) == sorted(StepFunction)
    assert len(compile_times(tmp_path / "drop" / "worker.log")) == len(events) == 3


def test_auto_clustering_recompiles_the_partial_batch_at_its_second_pass(
    scan: DatasetScan, tmp_path: Path
) -> None:
    result = train_run(scan, tmp_path / "auto", XlaMode.AUTOCLUSTER)
    evals = [e for e in compiled(result) if e.function is StepFunction.EVAL]
    assert [e.reason.kind for e in evals] == [CompileReasonKind.FIRST_CALL,
                                             CompileReasonKind.NEW_SHAPE]
    assert evals[1].reason.partial_batch and evals[1].reason.now == 2
    # XLA's log: some clusters compiled a second time (for the partial batch's shape).
    names = [name for name, _ in compile_times(tmp_path / "auto" / "worker.log")]
    assert len(set(names)) < len(names)


def test_the_inspecting_worker_reports_its_one_compile(scan: DatasetScan, tmp_path: Path) -> None:
    result = train_run(scan, tmp_path / "inspect", XlaMode.JIT, worker=WorkerMode.INSPECT,
                       explain=False)
    (only,) = compiled(result)
    assert only.function is StepFunction.TRAIN and only.reason.kind is CompileReasonKind.FIRST_CALL
    assert only.steady_seconds is None and only.seconds == only.step_seconds > 0
    assert len(compile_times(tmp_path / "inspect" / "worker.log")) == 1


def test_the_explaining_worker_compiles_the_train_step_once(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """The why's worker: its parity steps compile the train step (its later steps are the
    steady ones the cost is taken from) and the prediction on the fixed batch, once each, as
    XLA's own log says; the profile and the references reuse them."""
    result = train_run(scan, tmp_path / "why", XlaMode.JIT, worker=WorkerMode.INSPECT)
    assert result.summary is not None, result.events[-1]
    found = by_function(compiled(result))
    (train,) = found[StepFunction.TRAIN]
    (predict,) = found[StepFunction.PREDICT]
    assert train.reason.kind is CompileReasonKind.FIRST_CALL and train.steady_seconds is not None
    assert 0 < train.seconds < train.step_seconds
    assert predict.reason.kind is CompileReasonKind.FIRST_CALL
    assert len(compile_times(tmp_path / "why" / "worker.log")) == 2
    assert result.explained is not None and result.explained.profile is not None
