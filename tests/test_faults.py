"""Faults: killed workers, a killed app, out of memory, unwritable output. Nothing finished is
lost, every failure is said in plain words, and no process is left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.streams import FakeWorker, run_events
from xlagui.cli import main
from xlagui.core.compare import SaveError, new_report, run_comparison
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import RunResult, run_worker, samples_from_scan
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import history
from xlagui.present.errors import error_hint


def start_cli(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "xlagui", "compare", *args, "--events"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def events_until(proc: subprocess.Popen[str], stop: Any, within: float = 400.0
                 ) -> list[dict[str, Any]]:
    """Read event lines until `stop(event)` is true; fails when the stream ends first, or when
    none within `within` seconds was (the process is then killed, which ends the stream)."""
    assert proc.stdout is not None
    seen = []
    late = threading.Event()

    def give_up() -> None:
        late.set()
        proc.kill()

    timer = threading.Timer(within, give_up)
    timer.start()
    try:
        for line in proc.stdout:
            if line.startswith("{"):
                event = json.loads(line)
                seen.append(event)
                if stop(event):
                    return seen
    finally:
        timer.cancel()
    why = f"not within {within:.0f} s (killed)" if late.is_set() else "the stream ended first"
    raise AssertionError(f"the awaited event never came: {why}, exit {proc.wait(timeout=30)}; "
                         f"the last events: {[e.get('type') for e in seen[-5:]]}")


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.tf
def test_kill_9_of_a_worker_mid_epoch(tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d")
    out = tmp_path / "out"
    proc = start_cli(
        [str(data), "--epochs", "4", "--batch", "8", "--image-size", "48", "--budget", "10",
         "--no-explain", "--out", str(out)]
    )
    seen = events_until(proc, lambda e: e["type"] == "epoch")
    # The training run's worker (the speed phase's measuring workers came first, and ended).
    worker_pid = next(
        e["pid"] for e in seen if e["type"] == "started" and e.get("mode") == "train"
    )
    os.kill(worker_pid, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1
    lines = [json.loads(x) for x in stdout.splitlines() if x.startswith("{")]
    error = next(e for e in lines if e["type"] == "error")
    assert error["run_id"].endswith("baseline-r1")
    assert "killed (SIGKILL)" in error["message"] and error["kind"] == "killed"
    assert "failed" in stderr and "killed" in stderr
    assert "probably ran out of memory" in stderr.replace("\n", " ")  # the kind, in words
    report = json.loads((out / "comparison.json").read_text())
    assert [r["status"] for r in report["runs"]] == ["error", "finished"]
    baseline_epochs = [e for e in report["runs"][0]["events"] if e["type"] == "epoch"]
    assert len(baseline_epochs) >= 1  # what it finished before the kill is kept
    assert gone(worker_pid)


@pytest.mark.tf
def test_kill_9_of_the_app_mid_comparison_keeps_finished_runs(tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d")
    root = tmp_path / "appdata" / "history"
    out = history.new_folder(root)
    proc = start_cli(
        [str(data), "--epochs", "2", "--batch", "8", "--image-size", "48", "--budget", "10",
         "--no-explain", "--out", str(out)]
    )
    seen = events_until(proc, lambda e: e["type"] == "started" and e["run_id"].endswith("xla-r1"))
    xla_worker = seen[-1]["pid"]
    proc.kill()
    proc.wait()
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    assert gone(xla_worker), "the worker outlived the app"
    items = history.list_items(root)
    assert len(items) == 1 and items[0].runs_finished == 1
    report = history.load(items[0])
    assert report.runs[0].status == "finished" and report.runs[0].summary is not None
    assert report.runs[0].summary.epochs_done == 2


def oom_spec(tmp_path: Path, samples: bool = False) -> RunSpec:
    names: list[str] = ["african", "asian"]
    train: list[Any] = []
    val: list[Any] = []
    if samples:
        names, train, val = samples_from_scan(scan_dataset(tiny_split_dataset(tmp_path / "d")))
    cfg = RunConfig(epochs=1, batch_size=32, image_size=600)
    return RunSpec("r", "baseline", XlaMode.OFF, cfg, names, train, val, tmp_path / "run")


def assert_names_the_cause_and_what_to_change(result: RunResult) -> None:
    assert result.status == "error"
    err = result.error
    assert err is not None
    assert "out of memory" in err.message
    assert "batch size 32" in error_hint(err) and "image size 600" in error_hint(err)


def test_a_worker_dead_of_out_of_memory_names_the_cause_and_what_to_change(
    tmp_path: Path,
) -> None:
    """The worker dies of a C++ allocation failure before it can send its own error event (what
    a real run under a memory limit does): the parent names the cause and the run's sizes."""
    spec = oom_spec(tmp_path)
    script = tmp_path / "dies_of_bad_alloc.py"
    script.write_text(
        "import os, sys\n"
        "sys.stderr.write('terminate called after throwing an instance of std::bad_alloc\\n')\n"
        "sys.stderr.flush()\n"
        "os.abort()\n",
        encoding="utf-8",
    )
    cmd = [sys.executable, str(script)]
    result = run_worker(spec, TaskState(), None, command=cmd)
    assert result.events == [result.error]  # nothing but the parent's own account
    assert result.returncode != 0
    assert_names_the_cause_and_what_to_change(result)
    assert result.error is not None and "bad_alloc" in result.error.details


@pytest.mark.tf
@pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="RLIMIT_AS is enforced on Linux only (macOS ignores it, Windows has no resource module)",
)
def test_out_of_memory_names_the_cause_and_what_to_change(tmp_path: Path) -> None:
    """A real worker, a real allocation failure: whether TensorFlow's error event gets out or the
    process dies first, the user is told the cause and the sizes to change."""
    spec = oom_spec(tmp_path, samples=True)
    limit = 5 * 2**30  # the machine may have far more; the worker gets this much address space
    cmd = [
        sys.executable,
        "-c",
        f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
        "from xlagui.core.worker.child import entry; entry([sys.argv[1]])",
        str(spec.run_dir / "spec.json"),
    ]
    result = run_worker(spec, TaskState(), None, command=cmd)
    assert_names_the_cause_and_what_to_change(result)


def test_unwritable_output_folder_is_refused_before_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)

    def denied(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # Root can write anywhere, so a read-only folder is simulated where the probe writes.
    monkeypatch.setattr("tempfile.TemporaryFile", denied)
    assert main(["compare", str(data), "--batch", "4", "--out", str(tmp_path / "ro")]) == 2
    err = capsys.readouterr().err
    assert "cannot write to the output folder" in err and "Permission denied" in err


def test_full_disk_while_saving_keeps_every_run_in_memory_and_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.helpers.images import make_split_dataset

    make_split_dataset(tmp_path / "d", {"a": 4, "b": 4}, {"a": 1, "b": 1})
    scan = scan_dataset(tmp_path / "d")
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    fake = FakeWorker({"baseline": run_events(), "xla": run_events(variant="xla", xla_mode="jit")})

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", full)
    with pytest.raises(SaveError, match="No space left on device"):
        run_comparison(report, scan, tmp_path / "out", TaskState(), worker=fake)
    assert [r.status for r in report.runs] == ["finished", "finished"]
    assert report.comparison is not None and report.comparison.valid
    assert [p.name for p in (tmp_path / "out").iterdir() if p.is_file()] == []
