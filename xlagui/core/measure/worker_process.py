"""The one supervisor of worker processes: start one, read its events, cancel it, report its end.

Named `worker_process` because it is the parent's side of one `python -m xlagui.core.worker.child`
process (`worker.py` is the child's side); `supervisor` is the GUI's QThread
(`xlagui.ui.supervisor`), which hosts this code but does not supervise a process itself.

Every worker, training (`runner.run_worker`) or measuring (`interleave.measure_interleaved`),
goes through `WorkerProcess`, so the following are written once:

- starting: the spec written to `run_dir/spec.json`, and a `Transport` that turns the command
  line into a running process with the environment XLA needs before TensorFlow loads
  (`LocalTransport`: `worker_env`; `xlagui.core.measure.remote.SshTransport`: the same settings,
  `worker_settings`, on the host's `ssh` command line);
- reading: a thread reads the worker's stdout, and each line is decoded by the protocol's one
  decoder (`events.parse_event`), the protocol version checked on the first `started`;
- the malformed-line policy (see `WorkerProcess._refuse`): a line that is not an event ends the
  run with an error naming it;
- cancelling: one format (a `WorkerCommand("cancel")` JSON line), then terminate, then kill, each
  step once, after its grace period;
- a death (non-zero exit, a signal, out of memory) reported with the run's arm and sizes
  (`died_event`).

Short helper processes that stream no events stay where they are and use `subprocess.run`:
`runner.probe_devices` (`--probe`, one JSON line), `tensorboard.write_text`
(`--tensorboard-text`), `peak`'s probe (`python -m xlagui.core.machine.peak`) and the model check
(`measure.model_check.check_models`, `--check-model`: one `model` or `error` event per model,
decoded by `events.parse_event`, before any worker here starts).
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePath
from types import TracebackType
from typing import IO, Protocol

from xlagui.core.files import paths
from xlagui.core.machine.device import Device
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import (
    TERMINAL_TYPES,
    CancelledEvent,
    ErrorEvent,
    Event,
    ProtocolError,
    ProtocolMismatch,
    StartedEvent,
    WorkerCommand,
    check_protocol,
    parse_event,
)
from xlagui.core.protocol.failures import Failure, run_sizes
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState

# Cancel is cooperative first (the worker checks every step), then enforced: a worker busy in a
# long XLA compile cannot check, so after the grace period it is terminated, then killed.
CANCEL_GRACE_SECONDS = 1.0
TERMINATE_GRACE_SECONDS = 0.5
# A worker that said its last word exits once its stdin closes; this long is waited for that.
CLOSE_GRACE_SECONDS = 5.0
# A worker that has exited but whose stdout stays open (a child of its own holding the pipe)
# is taken as ended after this long, instead of waiting for an end of file that never comes.
END_OF_STREAM_GRACE_SECONDS = 2.0
POLL_SECONDS = 0.05
LOG_TAIL_CHARS = 4000


class Transport(Protocol):
    """Where a worker runs: it starts one, says how one that ended without a word died, and
    brings its files home.

    `start` runs `argv` (the worker's command line here: `worker_command`, or a test's) for
    `spec`, with the environment XLA needs, its stdin and stdout pipes of text lines and its
    stderr into `log`. `died` is the parent's account of a worker that ended without its last
    word. `finish` is called once the worker has ended and been reaped. `LocalTransport` runs
    workers on this machine; `xlagui.core.measure.remote.SshTransport` on an SSH
    host (the spec travels as the first line of stdin, the run folder comes back at `finish`).
    """

    @property
    def machine(self) -> str:
        """The host's name; "" for this computer."""
        ...

    def start(
        self, spec: RunSpec, argv: Sequence[str], log: IO[bytes]
    ) -> subprocess.Popen[str]: ...

    def died(self, returncode: int, log_path: Path, spec: RunSpec) -> ErrorEvent: ...

    def finish(self, spec: RunSpec) -> None: ...


