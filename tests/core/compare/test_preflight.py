"""The look at the machine before the measuring workers start (`workflow.preflight`): said to
the watcher, waited on when asked, ended by a stop, and off where it should be."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.spinner import spinning_elsewhere
from xlagui.core.compare import Watcher
from xlagui.core.compare.workflow import preflight
from xlagui.core.protocol.interference import Preflight
from xlagui.core.protocol.task import TaskState


class Told(Watcher):
    def __init__(self) -> None:
        self.looks: list[tuple[Preflight, bool]] = []

    def on_preflight(self, preflight: Preflight, final: bool) -> None:
        self.looks.append((preflight, final))


@pytest.fixture
def spinner() -> Iterator[None]:
    """Another program spinning on one core (not this process's child: that is its own)."""
    with spinning_elsewhere():
        yield


def test_a_busy_machine_is_waited_on_up_to_the_limit_then_measured_anyway(spinner: None) -> None:
    told = Told()
    # A look of 0.2 s took over 0.3 s beside CI's other lanes: the limit leaves room for three.
    found = preflight(1, told, TaskState(), wait_limit=1.5, look_seconds=0.2)
    assert found is not None and found.busy and found.wait_limit_seconds == 1.5
    assert found.waited_seconds >= 0.4  # looked again while waiting
    assert [final for _, final in told.looks][-1] is True
    assert len(told.looks) >= 3 and not any(final for _, final in told.looks[:-1])


def test_without_a_wait_it_looks_once_and_goes_ahead(spinner: None) -> None:
    told = Told()
    found = preflight(1, told, TaskState(), wait_limit=None, look_seconds=0.2)
    assert found is not None and found.busy and found.waited_seconds == 0
    assert [final for _, final in told.looks] == [True]


def test_a_stop_ends_the_wait(spinner: None) -> None:
    state = TaskState()
    state.request_interruption("")
    found = preflight(1, Told(), state, wait_limit=60, look_seconds=0.2)
    assert found is not None and found.waited_seconds == 0


def test_a_preflight_of_no_seconds_is_no_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLAGUI_PREFLIGHT_SECONDS", "0")
    told = Told()
    assert preflight(10, told, TaskState(), wait_limit=None) is None and told.looks == []
