"""Short background work for the GUI: one function off the GUI thread, its outcome as signals.

A scan or a thumbnail batch runs in a QThreadPool and can be asked to stop through its
`TaskState`. Work that cannot be interrupted runs in a Python thread of its own: a daemon
thread when it only waits (the device probe waits for a helper process), so that quitting
never waits for it; an ordinary thread when it runs Python code (importing pyqtgraph, drawing
the demo set), because the interpreter must not shut down under it, so quitting waits for it.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThreadPool, Signal

from xlagui.core.task import Cancelled, TaskState


class BackgroundTask(QObject):
    """Runs `fn(state)` once, off the GUI thread.

    Signals:
        progress(float): the fraction done, from `state.set_progress` (already throttled).
        done(object): what `fn` returned.
        failed(object, str): the exception `fn` raised and its traceback.
        cancelled(): `fn` raised `Cancelled` after `cancel()`.
    """

    progress = Signal(float)
    done = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()

    def __init__(self, fn: Callable[[TaskState], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.state = TaskState(on_progress=self._emit_progress)
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
        for sig in (task.done, task.failed, task.cancelled):
            sig.connect(lambda *_, t=task: self._tasks.discard(t))
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)
