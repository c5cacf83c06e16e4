"""The task owner: one task of a kind at a time, and a superseded task's result never arrives."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, Qt
from pytestqt.qtbot import QtBot

from xlagui.core.protocol.task import TaskState
from xlagui.ui.shared.tasks import BackgroundTask, TaskKeeper, TaskOwner


def blocking(release: threading.Event, started: threading.Event,
             result: str) -> Callable[[TaskState], str]:
    def fn(_state: TaskState) -> str:
        started.set()
        release.wait(10)
        return result

    return fn


def test_a_second_task_cancels_the_first_whose_result_never_arrives(qtbot: QtBot) -> None:
    owner = TaskOwner()
    got: list[object] = []
    owner.done.connect(got.append)
    release, started = threading.Event(), threading.Event()
    first = owner.start(blocking(release, started, "first"))
    assert started.wait(10)
    with qtbot.waitSignal(owner.done, timeout=10_000):
        second = owner.start(lambda _state: "second")
    assert first.state.is_interruption_requested()
    assert not second.state.is_interruption_requested()
    with qtbot.waitSignal(first.done, timeout=10_000):  # the first one ends after all
        release.set()
    QCoreApplication.processEvents()
    assert got == ["second"]
    assert not owner.is_running()


def test_a_result_queued_before_the_cancel_is_dropped(qtbot: QtBot) -> None:
    """Disconnecting does not take back a queued signal: the owner must still drop it."""
    owner = TaskOwner()
    got: list[object] = []
    owner.done.connect(got.append)
    go, started, emitted = threading.Event(), threading.Event(), threading.Event()
    first = owner.start(blocking(go, started, "stale"))
    # Runs in the task's thread, after the owner's queued delivery was posted.
    first.done.connect(lambda _result: emitted.set(), Qt.ConnectionType.DirectConnection)
    go.set()
    assert emitted.wait(10)  # the stale result now waits in this thread's event queue
    release = threading.Event()
    owner.start(blocking(release, threading.Event(), "fresh"))
    QCoreApplication.processEvents()  # delivers the first task's queued `done`
    assert got == []
    with qtbot.waitSignal(owner.done, timeout=10_000):
        release.set()
    assert got == ["fresh"]


def test_cancel_forgets_the_task_and_its_failure(qtbot: QtBot) -> None:
    owner = TaskOwner()
    failures: list[object] = []
    owner.failed.connect(lambda exc, _tb: failures.append(exc))
    release, started = threading.Event(), threading.Event()

    def fails(state: TaskState) -> None:
        started.set()
        release.wait(10)
        raise RuntimeError("too late")

    task = owner.start(fails)
    assert started.wait(10) and owner.is_running()
    owner.cancel()
    assert not owner.is_running() and task.state.is_interruption_requested()
    with qtbot.waitSignal(task.failed, timeout=10_000):
        release.set()
    QCoreApplication.processEvents()
    assert failures == []


def test_progress_and_partial_results_of_the_current_task_arrive(qtbot: QtBot) -> None:
    owner = TaskOwner()
    partials: list[object] = []
    owner.partial.connect(partials.append)

    def work(state: TaskState) -> int:
        state.set_progress(0.5)
        state.set_partial("half")
        return 1

    with qtbot.waitSignals([owner.progress, owner.done], timeout=10_000):
        owner.start(work)
    assert partials == ["half"]


def test_a_finished_task_is_freed(qtbot: QtBot) -> None:
    """The keeper holds a task until its outcome has arrived, then lets it go: a task held by
    its own connections was never freed, nor anything its function or its slots held."""
    keeper = TaskKeeper()
    task = BackgroundTask(lambda _state: "done")
    gone = weakref.ref(task)
    with qtbot.waitSignal(task.done, timeout=5_000):
        keeper.keep(task).start()
    del task
    qtbot.waitUntil(lambda: len(keeper) == 0, timeout=5_000)
    qtbot.waitUntil(lambda: (gc.collect(), gone() is None)[1], timeout=5_000)