def local_transport(
    argv: Sequence[str], env: Mapping[str, str], log: IO[bytes]
) -> subprocess.Popen[str]:
    """A worker process on this machine, in its own session."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        env=dict(env),
        text=True,
        encoding="utf-8",
        # Its own process group: a Ctrl+C in the terminal reaches the CLI, which cancels the
        # worker properly, instead of killing the worker mid-write.
        start_new_session=(os.name == "posix"),
    )


class LocalTransport:
    """Workers on this machine: the run folder is already where the parent reads it."""

    machine = ""

    def start(
        self, spec: RunSpec, argv: Sequence[str], log: IO[bytes]
    ) -> subprocess.Popen[str]:
        env = worker_env(spec.xla_mode, spec.config.device, spec.run_dir, spec.xla_dump)
        return local_transport(argv, env, log)

    def died(self, returncode: int, log_path: Path, spec: RunSpec) -> ErrorEvent:
        return died_event(returncode, log_path, spec)

    def finish(self, spec: RunSpec) -> None:
        pass


LOCAL = LocalTransport()


# What an XLA worker dumps to run_dir/xla, the material of "what XLA did" (`core/xla/hlo.py`).
# XLA's CPU backend in TF 2.21 writes its LLVM IR, MLIR and object files whenever dumping is on,
# whatever the format flags (`--xla_dump_emitter_re` and `--xla_dump_hlo_module_re` do not
# remove them; there is no `--xla_dump_ir`), so a dump is never only the HLO text. Without
# metadata the HLO text is half the size (186 → 93 KB at 64 px), but the whole dump only 6%
# smaller and its compile no faster within the noise, and the op names it drops are what label
# the fusions: `text` it is. bench/bench_evidence.py measured what a dump costs (BENCHMARKS.md,
# "Evidence collection"); `compare.spec_for` keeps it out of the measuring workers.
XLA_DUMPS: dict[str, str] = {
    "text": "--xla_dump_hlo_as_text",
    "nometa": "--xla_dump_hlo_as_text --xla_dump_disable_metadata",
    "none": "",
}


def xla_flags(run_dir: PurePath, dump: str) -> str:
    """XLA_FLAGS for a worker that dumps `dump` (a key of `XLA_DUMPS`) into run_dir/xla."""
    if dump not in XLA_DUMPS:
        raise ValueError(f"unknown XLA dump setting {dump!r}; one of {', '.join(XLA_DUMPS)}")
    if dump == "none":
        return ""
    return f"--xla_dump_to={run_dir / 'xla'} {XLA_DUMPS[dump]}"


# Variables a worker's environment must not inherit: the parent sets them or leaves them out.
WORKER_OWNED = ("TF_XLA_FLAGS", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES", "TF_CPP_VMODULE")


def worker_settings(
    xla_mode: XlaMode, device: str, run_dir: PurePath, dump: str, keras_home: PurePath
) -> dict[str, str]:
    """The variables a worker needs set before it imports TensorFlow, and only those: the
    local environment adds them to this process's (`worker_env`), an SSH host's to its own
    (`xlagui.core.measure.remote`, with the host's paths)."""
    env: dict[str, str] = {}
    visible = Device.parse(device).visible_gpus
    if visible is not None:  # "" hides every GPU (the CPU), "N" shows GPU N alone
        env["CUDA_VISIBLE_DEVICES"] = visible
    if xla_mode.facts.tf_xla_flags:
        env["TF_XLA_FLAGS"] = xla_mode.facts.tf_xla_flags
    if xla_mode is not XlaMode.OFF:
        # The compiled HLO modules are the evidence that XLA did compile.
        flags = xla_flags(run_dir, dump)
        if flags:
            env["XLA_FLAGS"] = flags
        # One log line per compiled cluster with its compile time ("Compiled NAME 1 times,
        # compile time: N us"): the per-module compile time of "what XLA did".
        env["TF_CPP_VMODULE"] = "device_compilation_profiler=1"
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"  # keep "Compiled cluster using XLA" in the log
    # Keras writes ~/.keras/keras.json on import; keep it in our own cache folder instead.
    env["KERAS_HOME"] = str(keras_home)
    # TensorFlow's autograph leaves generated source files in the temporary folder; give the
    # worker one of its own, which `WorkerProcess.close` removes when the worker has ended.
    for key in ("TMPDIR", "TEMP", "TMP"):
        env[key] = str(run_dir / "tmp")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def worker_env(xla_mode: XlaMode, device: str, run_dir: Path, dump: str = "text") -> dict[str, str]:
    """The environment a worker on this machine must have before it imports TensorFlow."""
    env = {k: v for k, v in os.environ.items() if k not in WORKER_OWNED}
    keras_home = Path(env.get("KERAS_HOME") or paths.cache_dir() / "keras")
    env.update(worker_settings(xla_mode, device, run_dir, dump, keras_home))
    return env


def worker_command(spec_path: Path) -> list[str]:
    return [sys.executable, "-m", "xlagui.core.worker.child", str(spec_path)]


def log_tail(path: Path, chars: int = LOG_TAIL_CHARS) -> str:
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - chars))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


