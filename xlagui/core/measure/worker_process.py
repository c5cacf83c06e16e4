"""The one supervisor of child processes: start one through its transport, read its events,
cancel it, report its end (`ChildProcess`); a run's worker is one (`WorkerProcess`).

Named `worker_process` because it is the parent's side of `python -m xlagui.core.worker.child`
(`core/worker/` is the child's side); `supervisor` is the GUI's QThread
(`xlagui.ui.runs.supervisor`), which only watches the comparison (`xlagui.core.compare`).

Every child goes through `ChildProcess`: the training and measuring workers
(`runner.run_worker`, `interleave.measure_interleaved`) and the short ones (`model_check.py`: the
model check; `children.py`: the device probe, the peak probe, the TensorBoard text), so the
following are written once:

- starting: the child's folder (its log, `events.jsonl`, a temporary folder), and a
  `Transport` (`core/measure/transports/`) that runs its command line with the one environment
  recipe, here or on a host;
- reading: a thread reads the child's stdout, and each line is decoded by the protocol's one
  decoder (`events.parse_event`), the protocol version checked on its first word;
- the malformed-line policy (see `ChildProcess._refuse`): a line that is not an event ends the
  child with an error naming it;
- cancelling: one format (a `WorkerCommand("cancel")` JSON line) for a child that reads
  commands, then terminate, then kill, each step once, after its grace period;
- a death (non-zero exit, a signal, out of memory) reported by the transport, for a run with
  its arm and sizes (`ended.died_event`).
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from xlagui.core.measure.ended import LOG_TAIL_CHARS
from xlagui.core.measure.jobs import ChildJob, WorkerJob
from xlagui.core.measure.transports.base import Transport
from xlagui.core.measure.transports.local import LOCAL
from xlagui.core.protocol.events import (
    TERMINAL_TYPES,
    CancelledEvent,
    DevicesEvent,
    ErrorEvent,
    Event,
    LimitsEvent,
    ProtocolError,
    ProtocolMismatch,
    StartedEvent,
    TextWrittenEvent,
    WorkerCommand,
    check_protocol,
    parse_event,
)
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.identity import Command, EventType
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
FIRST_WORDS = (StartedEvent, DevicesEvent, LimitsEvent, TextWrittenEvent)


class WorkerGone(Exception):
    """The worker ended (error, cancel, death) while the parent waited for something else."""

    def __init__(self, event: Event) -> None:
        super().__init__(getattr(event, "message", event.type))
        self.event = event


class Stopped(Exception):
    """The user asked to stop while the parent waited for the worker (which is cancelled: the
    caller waits for it to end, `stop`)."""


def _read_lines(stream: IO[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)  # end of file: the worker closed its stdout, or died


class ChildProcess:
    """One child process, from `start` to `close` (a context manager closes it).

    Every event the child sends is decoded, appended to `events`, written to `events.jsonl` in
    its folder and handed to `on_event` as it is read (`poll`, `wait_for`, `run_to_end`);
    `terminal` is the child's last word (for a run: finished, cancelled or error; for a short
    child: its answer or an error), the parent's own when the child could not say it (a death,
    a forced stop, a refused stream). Never raises for a child's failure; an exception raised by
    `on_event` goes up to the caller, and `close` still ends the child.
    """

    def __init__(
        self,
        job: ChildJob,
        on_event: Callable[[Event], None] | None = None,
        *,
        transport: Transport = LOCAL,
        cancel_grace: float = CANCEL_GRACE_SECONDS,
        terminate_grace: float = TERMINATE_GRACE_SECONDS,
    ) -> None:
        self.job = job
        self.events: list[Event] = []
        self.terminal: Event | None = None
        # The parent's account of a child that ended without its last word (the transport's).
        self.died: ErrorEvent | None = None
        self.returncode: int | None = None
        self._on_event = on_event
        self._transport = transport
        # A child that reads no commands cannot be asked: a stop terminates it at once.
        self._cancel_grace = cancel_grace if job.reads_commands else 0.0
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
        return self.job.log_path

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

    def __enter__(self) -> ChildProcess:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> None:
        folder = self.job.folder
        folder.mkdir(parents=True, exist_ok=True)
        self._write_inputs()
        (folder / "tmp").mkdir(exist_ok=True)
        self._log = self.log_path.open("wb")
        self._events_file = (folder / "events.jsonl").open("w", encoding="utf-8")
        self._t0 = time.perf_counter()
        self._proc = self._transport.start(self.job, self._log)
        assert self._proc.stdout is not None
        self._reader = threading.Thread(
            target=_read_lines, args=(self._proc.stdout, self._lines), daemon=True, name="events"
        )
        self._reader.start()

    def _write_inputs(self) -> None:
        """Files the child reads from its folder (a run's spec)."""

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
        `cancel_grace`, kill after `terminate_grace` more (`poll` climbs it). Once; returns at
        once. A worker that has not said `started` is terminated now: its set-up (importing
        TensorFlow, decoding the images) never looks at a cancel, and it has done nothing to
        keep."""
        if self._cancel_at is not None or self._ended:
            return
        self._cancel_at = time.monotonic()
        if self.job.reads_commands:
            self.send(WorkerCommand(Command.CANCEL))
        proc = self._proc
        started = any(isinstance(e, StartedEvent) for e in self.events)
        if not started and proc is not None and proc.poll() is None:
            self._terminate_at = self._cancel_at
            proc.terminate()

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
            # A child's first word says its protocol (the model check's answer is checked by
            # the model check, in its own words).
            if isinstance(event, FIRST_WORDS) and not self._protocol_checked:
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
        when `state` asks to stop (after cancelling this worker: the caller waits for it,
        together with its others) and `WorkerGone` when the worker ends first."""
        while True:
            if state.is_interruption_requested():
                self.cancel()
                raise Stopped()
            if self._ended:
                # Only a stream refused before its last word leaves no terminal event: the
                # words are the measurement record's `error` (saved, never shown).
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
        shutil.rmtree(self.job.folder / "tmp", ignore_errors=True)
        if proc is not None and not self._finished:
            self._finished = True
            self._transport.finish(self.job)  # a remote child's folder comes home

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
                epochs_done=sum(1 for e in self.events if e.type == EventType.EPOCH),
                forced=self.forced,
                reason="cancelled by the user; the worker did not stop by itself and was "
                + ("killed" if self._killed else "terminated")
                if self.forced
                else "cancelled by the user",
            )
        else:
            event = self.died = self._transport.died(self.returncode, self.log_path, self.job)
        event.t = round(time.perf_counter() - self._t0, 6)
        self._record(event, last=True)
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
        # The message travels with the run's error event as it is (comparison.json, every
        # version's "failed: …"), so it is worded here; its advice is the kind's.
        error = ErrorEvent(
            error_type=type(exc).__name__,
            message=str(exc) if mismatch else f"the worker sent a line that is not an event: {exc}",
            kind=(Failure.PROTOCOL_MISMATCH if mismatch else Failure.NOT_AN_EVENT).value,
            details=line.rstrip("\r\n")[:LOG_TAIL_CHARS],
        )
        error.t = round(time.perf_counter() - self._t0, 6)
        self._ended = True
        self._record(error, last=True)
        # It does not speak our protocol: a cooperative cancel would not be understood.
        if self._proc is not None and self._proc.poll() is None:
            self._terminate_at = time.monotonic()
            self._proc.terminate()
        return error

    def _record(self, event: Event, *, last: bool = False) -> None:
        """Keep `event`; `last`: the parent's own account of the end, the child's last word."""
        if self.terminal is None and (last or self.job.is_last(event, self.events)):
            self.terminal = event
        self.events.append(event)
        if self._events_file is not None:
            self._events_file.write(event.to_json() + "\n")
            self._events_file.flush()
        if self._on_event is not None:
            self._on_event(event)


class WorkerProcess(ChildProcess):
    """The worker of one run (`spec`): its folder is the run's, its spec written there as
    `spec.json`; `command` replaces the child module's command line (a test's fake worker)."""

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
        job = WorkerJob.of(spec, command)
        super().__init__(job, on_event, transport=transport,
                         cancel_grace=cancel_grace, terminate_grace=terminate_grace)
        self.spec = spec
        self._spec_path = job.spec_path

    def __enter__(self) -> WorkerProcess:
        return self

    def _write_inputs(self) -> None:
        self._spec_path.write_text(self.spec.to_json(), encoding="utf-8")
