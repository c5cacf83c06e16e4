"""A sweep on a real local Ray head, started by the test in a temporary folder and stopped after
(`tests/helpers/ray_head.py`); it fails, never skips, when Ray cannot start.

The head runs without this checkout on its PYTHONPATH, so each cell's task imports xlagui from
the job's `py_modules`, and the dataset reaches it as an archive through the object store. With
the fake measuring workers: two cells end done, with the node's facts and their files back; a
cell whose Ray worker crashes is rerun and says so. With TensorFlow (`tf`): the 2-cell sweep at
48 px of the issue, each cell's interval around its ratio.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import ray.cloudpickle

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.ray_head import LOOPBACK, RayHead, driver_env, ray_head, ray_node
from xlagui.cli import main
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellJob, CellResult, CellStatus
from xlagui.core.sweep.cluster import DispatchOptions, RayExecutor, RayOptions
from xlagui.core.sweep.cluster.node import CACHE_NAME
from xlagui.core.sweep.plan import CELL_OVERHEAD_SECONDS, Axis, plan_sweep
from xlagui.core.sweep.result import SweepResult
from xlagui.core.sweep.runner import SweepRequest, SweepWatcher, run_sweep

FAKE_MEASURE = Path(__file__).resolve().parents[3] / "helpers" / "fake_measure_worker.py"

# The node cannot import this test module (only xlagui travels): its functions travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def fake_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


def crash_once_then_fake(spec: RunSpec) -> list[str]:
    """The first cell started crashes the Ray worker running it (as a node's OOM killer or a
    segfault would); every later one measures with the fake workers."""
    marker = Path(spec.config.extra["crash_marker"])
    if not marker.exists():
        marker.write_text("crashed")
        os._exit(1)
    return fake_command(spec)


def mark_then_fake(spec: RunSpec) -> list[str]:
    """Says the cell's workers are starting (a file the test waits for); the fake workers
    carry the test's token on their command line, for the test to find them afterwards."""
    extra = spec.config.extra
    Path(extra["started_marker"]).write_text("started")
    return [*fake_command(spec), json.dumps({"token": extra["token"]})]


def mark_node_then_fake(spec: RunSpec) -> list[str]:
    """Says which node's task starts the cell's workers (a file per node: the test's second node
    has XLAGUI_TEST_NODE in its environment)."""
    extra = spec.config.extra
    which = os.environ.get("XLAGUI_TEST_NODE", "head")
    (Path(extra["markers"]) / f"started-{which}").write_text(str(spec.config.batch_size))
    return fake_command(spec)


def _processes_with(token: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if token in cmdline and "pytest" not in cmdline:
            found.append(f"{pid}: {cmdline}")
    return found


@pytest.fixture(scope="module")
def head() -> Iterator[RayHead]:
    with ray_head(num_cpus=2) as started:
        yield started


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ray puts the driver's working folder on its workers' path (a node of a real cluster has
    no such folder): run from one without xlagui, so the workers' xlagui is the job's. (The
    driver, this process, has the test run's Ray token from tests/conftest.py.)"""
    monkeypatch.chdir(tmp_path)
    assert {k: os.environ.get(k) for k in driver_env()} == driver_env()


class Told(SweepWatcher):
    def __init__(self) -> None:
        self.started: list[str] = []

    def on_cell_started(self, cell: object) -> None:
        self.started.append(getattr(cell, "key", ""))


def _sweep(head: RayHead, tmp_path: Path, base: RunConfig, sizes: tuple[str, ...],
           job: CellJob) -> SweepResult:
    plan = plan_sweep(base, [Axis("batch_size", sizes)], None)
    executor = RayExecutor(RayOptions(address=head.address,
                                      dispatch=DispatchOptions(poll_seconds=0.5)))
    return run_sweep(SweepRequest(plan=plan, job=job), Told(), TaskState(), executor)


def _check_node_facts(result: CellResult) -> None:
    facts = result.environment["ray"]
    assert facts["node_id"] and facts["resources"]["CPU"] == 2.0  # the whole node
    assert "py_modules_files" in facts["package"]  # xlagui came with the job
    assert result.environment["hostname"] == result.node or result.node


def test_a_sweep_runs_on_a_ray_head_with_the_dataset_through_the_object_store(
        head: RayHead, tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=fake_command)
    result = _sweep(head, tmp_path, base, ("4", "8"), job)
    assert [c.status for c in result.cells] == [CellStatus.DONE] * 2, [c.reason for c in
                                                                      result.cells]
    for cell in result.cells:
        _check_node_facts(cell)
        jit = cell.arm("jit")
        assert jit is not None and jit.ratio == pytest.approx(0.5, rel=0.02)
        assert jit.low is not None and jit.high is not None and jit.low <= jit.ratio <= jit.high
        assert cell.attempts == 1 and cell.lost_nodes == []
        saved = json.loads((tmp_path / "sweep" / cell.comparison_dir / "comparison.json")
                           .read_text())
        assert CACHE_NAME in json.dumps(saved)  # measured on the node's unpacked copy
    saved_cells = json.loads((tmp_path / "sweep" / "sweep.json").read_text())["cells"]
    assert [c["status"] for c in saved_cells] == ["done", "done"]
    assert all(c["environment"]["ray"]["node_id"] for c in saved_cells)


def test_with_a_shared_path_the_nodes_read_the_dataset_there(
        head: RayHead, tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "shared", train=8, test=2)
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01}})
    job = CellJob(dataset="/nonexistent/on/the/driver", folder=tmp_path / "sweep",
                  worker_command=fake_command)
    plan = plan_sweep(base, [Axis("batch_size", ("4",))], None)
    executor = RayExecutor(RayOptions(address=head.address, remote_data=str(data),
                                      dispatch=DispatchOptions(poll_seconds=0.5)))
    result = run_sweep(SweepRequest(plan=plan, job=job), Told(), TaskState(), executor)
    [cell] = result.cells
    assert cell.status == CellStatus.DONE, cell.reason
    saved = (tmp_path / "sweep" / cell.comparison_dir / "comparison.json").read_text()
    assert str(data) in saved and CACHE_NAME not in saved