# What TensorFlow, the C++ runtime and Python print when an allocation fails.
OOM_MARKERS = (
    "bad_alloc",
    "ResourceExhausted",
    "OOM when allocating",
    "MemoryError",
    "Cannot allocate memory",
    "out of memory",
)


def died_event(returncode: int, log_path: Path, spec: RunSpec) -> ErrorEvent:
    """An error event for a worker that ended without saying why.

    A worker that dies of out-of-memory (a C++ `bad_alloc`, the kernel's OOM killer) cannot send
    its own error event, so the parent, which knows the run's spec, names the run and the sizes
    to change (`failures.run_sizes`): the same for a training and a measuring worker.
    """
    tail = log_tail(log_path)
    run = spec.describe()
    sizes = run_sizes(spec.config)
    if any(marker in tail for marker in OOM_MARKERS):
        return ErrorEvent(
            error_type="OutOfMemory",
            message=f"the worker ran out of memory ({run})",
            kind=Failure.DIED_OUT_OF_MEMORY.value,
            facts=sizes,
            details=tail,
        )
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        message = f"the worker process was killed ({name}) before it finished ({run})"
        kind, facts = Failure.KILLED, sizes
    else:
        message = f"the worker process exited with code {returncode} without a result ({run})"
        kind, facts = Failure.EXITED, {}
    return ErrorEvent(error_type="WorkerDied", message=message, kind=kind.value, facts=facts,
                      details=tail)


class WorkerGone(Exception):
    """The worker ended (error, cancel, death) while the parent waited for something else."""

    def __init__(self, event: Event) -> None:
        super().__init__(getattr(event, "message", event.type))
        self.event = event


class Stopped(Exception):
    """The user asked to stop while the parent waited for the worker (which is stopped)."""


def _read_lines(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)  # end of file: the worker closed its stdout, or died


