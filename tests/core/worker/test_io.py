"""The worker's pipes (no TensorFlow): what the end of stdin means, and events stamped and
sent whole."""

from __future__ import annotations

import io
import json
import queue
import threading

import pytest

from xlagui.core.protocol.events import CancelledEvent, WorkerCommand
from xlagui.core.worker import io as worker_io
from xlagui.core.worker.io import EXIT_PARENT_GONE, EventSink


class Exited(Exception):
    pass


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        raise Exited

    monkeypatch.setattr(worker_io.os, "_exit", fake_exit)
    monkeypatch.setattr(worker_io, "TERMINAL_SENT", threading.Event())
    monkeypatch.setattr(worker_io.sys, "stdin", io.StringIO(""))
    return codes


def watch() -> None:
    worker_io.watch_stdin(threading.Event(), queue.Queue[WorkerCommand]())


def test_end_of_stdin_before_the_last_event_means_the_parent_is_gone(exits: list[int]) -> None:
    with pytest.raises(Exited):
        watch()
    assert exits == [EXIT_PARENT_GONE]


def test_end_of_stdin_after_the_last_event_leaves_the_exit_status_to_main(
    exits: list[int],
) -> None:
    # The parent closes stdin as soon as it reads `cancelled`; the worker must still exit 0.
    EventSink(io.StringIO(), 0.0).emit(CancelledEvent(epochs_done=0))
    watch()
    assert exits == []


def test_commands_are_queued_and_a_cancel_also_sets_the_flag(
    exits: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [WorkerCommand("warmup", steps=2).to_json(), "not a command",
             WorkerCommand("cancel").to_json()]
    monkeypatch.setattr(worker_io.sys, "stdin", io.StringIO("\n".join(lines) + "\n"))
    cancel = threading.Event()
    commands: queue.Queue[WorkerCommand] = queue.Queue()
    with pytest.raises(Exited):  # then the end of stdin, before any last event
        worker_io.watch_stdin(cancel, commands)
    assert cancel.is_set()
    assert [commands.get_nowait().cmd for _ in range(2)] == ["warmup", "cancel"]


def test_an_event_is_one_stamped_line() -> None:
    out = io.StringIO()
    EventSink(out, 0.0).emit(CancelledEvent(epochs_done=2))
    line = out.getvalue()
    assert line.endswith("\n") and line.count("\n") == 1
    sent = json.loads(line)
    assert sent["type"] == "cancelled" and sent["epochs_done"] == 2 and sent["t"] > 0