def test_a_cell_whose_ray_worker_crashed_is_rerun_and_says_so(
        head: RayHead, tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    marker = tmp_path / "crashed"
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.01},
                                           "crash_marker": str(marker)})
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep",
                  worker_command=crash_once_then_fake)
    result = _sweep(head, tmp_path, base, ("4",), job)
    [cell] = result.cells
    assert marker.exists()
    assert cell.status == CellStatus.DONE, cell.reason
    assert cell.attempts == 2
    assert cell.lost_nodes == [cell.node]  # one node: the rerun is on the same machine


def test_a_stop_cancels_the_cell_on_its_node_and_its_workers_end(
        head: RayHead, tmp_path: Path) -> None:
    """Stopped while its fake workers measure (each block really sleeps): Ray's polite cancel
    reaches the task, the cell stops its workers and is interrupted (run again on resume), the
    next cell never starts, and no worker outlives the sweep."""
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    marker, token = tmp_path / "started", f"xlagui-test-{uuid.uuid4().hex}"
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.2, "sleep": 1.0},
                                           "started_marker": str(marker), "token": token})
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep", worker_command=mark_then_fake)
    plan = plan_sweep(base, [Axis("batch_size", ("4", "8"))], None)
    state = TaskState()

    def stop_once_started() -> None:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        state.request_interruption()

    stopper = threading.Thread(target=stop_once_started, daemon=True)
    stopper.start()
    executor = RayExecutor(RayOptions(address=head.address,
                                      dispatch=DispatchOptions(poll_seconds=0.5)))
    told = Told()
    result = run_sweep(SweepRequest(plan=plan, job=job), told, state, executor)
    stopper.join()
    assert marker.exists()
    assert result.stopped and told.started == ["b4"]  # the second cell never started
    assert [c.status for c in result.cells] == [CellStatus.INTERRUPTED]
    # Ended with the sweep: a worker told to stop may still be exiting when the node's task
    # returns (seen once beside another test on 2 cores), so within seconds, as test_faults.gone.
    deadline = time.monotonic() + 10
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(token) == []


def test_a_cell_whose_node_died_is_rerun_on_another_node(tmp_path: Path) -> None:
    """Two nodes, a cell on each; the second node is killed (its whole process group, as a
    machine that dies) while its cell measures: that cell is rerun on the head once the head's
    own cell is done, and its row says so; the head's cell is untouched. A cluster of its own:
    Ray lists a dead node as alive for a while, which would change the other tests' sweeps."""
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    markers = tmp_path / "markers"
    markers.mkdir()
    base = RunConfig(image_size=48, extra={"fake": {"step": 0.05, "sleep": 1.0},
                                           "markers": str(markers)})
    job = CellJob(dataset=str(data), folder=tmp_path / "sweep",
                  worker_command=mark_node_then_fake)
    plan = plan_sweep(base, [Axis("batch_size", ("4", "8"))], 2 * (CELL_OVERHEAD_SECONDS + 10))
    with ray_head(num_cpus=1) as head, \
            ray_node(head, num_cpus=1, env={"XLAGUI_TEST_NODE": "second"}) as second:

        def kill_once_started() -> None:
            deadline = time.monotonic() + 120
            while not (markers / "started-second").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            second.kill()

        killer = threading.Thread(target=kill_once_started, daemon=True)
        killer.start()
        executor = RayExecutor(RayOptions(address=head.address,
                                          dispatch=DispatchOptions(poll_seconds=0.5)))
        result = run_sweep(SweepRequest(plan=plan, job=job), Told(), TaskState(), executor)
        killer.join()
    assert (markers / "started-second").exists()
    assert [c.status for c in result.cells] == [CellStatus.DONE] * 2, [
        (c.failure, c.reason) for c in result.cells]
    [rerun] = [c for c in result.cells if c.lost_nodes]
    [untouched] = [c for c in result.cells if not c.lost_nodes]
    assert rerun.attempts == 2 and untouched.attempts == 1
    assert rerun.environment["ray"]["node_id"] == untouched.environment["ray"]["node_id"]


