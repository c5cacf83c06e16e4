"""The window's look at the machine before a comparison measures (issue 37's preflight): what
else uses it over `PREFLIGHT_SECONDS`, waited with a timer so the window stays live; when
something keeps it busy, the user is asked to measure anyway, wait for it to go quiet, or not
start. The comparison's own preflight (`xlagui.core.compare.workflow.preflight`) then looks
again, waits if asked, and records what it found.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from xlagui.core.machine.interference import MachineLook, preflight_seconds
from xlagui.core.protocol.interference import Preflight
from xlagui.present.machine_load import busy_question
from xlagui.ui.shared import dialogs

BUSY_TITLE = "The machine is busy"
MEASURE_ANYWAY = "Measure anyway"
WAIT_FOR_QUIET = "Wait for it to go quiet"
# How long "Wait for it to go quiet" waits before measuring anyway (`--wait-quiet` in the CLI).
WAIT_QUIET_SECONDS = 120.0

# What to do once the machine was looked at: start, with how long to wait for it to go quiet
# (None: measure at once).
Go = Callable[[float | None], object]


class MachineLookGate(QObject):
    """One look at a time before a comparison starts.

    Signals:
        declined(): the user chose not to start on a busy machine.
    """

    declined = Signal()

    def __init__(self, window: Callable[[], QWidget], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._window = window
        self._pending: tuple[MachineLook, Go] | None = None

    @property
    def pending(self) -> bool:
        return self._pending is not None

    @staticmethod
    def wanted() -> bool:
        """A look is taken at all (`XLAGUI_PREFLIGHT_SECONDS` 0 turns it off)."""
        return preflight_seconds() > 0

    def look(self, busy_percent: float, go: Go) -> None:
        """Look for `PREFLIGHT_SECONDS`, then call `go` (or ask first, when busy)."""
        look = MachineLook(busy_percent)
        look.begin()
        self._pending = (look, go)
        QTimer.singleShot(round(preflight_seconds() * 1000), self._on_timer_looked)

    def cancel(self) -> bool:
        """Forget the look in progress (nothing starts); whether there was one."""
        had, self._pending = self._pending is not None, None
        return had

    def _on_timer_looked(self) -> None:
        if self._pending is None:  # cancelled meanwhile
            return
        look, go = self._pending
        self._pending = None
        found = Preflight(look=look.end())
        if not found.busy:
            go(None)
            return
        answer = dialogs.choose(self._window(), BUSY_TITLE, busy_question(found),
                                [MEASURE_ANYWAY, WAIT_FOR_QUIET])
        if answer is None:
            self.declined.emit()
            return
        go(WAIT_QUIET_SECONDS if answer == WAIT_FOR_QUIET else None)
