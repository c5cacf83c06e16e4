"""The small state object long work reports through (after Orange3's `TaskState`).

Training, scanning and comparing are plain functions that take a `TaskState`: they report
progress and partial results through it and ask it whether they should stop. Whoever hosts the
work (a QThread in the GUI, the CLI's main thread, a test) decides what those reports do.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Cancelled(Exception):
    """Raised by work that noticed it was asked to stop."""


class TaskState:
    """Progress, partial results and the "was I asked to stop (and why)?" flag of one piece
    of work.

    Progress callbacks fire only when the rounded percentage changes, so a fast loop does not
    flood whoever is watching.
    """

    def __init__(
        self,
        on_progress: Callable[[float], None] | None = None,
        on_partial: Callable[[Any], None] | None = None,
    ) -> None:
        self._stop = threading.Event()
        self._on_progress = on_progress
        self._on_partial = on_partial
        self._last_percent = -1
        self._reason = ""

    def request_interruption(self, reason: str = "") -> None:
        """Ask the work to stop. `reason` says why, for work that records a stop by its cause
        (a comparison closed with the app, `compare.CLOSING`, marks its run `interrupted`
        where a Stop marks it `cancelled`); a later request without one keeps it."""
        if reason:
            self._reason = reason
        self._stop.set()

    @property
    def interruption_reason(self) -> str:
        """Why the work was asked to stop ("" when no reason was given, or it was not)."""
        return self._reason

    def is_interruption_requested(self) -> bool:
        return self._stop.is_set()

    def raise_if_interrupted(self) -> None:
        if self._stop.is_set():
            raise Cancelled()

    def wait_interruption(self, timeout: float) -> bool:
        return self._stop.wait(timeout)

    def set_progress(self, fraction: float) -> None:
        percent = round(max(0.0, min(1.0, fraction)) * 100)
        if percent != self._last_percent:
            self._last_percent = percent
            if self._on_progress is not None:
                self._on_progress(percent / 100)

    def set_partial(self, result: Any) -> None:
        if self._on_partial is not None:
            self._on_partial(result)