@pytest.mark.tf
def test_a_real_one_cell_sweep_at_48_px_on_a_ray_head(
        head: RayHead, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`xlagui sweep --demo --batch 16 --arms jit --image-size 48 --ray ADDRESS`: the cell a
    real interleaved comparison in fresh TensorFlow workers on the head's node, its ratio within
    its interval, the node's environment recorded (a short budget: the figures need not be
    tight). One cell: the dispatch of several, a lost node and a stop are the fake workers'
    tests above, and tests/cli/test_sweep.py runs the real two-cell sweep locally."""
    out = tmp_path / "s"
    code = main(["sweep", "--demo", "--batch", "16", "--arms", "jit", "--image-size", "48",
                 "--budget", str(CELL_OVERHEAD_SECONDS + 10), "--out", str(out),
                 "--ray", head.address])
    text = capsys.readouterr()
    assert code == 0, text
    saved = json.loads((out / "sweep.json").read_text())
    assert [c["settings"]["batch_size"] for c in saved["cells"]] == ["16"]
    for cell in saved["cells"]:
        assert cell["status"] == "done", cell["reason"]
        _check_node_facts(CellResult.from_dict(cell))
        assert cell["environment"]["tensorflow"] and cell["environment"]["cpu_count"]
        (arm,) = cell["arms"]
        assert arm["arm"] == "jit" and arm["pairs"] > 0 and arm["ratio"] > 0
        if arm["low"] is not None:  # an interval, when the budget bought enough rounds
            assert 0 < arm["low"] <= arm["ratio"] <= arm["high"]
        assert (out / cell["comparison_dir"] / "comparison.json").is_file()


def test_a_head_that_wants_a_token_is_said_plainly_with_how_to_give_it(
        head: RayHead, tmp_path: Path) -> None:
    """A driver without the cluster's token (token authentication on, no RAY_AUTH_TOKEN, an
    empty home with no ~/.ray/auth_token) is told why it was refused and how to pass the token,
    in one message and exit 2, before anything is planned: no traceback, no retries."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RAY_AUTH_") and k not in ("PYTHONPATH", "RAY_ADDRESS")}
    env.update(RAY_AUTH_MODE="token", HOME=str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "xlagui", "sweep", "--demo", "--batch", "16",
         "--ray", head.address, "--out", str(tmp_path / "s")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    err = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr[-3000:]
    assert f"The Ray cluster at {head.address} refused this machine" in err
    assert "RAY_AUTH_TOKEN" in err and "ray get-auth-token" in err
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "s").exists()


def test_the_head_and_the_driver_use_loopback_only(head: RayHead) -> None:
    """Nothing of the test's cluster is on the machine's network address: the head advertises
    the loopback address it was given, and the driver joins there."""
    import ray

    from xlagui.core.sweep.cluster.executor import connect

    assert head.address.startswith(f"{LOOPBACK}:")
    assert connect(ray, head.address)
    try:
        addresses = {n["NodeManagerAddress"] for n in ray.nodes() if n["Alive"]}
        assert addresses == {LOOPBACK}
        assert ray.util.get_node_ip_address() == LOOPBACK
    finally:
        ray.shutdown()


def test_a_nodes_worker_ports_stay_below_the_ports_its_other_parts_get() -> None:
    """Each node's block of worker ports lies below the system's ephemeral ports, where
    `free_ports` finds the node's other ports: Ray refuses a node whose worker range holds one
    of them (it failed a CI run once, with the blocks reaching into the ephemeral range)."""
    from tests.helpers import ray_head as helper

    low = helper._ephemeral_low()
    for _ in range(16):  # every block this process hands out, and more
        first, last = (int(word.split("=")[1]) for word in helper._worker_ports())
        assert 10000 <= first < last < low
        assert not any(first <= port <= last for port in helper.free_ports(7))
