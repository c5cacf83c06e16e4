"""Short background work for the GUI: one function off the GUI thread, its outcome as signals.

A scan or a thumbnail batch runs in a QThreadPool and can be asked to stop through its
`TaskState`; a `TaskOwner` holds the one task of its kind (the scan, the thumbnails in view, the
history list) so that a superseded task's outcome never arrives. Work that cannot be
interrupted runs in a Python thread of its own: a daemon thread when it only waits (the device
probe waits for a helper process), so that quitting never waits for it; an ordinary thread when
it runs Python code (importing pyqtgraph, drawing the demo set), because the interpreter must
not shut down under it, so quitting waits for it.
"""

from __future__ import annotations

import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from xlagui.core.protocol.task import Cancelled, TaskState


class BackgroundTask(QObject):
    """Runs `fn(state)` once, off the GUI thread.

    Signals:
        progress(float): the fraction done, from `state.set_progress` (already throttled).
        partial(object): a partial result, from `state.set_partial`.
        done(object): what `fn` returned.
        failed(object, str): the exception `fn` raised and its traceback.
        cancelled(): `fn` raised `Cancelled` after `cancel()`.
    """

    progress = Signal(float)
    partial = Signal(object)
    done = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[TaskState], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.state = TaskState(on_progress=self._emit_progress, on_partial=self._emit_partial)
        self.finished = False

    def start(self, pool: QThreadPool | None = None, *, thread: bool = False,
              daemon: bool = False) -> BackgroundTask:
        """Run in `pool` (the global pool by default), or with `thread` in a Python thread of
        its own, a `daemon` one if it may be abandoned when the app quits."""
        if thread:
            threading.Thread(target=self._run, daemon=daemon, name="xlagui-task").start()
        else:
            (pool or QThreadPool.globalInstance()).start(self._run)
        return self

    def cancel(self) -> None:
        self.state.request_interruption()

    def _emit_progress(self, fraction: float) -> None:
        self._safe_emit(self.progress, fraction)

    def _emit_partial(self, result: Any) -> None:
        self._safe_emit(self.partial, result)

    def _run(self) -> None:
        try:
            result = self._fn(self.state)
        except Cancelled:
            self.finished = True
            self._safe_emit(self.cancelled)
        except Exception as exc:
            self.finished = True
            self._safe_emit(self.failed, exc, traceback.format_exc())
        else:
            self.finished = True
            self._safe_emit(self.done, result)

    @staticmethod
    def _safe_emit(signal: Any, *args: Any) -> None:
        # The window may be gone by the time a daemon thread finishes: nobody is listening.
        try:
            signal.emit(*args)
        except RuntimeError:
            pass


class TaskKeeper:
    """Holds running tasks so Python does not collect them before their signals arrive."""

    def __init__(self) -> None:
        self._tasks: set[BackgroundTask] = set()

    def keep(self, task: BackgroundTask) -> BackgroundTask:
        self._tasks.add(task)
        # The task's connections hold these callables: one holding the task itself would make
        # a cycle the garbage collector cannot see, and the task (with what its function and
        # its other connections hold) would never be freed. A weak reference breaks it.
        ref = weakref.ref(task)
        for sig in (task.done, task.failed, task.cancelled):
            sig.connect(lambda *_: self._tasks.discard(ref()))
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)


class TaskOwner(QObject):
    """Owns at most one running task of one kind (Orange3's `ConcurrentMixin`): starting a new
    task cancels the old one, and nothing the old one reports reaches the owner's signals.

    A signal emitted in a worker thread is queued, and disconnecting does not take back what is
    already queued, so the owner also drops whatever arrives from a task it no longer holds.

    Signals:
        progress(float): the current task's fraction done.
        partial(object): a partial result of the current task.
        done(object): the current task's result; the owner then holds no task.
        failed(object, str): the current task raised this exception (with its traceback).
    """

    progress = Signal(float)
    partial = Signal(object)
    done = Signal(object)
    failed = Signal(object, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: BackgroundTask | None = None
        self._keeper = TaskKeeper()

    @property
    def task(self) -> BackgroundTask | None:
        """The task running now, if any."""
        return self._task

    def is_running(self) -> bool:
        return self._task is not None

    def start(self, fn: Callable[[TaskState], Any],
              pool: QThreadPool | None = None) -> BackgroundTask:
        """Cancel the current task, if any, and run `fn(state)` in `pool` (the global pool by
        default) as the current one."""
        self.cancel()
        task = self._task = BackgroundTask(fn)
        # Bound slots, not lambdas: Qt drops the connections when the owner is deleted.
        for signal, slot in self._relays(task):
            signal.connect(slot)
        self._keeper.keep(task).start(pool)
        return task

    def cancel(self) -> None:
        """Ask the current task to stop and forget it: what it reports from now on is dropped."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        for signal, slot in self._relays(task):
            signal.disconnect(slot)

    def _relays(self, task: BackgroundTask) -> list[tuple[Any, Callable[..., None]]]:
        return [(task.progress, self._on_task_progress), (task.partial, self._on_task_partial),
                (task.done, self._on_task_done), (task.failed, self._on_task_failed),
                (task.cancelled, self._on_task_cancelled)]

    def _is_current(self) -> bool:
        # A superseded task's signal may have been queued before it was cancelled.
        sender = self.sender()
        return sender is not None and sender is self._task

    def _on_task_progress(self, fraction: float) -> None:
        if self._is_current():
            self.progress.emit(fraction)

    def _on_task_partial(self, result: Any) -> None:
        if self._is_current():
            self.partial.emit(result)

    def _on_task_done(self, result: Any) -> None:
        if self._is_current():
            self._task = None
            self.done.emit(result)

    def _on_task_failed(self, exc: BaseException, details: str) -> None:
        if self._is_current():
            self._task = None
            self.failed.emit(exc, details)

    def _on_task_cancelled(self) -> None:
        if self._is_current():
            self._task = None
