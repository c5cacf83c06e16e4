"""The worker's two pipes: events out on the real stdout (`EventSink`, `redirect_stdout`), commands
in on stdin (`watch_stdin`).

Events go to the original stdout, one JSON object per line. Anything else that would be printed
(Python or TensorFlow's C++ logging) goes to stderr, which the parent points at the run's log.
Stdin carries commands (`events.WorkerCommand`, one JSON object a line): `cancel` asks the run to
stop at the next batch; end-of-file means the parent is gone, and the worker exits at once rather
than live on as an orphan.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from typing import TextIO

from xlagui.core.protocol.events import (
    TERMINAL_TYPES,
    Event,
    ProtocolError,
    WorkerCommand,
    write_event,
)
from xlagui.core.protocol.identity import Command

EXIT_PARENT_GONE = 3
# Set once the run's last event (finished, cancelled or error) is out: the parent may close our
# stdin as soon as it reads it, and that end of file is then no reason to exit with
# EXIT_PARENT_GONE ahead of the main thread's own exit status.
TERMINAL_SENT = threading.Event()


class EventSink:
    """Where a worker's events go: stamped with the seconds since `t0`, one line each, from
    any thread."""

    def __init__(self, stream: TextIO, t0: float) -> None:
        self._stream = stream
        self._t0 = t0
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.perf_counter() - self._t0

    def emit(self, event: Event) -> None:
        event.t = round(self.now(), 6)
        with self._lock:
            if event.type in TERMINAL_TYPES:
                TERMINAL_SENT.set()
            write_event(self._stream, event)


def redirect_stdout() -> TextIO:
    """Keep the real stdout for events; send everything else printed to fd 1 to stderr."""
    sys.stdout.flush()
    events_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    return os.fdopen(events_fd, "w", buffering=1, encoding="utf-8")


def watch_stdin(cancel: threading.Event, commands: queue.Queue[WorkerCommand]) -> None:
    """Read commands until stdin ends: `cancel` also sets `cancel`, every command is queued.
    The end of stdin before the run's last event means the parent is gone: exit at once."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            command = WorkerCommand.from_json(line)
        except ProtocolError as exc:
            print(f"ignored a bad command: {exc}", file=sys.stderr)
            continue
        if command.cmd is Command.CANCEL:
            cancel.set()
        commands.put(command)
    if TERMINAL_SENT.is_set():
        return  # the parent read our last event and let go; main() exits with its own status
    # End of file: the parent died or closed the pipe. Nobody is listening any more.
    os._exit(EXIT_PARENT_GONE)
