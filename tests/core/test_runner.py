"""The supervisor of worker processes, driven with small fake workers (no TensorFlow)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import psutil
import pytest

from tests.helpers.streams import run_events
from xlagui.core.config import RunConfig, XlaMode
from xlagui.core.events import Event, ProtocolError, read_events
from xlagui.core.pipeline import Sample
from xlagui.core.runner import RunSpec, died_event, run_worker, worker_env
from xlagui.core.task import TaskState


def spec(tmp_path: Path, mode: XlaMode = XlaMode.OFF) -> RunSpec:
    return RunSpec(
        run_id="r1",
        variant="baseline" if mode is XlaMode.OFF else "xla",
        xla_mode=mode,
        config=RunConfig(epochs=3, image_size=48, batch_size=4),
        class_names=["a", "b"],
        train=[Sample("x.jpg", 0, "JPEG", "RGB")],
        val=[],
        run_dir=tmp_path / "run",
    )


def fake(tmp_path: Path, body: str) -> list[str]:
    """A worker script: `emit(line)` writes one protocol line."""
    script = tmp_path / "fake_worker.py"
    script.write_text(
        "import sys, time, signal, os\n"
        "def emit(line):\n    sys.stdout.write(line + '\\n'); sys.stdout.flush()\n"
        + textwrap.dedent(body),
        encoding="utf-8",
    )
    return [sys.executable, str(script)]


def stream_lines() -> list[str]:
    return [e.to_json() for e in run_events()]


def test_finished_run_relays_every_event_and_records_them(tmp_path: Path) -> None:
    lines = stream_lines()
    cmd = fake(tmp_path, f"for line in {lines!r}:\n    emit(line)\nprint('noise on stdout')\n")
    seen: list[Event] = []
    result = run_worker(spec(tmp_path), TaskState(), seen.append, command=cmd)
    assert result.status == "finished" and result.returncode == 0
    assert [e.to_json() for e in seen] == lines
    recorded = (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    assert list(read_events(recorded)) == seen
    assert json.loads((tmp_path / "run" / "spec.json").read_text())["run_id"] == "r1"


def test_cooperative_cancel(tmp_path: Path) -> None:
    started = run_events()[0].to_json()
    body = f"""
    import threading
    emit({started!r})
    stop = threading.Event()
    def watch():
        for line in sys.stdin:
            if line.strip() == 'cancel':
                stop.set()
    threading.Thread(target=watch, daemon=True).start()
    while not stop.wait(0.01):
        pass
    emit('{{"type":"cancelled","t":1.0,"epochs_done":0}}')
    """
    state = TaskState()
    result = run_worker(
        spec(tmp_path), state, lambda e: state.request_interruption(), command=fake(tmp_path, body)
    )
    assert result.status == "cancelled"
    assert result.events[-1].forced is False  # type: ignore[attr-defined]


@pytest.mark.parametrize("ignore_sigterm", [False, True])
def test_a_worker_that_does_not_stop_is_terminated_then_killed(
    tmp_path: Path, ignore_sigterm: bool
) -> None:
    started = run_events()[0].to_json()
    body = ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_sigterm else "") + (
        f"emit({started!r})\nsys.stdout.write('pid %d\\n' % os.getpid()); sys.stdout.flush()\n"
        "time.sleep(60)\n"
    )
    state = TaskState()
    pids: list[int] = []

    def on_event(e: Event) -> None:
        pids.extend(c.pid for c in psutil.Process().children())
        state.request_interruption()

    result = run_worker(
        spec(tmp_path),
        state,
        on_event,
        command=fake(tmp_path, body),
        cancel_grace=0.3,
        terminate_grace=0.3,
    )
    # How long this takes is measured in bench/bench_cancel.py, not asserted here.
    assert result.status == "cancelled"
    assert result.events[-1].forced is True  # type: ignore[attr-defined]
    expected = -signal.SIGKILL if ignore_sigterm else -signal.SIGTERM
    assert result.returncode == expected
    assert len(pids) == 1 and not psutil.pid_exists(pids[0])  # ended and reaped


def test_worker_killed_mid_run_is_reported_in_plain_words(tmp_path: Path) -> None:
    lines = stream_lines()[:3]
    body = f"for line in {lines!r}:\n    emit(line)\nos.kill(os.getpid(), signal.SIGKILL)\n"
    result = run_worker(spec(tmp_path), TaskState(), None, command=fake(tmp_path, body))
    assert result.status == "error"
    err = result.error
    assert err is not None and "killed (SIGKILL)" in err.message
    assert "memory" in err.hint
    assert len(result.events) == 4  # what came before the crash is kept


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe (POSIX)")
def test_worker_exits_when_its_parent_goes_away(tmp_path: Path) -> None:
    """End of stdin means the supervisor is gone: the real worker must not live on.

    The spec is a named pipe nobody writes to, so the worker waits on it for ever: the only way
    out is its stdin watcher noticing the end of file (exit code 3). A real spec file would
    race the watcher with the worker's own exit (code 1 for a bad spec, or TensorFlow's start).
    """
    fifo = tmp_path / "spec.json"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-m", "xlagui.core.worker", str(fifo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 3
    proc.stdout.close()


def test_no_orphans_after_a_supervisor_exception(tmp_path: Path) -> None:
    body = f"emit({stream_lines()[0]!r})\ntime.sleep(60)\n"
    pids: list[int] = []

    def boom(event: Event) -> None:
        pids.extend(c.pid for c in psutil.Process().children(recursive=True))
        raise RuntimeError("a watcher failed")

    with pytest.raises(RuntimeError):
        run_worker(
            spec(tmp_path), TaskState(), boom, command=fake(tmp_path, body), terminate_grace=0.2
        )
    assert pids
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize(
    ("mode", "device", "expect"),
    [
        (XlaMode.OFF, "cpu", {"CUDA_VISIBLE_DEVICES": "", "TF_XLA_FLAGS": None, "XLA_FLAGS": None}),
        (XlaMode.JIT, "gpu:1", {"CUDA_VISIBLE_DEVICES": "1", "TF_XLA_FLAGS": None}),
        (
            XlaMode.AUTOCLUSTER,
            "cpu",
            {"TF_XLA_FLAGS": "--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit"},
        ),
    ],
)
def test_worker_environment(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mode: XlaMode,
    device: str,
    expect: dict[str, str | None],
) -> None:
    monkeypatch.setenv("XLA_FLAGS", "--user-setting")
    env = worker_env(mode, device, tmp_path)
    for key, value in expect.items():
        assert env.get(key) == value
    if mode is not XlaMode.OFF:
        assert env["XLA_FLAGS"].startswith(f"--xla_dump_to={tmp_path / 'xla'}")


def test_interrupt_from_another_thread(tmp_path: Path) -> None:
    body = f"emit({stream_lines()[0]!r})\ntime.sleep(60)\n"
    state = TaskState()
    threading.Timer(0.5, state.request_interruption).start()
    result = run_worker(
        spec(tmp_path),
        state,
        None,
        command=fake(tmp_path, body),
        cancel_grace=0.2,
        terminate_grace=0.2,
    )
    assert result.status == "cancelled"
    assert os.path.exists(tmp_path / "run" / "worker.log")


def test_a_worker_that_died_of_out_of_memory_is_told_with_the_runs_sizes(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("2026 ... OOM when allocating tensor with shape[32,596,596,64]\n")
    config = RunConfig(batch_size=32, image_size=600)
    err = died_event(-signal.SIGABRT, log, config)
    assert err.error_type == "OutOfMemory" and "out of memory" in err.message
    assert "with batch size 32 and image size 600" in err.hint
    assert "OOM when allocating" in err.details


def test_a_worker_killed_by_a_signal_is_told_with_the_runs_sizes(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("")
    err = died_event(-signal.SIGKILL, log, RunConfig(batch_size=16, image_size=224))
    assert err.error_type == "WorkerDied" and "killed (SIGKILL)" in err.message
    assert "batch size 16 and image size 224" in err.hint


def test_a_training_worker_of_another_protocol_is_refused(tmp_path: Path) -> None:
    started = json.loads(run_events()[0].to_json())
    started["protocol"] = 1
    lines = [json.dumps(started), *stream_lines()[1:]]
    body = f"for line in {lines!r}:\n    emit(line)\ntime.sleep(60)\n"
    result = run_worker(spec(tmp_path), TaskState(), None, command=fake(tmp_path, body))
    assert result.status == "error"
    assert [e.type for e in result.events] == ["error"]  # nothing of what it said is kept
    assert result.error is not None and "protocol version 1" in result.error.message


def test_the_run_spec_round_trips_through_spec_json(tmp_path: Path) -> None:
    s = RunSpec(
        run_id="r1",
        variant="xla",
        xla_mode=XlaMode.JIT,
        config=RunConfig(epochs=3, image_size=48, arms=("jit+bf16",), extra={"fake": {"a": 1}}),
        class_names=["a", "b"],
        train=[Sample("x.jpg", 0, "JPEG", "RGB"), Sample("y.png", 1, "PNG", "L")],
        val=[Sample("z.gif", 1, "GIF", "P")],
        run_dir=tmp_path / "run",
        mode="measure",
        precision="mixed_bfloat16",
        tensorboard_dir=str(tmp_path / "tb"),
    )
    assert RunSpec.from_json(s.to_json()) == s
    assert json.loads(s.to_json())["train"][0] == ["x.jpg", 0, "JPEG", "RGB"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"xla_mode": "warp"}, "xla_mode"),
        ({"run_dir": 3}, "run_dir"),
        ({"train": [["x.jpg", "zero", "JPEG", "RGB"]]}, "train[0].label"),
        ({"val": ["x.jpg"]}, "val[0]"),
        ({"config": {"batch_size": "big"}}, "config.batch_size"),
        ({"class_names": ["a", 2]}, "class_names[1]"),
    ],
)
def test_a_bad_run_spec_names_the_field(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    data = {**json.loads(spec(tmp_path).to_json()), **change}
    with pytest.raises(ProtocolError, match=re.escape(f"field '{field}'")):
        RunSpec.from_json(json.dumps(data))


def test_a_run_spec_without_a_field_it_needs_says_which() -> None:
    with pytest.raises(ProtocolError, match=r"run spec lacks .*run_dir"):
        RunSpec.from_json('{"run_id":"r","variant":"baseline","xla_mode":"off","config":{},'
                          '"class_names":[],"train":[],"val":[]}')