class WorkerProcess:
    """One worker process, from `start` to `close` (a context manager closes it).

    Every event the worker sends is decoded, appended to `events`, written to the run's
    `events.jsonl` and handed to `on_event` as it is read (`poll`, `wait_for`, `run_to_end`);
    `terminal` is the run's last word (finished, cancelled or error), the parent's own when the
    worker could not say it (a death, a forced stop, a refused stream). Never raises for a
    worker failure; an exception raised by `on_event` goes up to the caller, and `close` still
    ends the worker.
    """

    def __init__(
        self,
        spec: RunSpec,
        on_event: Callable[[Event], None] | None = None,
        *,
        command: Sequence[str] | None = None,
        transport: Transport = LOCAL,
        cancel_grace: float = CANCEL_GRACE_SECONDS,
        terminate_grace: float = TERMINATE_GRACE_SECONDS,
    ) -> None:
        self.spec = spec
        self.events: list[Event] = []
        self.terminal: Event | None = None
        self.returncode: int | None = None
        self._on_event = on_event
        self._command = list(command) if command else None
        self._transport = transport
        self._cancel_grace = cancel_grace
        self._terminate_grace = terminate_grace
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._proc: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None
        self._log: IO[bytes] | None = None
        self._events_file: IO[str] | None = None
        self._t0 = time.perf_counter()
        self._protocol_checked = False
        self._ended = False  # no more events will be read
        self._exited_at: float | None = None
        # The ladder: when cancel was sent, the process terminated, killed (each once).
        self._cancel_at: float | None = None
        self._terminate_at: float | None = None
        self._killed = False
        self._finished = False  # the transport's `finish` was called

    @property
    def log_path(self) -> Path:
        return self.spec.run_dir / "worker.log"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def ended(self) -> bool:
        """No more events will come: the stream ended, or the parent refused it."""
        return self._ended

    @property
    def forced(self) -> bool:
        """The worker did not stop by itself and was terminated (or killed)."""
        return self._terminate_at is not None

    def __enter__(self) -> WorkerProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        run_dir = self.spec.run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        spec_path = run_dir / "spec.json"
        spec_path.write_text(self.spec.to_json(), encoding="utf-8")
        (run_dir / "tmp").mkdir(exist_ok=True)
        self._log = self.log_path.open("wb")
        self._events_file = (run_dir / "events.jsonl").open("w", encoding="utf-8")
        self._t0 = time.perf_counter()
        argv = self._command or worker_command(spec_path)
        self._proc = self._transport.start(self.spec, argv, self._log)
        assert self._proc.stdout is not None
        self._reader = threading.Thread(
            target=_read_lines, args=(self._proc.stdout, self._lines), daemon=True, name="events"
        )
        self._reader.start()

    def send(self, command: WorkerCommand) -> None:
        """One command line on the worker's stdin (the only format the parent writes)."""
        proc = self._proc
        if proc is None or proc.stdin is None:
            return
        try:
            proc.stdin.write(command.to_json() + "\n")
            proc.stdin.flush()
        except (OSError, ValueError):
            pass  # it died or its stdin is closed: reading its stream finds out and says how

    def cancel(self) -> None:
        """Ask the worker to stop at its next step and start the ladder: terminate after
        `cancel_grace`, kill after `terminate_grace` more (`poll` climbs it). Once."""
        if self._cancel_at is not None or self._ended:
            return
        self._cancel_at = time.monotonic()
        self.send(WorkerCommand("cancel"))

    def poll(self, timeout: float = POLL_SECONDS) -> Event | None:
        """Read at most one line and return its event (None when nothing came in `timeout`).
        Climbs the cancel ladder, and at the stream's end returns the parent's own account
        (a death, a forced stop) when the worker did not say how it ended."""
        if self._ended:
            return None
        self._climb_ladder()
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return self._end_of_stream() if self._exited_without_eof() else None
        if line is None:
            return self._end_of_stream()
        if not line.strip():
            return None  # a bare newline carries nothing (`events.read_events` skips it too)
        try:
            event = parse_event(line)
            if isinstance(event, StartedEvent) and not self._protocol_checked:
                self._protocol_checked = True
                check_protocol(event)
        except ProtocolError as exc:
            return self._refuse(exc, line)
        self._record(event)
        return event

    def run_to_end(self, state: TaskState) -> None:
        """Relay every event until the run ends; cancel when `state` asks to stop."""
        while not self._ended:
            if state.is_interruption_requested():
                self.cancel()
            self.poll()

    def wait_for(self, kind: str, state: TaskState) -> Event:
        """The next event of type `kind`, relaying everything before it. Raises `Stopped`
        when `state` asks to stop (after stopping this worker) and `WorkerGone` when the
        worker ends first."""
        while True:
            if state.is_interruption_requested():
                self.stop()
                raise Stopped()
            if self._ended:
                raise WorkerGone(self.terminal or ErrorEvent(message="the worker ended"))
            event = self.poll()
            if event is None:
                continue
            if event.type == kind:
                return event
            if event.type in TERMINAL_TYPES:
                raise WorkerGone(event)

    def stop(self) -> None:
        """Cancel, and wait until the worker has ended (cooperatively, or forced)."""
        self.cancel()
        while not self._ended:
            self.poll()

    def close(self) -> None:
        """End the worker if it still runs (nobody hears its events any more), reap it and
        release its files. Safe to call twice."""
        self._on_event = None  # the caller stopped listening; the run's files still get it all
        proc = self._proc
        if proc is not None:
            try:
                if not self._ended:
                    self.stop()
            finally:
                self._reap(proc)
        for fh in (self._log, self._events_file):
            if fh is not None:
                fh.close()
        self._log = self._events_file = None
        shutil.rmtree(self.spec.run_dir / "tmp", ignore_errors=True)
        if proc is not None and not self._finished:
            self._finished = True
            self._transport.finish(self.spec)  # a remote run's folder comes home

    def _reap(self, proc: subprocess.Popen[str]) -> None:
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # end of file: a worker still alive exits at once
        # A worker terminated on purpose (a refused stream) gets no long wait before the kill.
        wait = self._terminate_grace if self.forced else CLOSE_GRACE_SECONDS
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self.returncode = proc.returncode
        if self._reader is not None:
            self._reader.join(timeout=1)  # it ends at the pipe's end of file
        if proc.stdout is not None:
            with contextlib.suppress(OSError):
                proc.stdout.close()

    def _climb_ladder(self) -> None:
        proc = self._proc
        if self._cancel_at is None or proc is None or proc.poll() is not None:
            return
        now = time.monotonic()
        if self._terminate_at is None:
            if now - self._cancel_at >= self._cancel_grace:
                self._terminate_at = now
                proc.terminate()
        elif not self._killed and now - self._terminate_at >= self._terminate_grace:
            self._killed = True
            proc.kill()

    def _exited_without_eof(self) -> bool:
        proc = self._proc
        if proc is None or proc.poll() is None:
            return False
        if self._exited_at is None:
            self._exited_at = time.monotonic()
        return time.monotonic() - self._exited_at >= END_OF_STREAM_GRACE_SECONDS

    def _end_of_stream(self) -> Event | None:
        """The worker's stream is over: its own last word, or the parent's account of it."""
        self._ended = True
        if self.terminal is not None:
            return None
        assert self._proc is not None
        self._reap(self._proc)
        assert self.returncode is not None
        event: Event
        if self._cancel_at is not None:
            event = CancelledEvent(
                epochs_done=sum(1 for e in self.events if e.type == "epoch"),
                forced=self.forced,
                reason="cancelled by the user; the worker did not stop by itself and was "
                + ("killed" if self._killed else "terminated")
                if self.forced
                else "cancelled by the user",
            )
        else:
            event = self._transport.died(self.returncode, self.log_path, self.spec)
        event.t = round(time.perf_counter() - self._t0, 6)
        self._record(event)
        return event

    def _refuse(self, exc: ProtocolError, line: str) -> Event:
        """The malformed-line policy, the same for every worker: a line that is not an event
        (not JSON, an unknown type, a field of the wrong type, another protocol version) ends
        the run with an error naming it, and the worker is terminated.

        Skipping it instead would be safe only for noise, and there is none to expect: the
        worker keeps its stdout for events alone (`worker.io.redirect_stdout` sends every other
        print to the log). A skipped line could be the `block` or `finished` the parent waits
        for, hanging a measurement or turning a finished run into "exited without a result",
        and figures from a stream that lost lines could not be trusted. A stream that does not
        decode comes from another release or a bug: the user is told so, by name."""
        mismatch = isinstance(exc, ProtocolMismatch)
        error = ErrorEvent(
            error_type=type(exc).__name__,
            message=str(exc) if mismatch else f"the worker sent a line that is not an event: {exc}",
            kind=(Failure.PROTOCOL_MISMATCH if mismatch else Failure.NOT_AN_EVENT).value,
            details=line.rstrip("\r\n")[:LOG_TAIL_CHARS],
        )
        error.t = round(time.perf_counter() - self._t0, 6)
        self._ended = True
        self._record(error)
        # It does not speak our protocol: a cooperative cancel would not be understood.
        if self._proc is not None and self._proc.poll() is None:
            self._terminate_at = time.monotonic()
            self._proc.terminate()
        return error

    def _record(self, event: Event) -> None:
        self.events.append(event)
        if self._events_file is not None:
            self._events_file.write(event.to_json() + "\n")
            self._events_file.flush()
        if event.type in TERMINAL_TYPES and self.terminal is None:
            self.terminal = event
        if self._on_event is not None:
            self._on_event(event)
