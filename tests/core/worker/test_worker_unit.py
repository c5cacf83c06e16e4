"""Worker functions that need no TensorFlow: the wait for its own threads to go idle, and what
the end of stdin means."""

from __future__ import annotations

import io
import queue
import threading

import pytest

from xlagui.core.protocol.events import CancelledEvent, WorkerCommand
from xlagui.core.worker import child as worker
from xlagui.core.worker.child import EXIT_PARENT_GONE, EventSink, wait_until_quiet


class FakeProcess:
    """A process whose threads burn `busy` CPU seconds per poll for `busy_polls` polls."""

    def __init__(self, busy_polls: int, busy: float = 0.02) -> None:
        self.t = 0.0
        self.cpu = 0.0
        self.busy_polls = busy_polls
        self.busy = busy
        self.polls = 0

    def sleep(self, seconds: float) -> None:
        self.t += seconds
        self.polls += 1
        if self.polls <= self.busy_polls:
            self.cpu += self.busy

    def clock(self) -> float:
        return self.t

    def cpu_seconds(self) -> float:
        return self.cpu


def wait(proc: FakeProcess, max_seconds: float = 3.0) -> float:
    return wait_until_quiet(
        max_seconds=max_seconds,
        poll=0.02,
        cpu_seconds=proc.cpu_seconds,
        sleep=proc.sleep,
        clock=proc.clock,
    )


def test_an_idle_process_answers_after_one_poll() -> None:
    assert wait(FakeProcess(busy_polls=0)) == pytest.approx(0.02)


def test_it_waits_while_background_threads_work() -> None:
    # tf.data refilling its buffer for 10 polls (0.2 s), then idle: answered on the 11th poll
    proc = FakeProcess(busy_polls=10)
    assert wait(proc) == pytest.approx(0.22)
    assert proc.polls == 11


def test_light_background_work_counts_as_quiet() -> None:
    # a thread using 5% of a core (below the 10% threshold) does not hold the answer back
    assert wait(FakeProcess(busy_polls=1000, busy=0.001)) == pytest.approx(0.02)


def test_a_process_that_never_settles_is_given_up_on() -> None:
    waited = wait(FakeProcess(busy_polls=10_000), max_seconds=0.5)
    assert 0.5 <= waited < 0.55


def test_the_escape_hatch_switches_it_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLAGUI_QUIET_WAIT", "0")
    proc = FakeProcess(busy_polls=10)
    assert wait(proc) == 0.0 and proc.polls == 0


class Exited(Exception):
    pass


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    codes: list[int] = []

    def fake_exit(code: int) -> None:
        codes.append(code)
        raise Exited

    monkeypatch.setattr(worker.os, "_exit", fake_exit)
    monkeypatch.setattr(worker, "_TERMINAL_SENT", threading.Event())
    monkeypatch.setattr(worker.sys, "stdin", io.StringIO(""))
    return codes


def watch() -> None:
    worker._watch_stdin(threading.Event(), queue.Queue[WorkerCommand]())


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
