"""The one supervisor of worker processes (`WorkerProcess`), driven by the fake measuring worker
(tests/helpers/fake_measure_worker.py, no TensorFlow): a malformed line, a cooperative cancel,
the terminate → kill ladder, deaths named with the run's sizes, a stale protocol refused."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import psutil
import pytest

from xlagui.core.measure.ended import died_event
from xlagui.core.measure.jobs import ChildJob, WorkerJob
from xlagui.core.measure.transports.environment import worker_env
from xlagui.core.measure.transports.local import LocalTransport
from xlagui.core.measure.worker_process import (
    CANCEL_GRACE_SECONDS,
    Stopped,
    WorkerGone,
    WorkerProcess,
)
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    CancelledEvent,
    ErrorEvent,
    Event,
    StartedEvent,
    WorkerCommand,
    read_events,
)
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import TaskState
from xlagui.present.errors import error_hint

FAKE = Path(__file__).resolve().parents[2] / "helpers" / "fake_measure_worker.py"
GRACE = 0.3  # short ladders: these workers never need long to stop
# Where a test expects the worker's own answer (a cooperative stop): the fake answers at once,
# but a loaded machine may take longer than GRACE to schedule it, which would read as forced.
# The test waits only as long as the answer takes.
COOPERATIVE_GRACE = 30.0


def spec(tmp_path: Path, mode: str = "measure", **fake: Any) -> RunSpec:
    return RunSpec(
        run_id="w1",
        variant="xla",
        xla_mode=XlaMode.JIT,
        config=RunConfig(batch_size=32, image_size=600, extra={"fake": fake}),
        class_names=["a", "b"],
        train=[Sample("x.jpg", 0, "JPEG", "RGB")],
        val=[],
        run_dir=tmp_path / "run",
        mode=mode,
        xla_dump="none",
    )


def worker_for(s: RunSpec, seen: list[Event] | None = None, **kwargs: Any) -> WorkerProcess:
    kwargs.setdefault("cancel_grace", GRACE)
    kwargs.setdefault("terminate_grace", GRACE)
    return WorkerProcess(
        s,
        seen.append if seen is not None else None,
        command=[sys.executable, str(FAKE), str(s.run_dir / "spec.json")],
        **kwargs,
    )


def started_pid(worker: WorkerProcess) -> int:
    started = next(e for e in worker.events if isinstance(e, StartedEvent))
    assert started.pid == worker.pid  # the worker's own pid, not a guess among children
    return started.pid


def recorded(s: RunSpec) -> list[Event]:
    return list(read_events((s.run_dir / "events.jsonl").read_text().splitlines()))


def commands_sent(s: RunSpec) -> list[str]:
    return [ln.split(" ", 1)[1] for ln in (s.run_dir / "commands.log").read_text().splitlines()]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("noise on stdout", "not JSON"),
        ('{"type":"warmup","t":"soon"}', "field 't' should be float"),
        ('{"type":"explode","t":1.0}', "unknown event type 'explode'"),
    ],
)
def test_a_malformed_line_ends_the_run_with_an_error_naming_it(
    tmp_path: Path, line: str, says: str
) -> None:
    s = spec(tmp_path, malformed=line)
    seen: list[Event] = []
    with worker_for(s, seen) as worker:
        worker.start()
        worker.wait_for("started", TaskState())
        pid = started_pid(worker)
        # Asked for a warm-up it would answer: skipping the bad line would return that answer.
        worker.send(WorkerCommand("warmup", steps=1))
        with pytest.raises(WorkerGone) as gone:
            worker.wait_for("warmup", TaskState())
    error = gone.value.event
    assert isinstance(error, ErrorEvent) and error.error_type == "ProtocolError"
    assert says in error.message and error.details == line
    assert worker.terminal is error and worker.ended
    assert [e.type for e in seen] == ["started", "error"]  # nothing after the bad line
    assert [e.type for e in recorded(s)] == ["started", "error"]
    # Refused, not waited on: it did not speak our protocol, so it was terminated.
    assert worker.returncode == -signal.SIGTERM
    assert not psutil.pid_exists(pid)


def test_a_cooperative_cancel_is_one_json_command_and_the_workers_own_word(
    tmp_path: Path,
) -> None:
    s = spec(tmp_path)
    with worker_for(s, cancel_grace=COOPERATIVE_GRACE) as worker:
        worker.start()
        worker.wait_for("started", TaskState())
        worker.stop()
        assert worker.ended
    assert commands_sent(s) == [WorkerCommand("cancel").to_json()]
    assert isinstance(worker.terminal, CancelledEvent)
    assert worker.terminal.reason == "stopped after 0 steps"  # the fake's, not the parent's
    assert worker.terminal.forced is False
    assert worker.returncode == 0


def test_a_stop_asked_through_the_task_state_stops_the_worker(tmp_path: Path) -> None:
    s = spec(tmp_path)
    state = TaskState()
    with worker_for(s, cancel_grace=COOPERATIVE_GRACE) as worker:
        worker.start()
        worker.wait_for("started", state)
        state.request_interruption()
        with pytest.raises(Stopped):
            worker.wait_for("warmup", state)
        # Cancelled, not waited for: the caller waits for all its workers together.
        assert not worker.ended
        worker.stop()
        assert worker.ended and isinstance(worker.terminal, CancelledEvent)
        assert worker.terminal.forced is False  # it said so itself


# serial: what it asserts is a time (no cancel's grace waited out before the terminate), which
# a test beside it on the same 2 cores could stretch.
@pytest.mark.serial
def test_a_worker_still_setting_up_is_terminated_at_once(tmp_path: Path) -> None:
    """A worker that has not said `started` (importing TensorFlow, decoding images: nothing
    there reads a cancel) is terminated when cancelled, without the cancel's grace."""
    s = spec(tmp_path, setup=30.0)
    with worker_for(s) as worker:
        worker.start()
        worker.cancel()
        t0 = time.monotonic()
        worker.stop()
        waited = time.monotonic() - t0
    assert isinstance(worker.terminal, CancelledEvent) and worker.terminal.forced is True
    assert worker.returncode == -signal.SIGTERM
    assert waited < CANCEL_GRACE_SECONDS  # the grace would have been waited out first


