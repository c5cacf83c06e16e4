"""`run_sweep`: resume (a folder with 2 of 4 cells done runs 2; a finished one runs nothing), a
stop keeps the finished cells, a folder holding another sweep is refused, a failed cell keeps
the sweep going, and the cells' comparisons really run (with the fake measuring workers of
tests/helpers/fake_measure_worker.py, in fresh processes per cell)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import ArmRatio, CellFailure, CellJob, CellResult, CellStatus
from xlagui.core.sweep.plan import CELL_OVERHEAD_SECONDS, Axis, Cell, SweepPlan, plan_sweep
from xlagui.core.sweep.result import SweepResult
from xlagui.core.sweep.runner import OnRound, SweepRequest, SweepWatcher, run_sweep
from xlagui.core.sweep.store import SweepMismatch, open_sweep, write_sweep

FAKE_MEASURE = Path(__file__).resolve().parents[2] / "helpers" / "fake_measure_worker.py"


def fake_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


class CountingExecutor:
    """Runs no comparison: each cell is done at once with a made-up ratio; it counts what ran,
    and stops (as a Ctrl+C would) after `stop_after` cells, the next one interrupted."""

    def __init__(self, stop_after: int | None = None) -> None:
        self.ran: list[str] = []
        self.stop_after = stop_after

    def run(self, cells: Sequence[Cell], job: CellJob, state: TaskState,
            on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
            on_round: OnRound | None = None) -> None:
        for cell in cells:
            if state.is_interruption_requested():
                return
            on_started(cell)
            self.ran.append(cell.key)
            if self.stop_after is not None and len(self.ran) > self.stop_after:
                state.request_interruption()
                on_done(CellResult(key=cell.key, status=CellStatus.INTERRUPTED))
                return
            on_done(CellResult(key=cell.key, status=CellStatus.DONE, wall_seconds=10.0,
                               arms=[ArmRatio("jit", 0.8, 0.75, 0.85, 12)]))


class Told(SweepWatcher):
    def __init__(self) -> None:
        self.kept: list[str] = []
        self.done: list[tuple[str, int, int, float | None]] = []

    def on_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        self.kept = [c.key for c in kept]

    def on_cell_done(self, result: CellResult, done: int, total: int,
                     eta_seconds: float | None) -> None:
        self.done.append((result.key, done, total, eta_seconds))


def four_cells() -> SweepPlan:
    return plan_sweep(RunConfig(image_size=48),
                      [Axis("batch_size", ("4", "8")), Axis("image_size", ("48", "64"))], None)


def sweep(plan: SweepPlan, folder: Path, executor: CountingExecutor,
          watcher: SweepWatcher | None = None) -> SweepResult:
    request = SweepRequest(plan=plan, job=CellJob(dataset="", folder=folder),
                           markdown=lambda r: f"{len(r.cells)} cells\n")
    return run_sweep(request, watcher or SweepWatcher(), TaskState(), executor)


def test_a_stopped_sweep_resumes_with_the_missing_cells_only(tmp_path: Path) -> None:
    plan = four_cells()
    first = CountingExecutor(stop_after=2)
    result = sweep(plan, tmp_path, first)
    assert result.stopped and len(first.ran) == 3 and not result.complete
    saved = json.loads((tmp_path / "sweep.json").read_text())
    assert [c["status"] for c in saved["cells"]] == ["done", "done", "interrupted"]
    assert saved["cells"][0]["settings"] == {"batch_size": "4", "image_size": "48"}
    assert saved["cells"][0]["arms"][0] == {"arm": "jit", "ratio": 0.8, "low": 0.75,
                                            "high": 0.85, "pairs": 12, "valid": True,
                                            "busy": False}

    second, told = CountingExecutor(), Told()
    result = sweep(plan, tmp_path, second, told)
    assert told.kept == [c.key for c in plan.cells[:2]]
    assert second.ran == [c.key for c in plan.cells[2:]]  # 2 of 4 were done: 2 run
    assert result.complete and result.ran == 2 and not result.stopped
    assert [d[1:3] for d in told.done] == [(3, 4), (4, 4)]
    assert told.done[0][3] == pytest.approx(10.0)  # one missing, 10 s each
    assert told.done[1][3] == 0

    reopened = open_sweep(tmp_path)  # as the window reopens a sweep folder
    assert reopened is not None and reopened.plan == plan
    assert [c.key for c in reopened.cells] == [c.key for c in plan.cells]
    assert open_sweep(tmp_path / "nothing") is None

    third = CountingExecutor()
    result = sweep(plan, tmp_path, third)
    assert third.ran == [] and result.ran == 0 and result.complete  # finished: nothing runs
    assert (tmp_path / "sweep.md").read_text() == "4 cells\n"
    rows = (tmp_path / "sweep.csv").read_text().splitlines()
    assert rows[0].startswith("key,batch_size,image_size,host,status,failure,reason,arm,ratio")
    assert rows[1].startswith("b4-px48,4,48,,done,,,jit,0.8000,0.7500,0.8500,12,True")


def test_a_cell_whose_machine_was_not_there_runs_again_and_a_refused_one_does_not(
        tmp_path: Path) -> None:
    plan = four_cells()
    results = [CellResult(key=plan.cells[0].key, status=CellStatus.FAILED,
                          failure=CellFailure.MACHINE, reason="could not connect"),
               CellResult(key=plan.cells[1].key, status=CellStatus.FAILED,
                          failure=CellFailure.SETTINGS, reason="batch too large"),
               CellResult(key=plan.cells[2].key, status=CellStatus.FAILED,
                          failure=CellFailure.NODE_LOST, reason="")]
    write_sweep(tmp_path, plan, results)
    again = CountingExecutor()
    sweep(plan, tmp_path, again)
    assert again.ran == [plan.cells[0].key, plan.cells[2].key, plan.cells[3].key]


def test_a_folder_holding_another_sweep_is_refused_with_what_differs(tmp_path: Path) -> None:
    sweep(four_cells(), tmp_path, CountingExecutor())
    other = plan_sweep(RunConfig(image_size=48, seed=7),
                       [Axis("batch_size", ("4", "16")), Axis("image_size", ("48", "64"))], None)
    with pytest.raises(SweepMismatch) as caught:
        sweep(other, tmp_path, CountingExecutor())
    assert caught.value.differences == ["seed: 0 → 7", "axis batch_size: 4,8 → 4,16"]
    # another budget is the same sweep: it resumes
    budget = plan_sweep(RunConfig(image_size=48),
                        [Axis("batch_size", ("4", "8")), Axis("image_size", ("48", "64"))],
                        4 * (CELL_OVERHEAD_SECONDS + 20))
    assert sweep(budget, tmp_path, CountingExecutor()).ran == 0


def test_cells_run_as_comparisons_and_a_failed_cell_keeps_the_sweep_going(
        tmp_path: Path) -> None:
    """Three cells with the fake measuring workers: batch 500 is larger than the training set
    (failed, with its reason), image 30 too small for the CNN (failed when planned), batch 4
    measured: the XLA side's ratio 0.5 (the fake's), with its interval."""
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("batch_size", ("500", "4")), Axis("image_size", ("30", "48"))],
                      4 * (CELL_OVERHEAD_SECONDS + 10))
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    told = Told()
    result = run_sweep(SweepRequest(plan=plan, job=job), told, TaskState())
    by_key = {c.key: c for c in result.cells}
    assert [d[0] for d in told.done] == [c.key for c in plan.cells]
    assert by_key["b500-px48"].status == CellStatus.FAILED
    assert "larger than the training set" in by_key["b500-px48"].reason
    assert by_key["b4-px30"].status == CellStatus.FAILED
    assert "smallest image it accepts is 36x36" in by_key["b4-px30"].reason
    done = by_key["b4-px48"]
    assert done.status == CellStatus.DONE, done.reason
    jit = done.arm("jit")
    assert jit is not None and jit.ratio == pytest.approx(0.5, rel=0.02)
    assert jit.low is not None and jit.high is not None and jit.low <= jit.ratio <= jit.high
    assert done.environment and done.node
    report = json.loads((tmp_path / "sweep" / "cells" / "b4-px48" / "comparison.json").read_text())
    assert report["config"]["quick"] and not report["config"]["explain"]
    assert report["inspect_runs"] == []  # speed only: no inspection compile (`inspect=False`)
    saved = json.loads((tmp_path / "sweep" / "sweep.json").read_text())
    assert [c["status"] for c in saved["cells"]] == ["failed", "failed", "failed", "done"]


def test_a_stop_during_a_cell_keeps_the_finished_ones_and_that_cell_runs_again(
        tmp_path: Path) -> None:
    """Stopped in the second cell's measurement (as Ctrl+C does): the first stays done, the
    second is `interrupted` (not kept as done), the third never starts; the rerun measures the
    second and the third."""
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("batch_size", ("2", "4", "8"))],
                      3 * (CELL_OVERHEAD_SECONDS + 10))
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    state = TaskState()

    class StopInSecond(Told):
        def on_cell_event(self, cell: Cell, report: object) -> None:
            if cell.key == "b4":
                state.request_interruption()

    told = StopInSecond()
    result = run_sweep(SweepRequest(plan=plan, job=job), told, state)
    assert result.stopped and [d[0] for d in told.done] == ["b2", "b4"]
    assert [(c.key, c.status) for c in result.cells] == [
        ("b2", CellStatus.DONE), ("b4", CellStatus.INTERRUPTED)]
    again = Told()
    result = run_sweep(SweepRequest(plan=plan, job=job), again, TaskState())
    assert again.kept == ["b2"] and [d[0] for d in again.done] == ["b4", "b8"]
    assert result.complete and all(c.status == CellStatus.DONE for c in result.cells)


def test_each_cell_of_a_host_axis_runs_wholly_on_its_host(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host axis reaches the transports as `compare --host` does: the cell on
    `elsewhere://box` (tests/helpers/elsewhere.py, a registered transport) runs there and
    records that machine's environment; the local cell this computer's."""
    from tests.helpers import elsewhere

    elsewhere.register(monkeypatch)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, batch_size=4, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("host", ("local", elsewhere.HOST))],
                      2 * (CELL_OVERHEAD_SECONDS + 10))
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    result = run_sweep(SweepRequest(plan=plan, job=job), SweepWatcher(), TaskState())
    here, there = result.cells
    assert here.status == there.status == CellStatus.DONE, (here.reason, there.reason)
    assert plan.cells[0].host is None and plan.cells[1].host == elsewhere.HOST
    assert there.node == elsewhere.HOST and there.environment["tensorflow"] == "2.99"
    assert here.environment and here.environment.get("tensorflow") != "2.99"
    assert "connect" in elsewhere.ElsewhereTransport.log


