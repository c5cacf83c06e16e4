"""`run_worker`, a training run from start to end, driven with small fake workers (no
TensorFlow). The supervision it relies on is tested once, in test_worker_process.py; here what
a training run adds: the result, the events file, the status a cancel or a death leaves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import psutil
import pytest

from tests.helpers.streams import run_events
from xlagui.core.measure.runner import run_worker
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import Event, StartedEvent, read_events
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import TaskState
from xlagui.present.errors import error_hint


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


# A `started` line that carries the fake's own pid, as a real worker's does (`StartedEvent.pid`):
# a test then checks that very process, not whatever else this pytest process has started.
STARTED_WITH_PID = (
    "import json\n"
    f"_started = json.loads({stream_lines()[0]!r})\n"
    "_started['pid'] = os.getpid()\n"
    "emit(json.dumps(_started))\n"
)


def worker_pid(events: list[Event]) -> int:
    started = next(e for e in events if isinstance(e, StartedEvent))
    assert started.pid not in (0, os.getpid())
    return started.pid


def test_finished_run_relays_every_event_and_records_them(tmp_path: Path) -> None:
    lines = stream_lines()
    cmd = fake(tmp_path, f"for line in {lines!r}:\n    emit(line)\n")
    seen: list[Event] = []
    result = run_worker(spec(tmp_path), TaskState(), seen.append, command=cmd)
    assert result.status == "finished" and result.returncode == 0
    assert [e.to_json() for e in seen] == lines
    recorded = (tmp_path / "run" / "events.jsonl").read_text().splitlines()
    assert list(read_events(recorded)) == seen
    assert json.loads((tmp_path / "run" / "spec.json").read_text())["run_id"] == "r1"


def test_a_malformed_line_fails_a_training_run_as_it_does_a_measuring_one(tmp_path: Path) -> None:
    lines = stream_lines()
    body = f"for line in {lines[:3]!r}:\n    emit(line)\nemit('noise on stdout')\ntime.sleep(60)\n"
    result = run_worker(spec(tmp_path), TaskState(), None, command=fake(tmp_path, body))
    assert result.status == "error"
    assert [e.type for e in result.events] == ["started", "batch", "batch", "error"]
    assert result.error is not None and result.error.error_type == "ProtocolError"
    assert result.error.details == "noise on stdout"
    assert result.returncode == -signal.SIGTERM  # refused and terminated, not waited for


def test_cooperative_cancel(tmp_path: Path) -> None:
    body = STARTED_WITH_PID + textwrap.dedent("""
    import threading
    stop = threading.Event()
    def watch():
        for line in sys.stdin:
            if json.loads(line)["cmd"] == "cancel":  # the one format a cancel takes
                stop.set()
    threading.Thread(target=watch, daemon=True).start()
    while not stop.wait(0.01):
        pass
    emit('{"type":"cancelled","t":1.0,"epochs_done":0}')
    """)
    state = TaskState()
    result = run_worker(
        spec(tmp_path), state, lambda e: state.request_interruption(), command=fake(tmp_path, body)
    )
    assert result.status == "cancelled" and result.returncode == 0
    assert result.events[-1].forced is False  # type: ignore[attr-defined]
    assert not psutil.pid_exists(worker_pid(result.events))


def test_a_worker_that_does_not_stop_is_terminated(tmp_path: Path) -> None:
    body = STARTED_WITH_PID + "time.sleep(60)\n"
    state = TaskState()
    result = run_worker(
        spec(tmp_path),
        state,
        lambda e: state.request_interruption(),
        command=fake(tmp_path, body),
        cancel_grace=0.3,
        terminate_grace=0.3,
    )
    # How long this takes is measured in bench/bench_cancel.py, not asserted here; the kill
    # that follows an ignored SIGTERM is tested in test_worker_process.py.
    assert result.status == "cancelled"
    assert result.events[-1].forced is True  # type: ignore[attr-defined]
    assert result.returncode == -signal.SIGTERM
    assert not psutil.pid_exists(worker_pid(result.events))  # ended and reaped


def test_worker_killed_mid_run_is_reported_in_plain_words(tmp_path: Path) -> None:
    lines = stream_lines()[:3]
    body = f"for line in {lines!r}:\n    emit(line)\nos.kill(os.getpid(), signal.SIGKILL)\n"
    result = run_worker(spec(tmp_path), TaskState(), None, command=fake(tmp_path, body))
    assert result.status == "error"
    err = result.error
    assert err is not None and "killed (SIGKILL)" in err.message
    assert "memory" in error_hint(err)
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
        [sys.executable, "-m", "xlagui.core.worker.child", str(fifo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 3
    proc.stdout.close()


def test_no_orphans_after_a_supervisor_exception(tmp_path: Path) -> None:
    body = STARTED_WITH_PID + "time.sleep(60)\n"
    seen: list[Event] = []

    def boom(event: Event) -> None:
        seen.append(event)
        raise RuntimeError("a watcher failed")

    with pytest.raises(RuntimeError):
        run_worker(
            spec(tmp_path), TaskState(), boom, command=fake(tmp_path, body), terminate_grace=0.2
        )
    pid = worker_pid(seen)
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


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


def test_a_training_worker_of_another_protocol_is_refused(tmp_path: Path) -> None:
    started = json.loads(run_events()[0].to_json())
    started["protocol"] = 1
    lines = [json.dumps(started), *stream_lines()[1:]]
    body = f"for line in {lines!r}:\n    emit(line)\ntime.sleep(60)\n"
    result = run_worker(spec(tmp_path), TaskState(), None, command=fake(tmp_path, body))
    assert result.status == "error"
    assert [e.type for e in result.events] == ["error"]  # nothing of what it said is kept
    assert result.error is not None and "protocol version 1" in result.error.message