@pytest.mark.parametrize(
    ("ignore_sigterm", "returncode", "word"),
    [(False, -signal.SIGTERM, "terminated"), (True, -signal.SIGKILL, "killed")],
)
def test_a_worker_that_ignores_cancel_is_terminated_then_killed(
    tmp_path: Path, ignore_sigterm: bool, returncode: int, word: str
) -> None:
    s = spec(tmp_path, ignore_cancel=True, ignore_sigterm=ignore_sigterm)
    with worker_for(s) as worker:
        worker.start()
        worker.wait_for("started", TaskState())
        pid = started_pid(worker)
        worker.stop()
        assert worker.ended
    assert commands_sent(s) == [WorkerCommand("cancel").to_json()]  # asked once, cooperatively
    cancelled = worker.terminal
    assert isinstance(cancelled, CancelledEvent) and cancelled.forced is True
    assert cancelled.reason.endswith(f"did not stop by itself and was {word}")
    assert worker.returncode == returncode
    assert not psutil.pid_exists(pid)  # ended and reaped
    assert recorded(s)[-1] == cancelled


@pytest.mark.parametrize(
    ("how", "error_type", "says"),
    [
        ("sigkill", "WorkerDied", "killed (SIGKILL)"),
        ("memoryerror", "OutOfMemory", "ran out of memory"),
    ],
)
def test_a_worker_dead_of_out_of_memory_is_named_with_the_runs_sizes(
    tmp_path: Path, how: str, error_type: str, says: str
) -> None:
    s = spec(tmp_path, warmup_dies=how)
    with worker_for(s) as worker:
        worker.start()
        worker.wait_for("started", TaskState())
        worker.send(WorkerCommand("warmup", steps=1))
        with pytest.raises(WorkerGone) as gone:
            worker.wait_for("warmup", TaskState())
    error = gone.value.event
    assert isinstance(error, ErrorEvent) and error.error_type == error_type
    assert says in error.message
    # The run it was, in the message itself: the arm, the kind of worker, the sizes.
    assert "measuring worker of xla, XLA jit" in error.message
    assert "batch size 32" in error.message and "image size 600" in error.message
    assert "batch size 32 and image size 600" in error_hint(error)
    # XLA compiles this arm: the hint names it with XLA's memory-saving schedule too.
    assert error_hint(error).endswith(
        "or measure it as jit+memsched (XLA orders the step to hold the least memory instead "
        "of running independent work at once).")
    assert worker.returncode == (-signal.SIGKILL if how == "sigkill" else 1)
    if how == "memoryerror":
        assert "MemoryError" in error.details  # the log's tail


