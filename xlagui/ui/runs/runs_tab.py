"""The Runs tab's frame: "Preparing the plots…" until the `RunsView` is built.

The view needs pyqtgraph, which takes a while to import: it is imported off the GUI thread
once the window is shown (`preload`), or at once when the view is first needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from xlagui.ui.shared.tasks import BackgroundTask, TaskKeeper

if TYPE_CHECKING:
    from xlagui.ui.runs.runs_view import RunsView


class RunsTab(QStackedWidget):
    """Holds the Runs tab's `RunsView`, built on first use.

    Signals:
        built(object RunsView): the view was built and is shown.
    """

    built = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        waiting = QLabel("Preparing the plots…")
        waiting.setObjectName("Placeholder")
        waiting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.addWidget(waiting)
        self._view: RunsView | None = None
        self._tasks = TaskKeeper()

    @property
    def view(self) -> RunsView:
        """The Runs tab's content, built now if it is not yet."""
        if self._view is None:
            from xlagui.ui.runs.runs_view import RunsView

            self._view = RunsView()
            self.addWidget(self._view)
            self.setCurrentWidget(self._view)
            self.built.emit(self._view)
        return self._view

    def preload(self) -> None:
        """Import pyqtgraph off the GUI thread, then build the view."""
        if self._view is not None:
            return
        # Not a daemon thread: an interpreter shutting down under an import crashes.
        task = BackgroundTask(lambda _state: importlib.import_module("xlagui.ui.runs.runs_view"))
        task.done.connect(self._on_import_done)
        task.failed.connect(self._on_import_done)
        self._tasks.keep(task).start(thread=True)

    def _on_import_done(self, *_outcome: object) -> None:
        self.view  # noqa: B018 (builds it; a failed import raises here, on the GUI thread)
