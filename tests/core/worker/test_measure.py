"""The measuring worker's wait for its own threads to go idle (no TensorFlow)."""

from __future__ import annotations

import pytest

from xlagui.core.worker.measure import wait_until_quiet


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