def test_a_runtime_setting_axis_reaches_every_worker_of_its_cell(tmp_path: Path) -> None:
    """`lever:threads` (`--set threads=1,2`): each cell's workers, the baseline's too, are
    given that cell's thread count (`RunConfig.levers`, in every spec)."""
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, batch_size=4, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("lever:threads", ("1", "2"))], 2 * (CELL_OVERHEAD_SECONDS + 10))
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    result = run_sweep(SweepRequest(plan=plan, job=job), SweepWatcher(), TaskState())
    assert [c.status for c in result.cells] == [CellStatus.DONE, CellStatus.DONE]
    for cell, threads in zip(plan.cells, ("1", "2"), strict=True):
        specs = sorted((tmp_path / "sweep" / "cells" / cell.key).rglob("spec.json"))
        assert len(specs) >= 2  # the baseline's and the XLA side's, at least
        for spec in specs:
            assert json.loads(spec.read_text())["config"]["levers"] == {"threads": threads}


def test_a_sweep_never_trains_on_a_file_the_user_left_out(tmp_path: Path) -> None:
    """Issue 38: a sweep's cells carry the Dataset tab's exclusions. A real scan of a folder
    with a duplicate in a class, that duplicate left out: the cell's comparison records it as
    left out, and no worker's spec lists it (with the rule removed, every spec did)."""
    import shutil

    from xlagui.core.data.exclusions import Exclusions
    from xlagui.core.data.scan import scan_dataset

    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    first = sorted((data / "train" / "african").iterdir())[0]
    copy = data / "train" / "african" / "zz-copy.jpg"
    shutil.copy(first, copy)
    scan = scan_dataset(data)
    exclusions = Exclusions.of_kinds(scan, ["duplicate"])
    assert [f.rel for f in exclusions.files(scan)] == ["train/african/zz-copy.jpg"]
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("batch_size", ("4",))], CELL_OVERHEAD_SECONDS + 10)
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command,
                  left_out=exclusions.portable(str(data)))
    result = run_sweep(SweepRequest(plan=plan, job=job), Told(), TaskState())
    assert [c.status for c in result.cells] == [CellStatus.DONE], result.cells[0].reason
    cell = tmp_path / "sweep" / "cells" / "b4"
    report = json.loads((cell / "comparison.json").read_text())
    assert [f["path"] for f in report["dataset"]["excluded"]["files"]] == [
        "train/african/zz-copy.jpg"]
    specs = sorted(cell.rglob("spec.json"))
    assert specs
    for spec in specs:
        assert "zz-copy" not in spec.read_text(), spec
        assert first.name in spec.read_text()  # the original stays


def test_a_sweep_scans_its_folder_once_not_once_per_cell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xlagui.core.compare import inputs

    scanned: list[str] = []
    real = inputs.open_dataset  # the front door's scan, which a cell imports when it runs

    def counting(root: str, **kwargs: int) -> object:
        scanned.append(root)
        return real(root, **kwargs)

    monkeypatch.setattr(inputs, "open_dataset", counting)
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    plan = plan_sweep(base, [Axis("batch_size", ("2", "4"))], 2 * (CELL_OVERHEAD_SECONDS + 10))
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    result = run_sweep(SweepRequest(plan=plan, job=job), Told(), TaskState())
    assert [c.status for c in result.cells] == [CellStatus.DONE, CellStatus.DONE]
    assert scanned == [str(data)]