def test_a_worker_exiting_without_a_word_names_its_exit_code(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("Traceback ...\nValueError: boom\n")
    err = died_event(2, log, spec(tmp_path, mode="train"))
    assert err.error_type == "WorkerDied"
    assert err.message == (
        "the worker process exited with code 2 without a result (training worker of xla, "
        "XLA jit, batch size 32, image size 600)"
    )
    assert "ValueError: boom" in err.details


def test_a_worker_of_another_protocol_is_refused(tmp_path: Path) -> None:
    s = spec(tmp_path, protocol=1)
    seen: list[Event] = []
    with worker_for(s, seen) as worker:
        worker.start()
        with pytest.raises(WorkerGone) as gone:
            worker.wait_for("started", TaskState())
    error = gone.value.event
    assert isinstance(error, ErrorEvent) and error.error_type == "ProtocolMismatch"
    assert "protocol version 1" in error.message
    assert seen == [error]  # nothing of what it said is relayed
    assert worker.returncode == -signal.SIGTERM


def test_the_transport_is_the_seam_that_starts_the_process(tmp_path: Path) -> None:
    """A transport gets the job (the spec, a test's command line) and the log; it starts the
    process, and `finish` is called once the worker has ended (an SSH host's folder comes home
    there)."""
    calls: list[tuple[str, list[str]]] = []
    started: list[subprocess.Popen[str]] = []

    class Recording(LocalTransport):
        def start(self, job: ChildJob, log: IO[bytes]) -> subprocess.Popen[str]:
            assert isinstance(job, WorkerJob)
            calls.append(("start", list(job.command or ())))
            started.append(super().start(job, log))
            return started[-1]

        def finish(self, job: ChildJob) -> None:
            assert isinstance(job, WorkerJob)
            calls.append(("finish", [job.spec.run_id]))

    s = spec(tmp_path)
    with worker_for(s, transport=Recording()) as worker:
        worker.start()
        worker.wait_for("started", TaskState())
        # Read once it has spoken: just after the fork, before its exec, a child's environment
        # is still the parent's (a busy machine showed it).
        env = psutil.Process(started[0].pid).environ()
        calls.append(("tmpdir", [env["TMPDIR"]]))
        assert [c[0] for c in calls] == ["start", "tmpdir"]
    assert calls == [
        ("start", [sys.executable, str(FAKE), str(s.run_dir / "spec.json")]),
        ("tmpdir", [str(s.run_dir / "tmp")]),
        ("finish", ["w1"]),
    ]
    assert json.loads((s.run_dir / "spec.json").read_text())["run_id"] == "w1"
    assert not (s.run_dir / "tmp").exists()  # its temporary folder goes with it


def test_a_death_the_log_explains_as_out_of_memory_is_told_so(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("2026 ... OOM when allocating tensor with shape[32,596,596,64]\n")
    err = died_event(-signal.SIGABRT, log, spec(tmp_path))
    assert err.error_type == "OutOfMemory" and "out of memory" in err.message
    assert "with the article's CNN, batch size 32 and image size 600" in error_hint(err)
    assert "OOM when allocating" in err.details


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
