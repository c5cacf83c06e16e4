"""What every step of a scan shares: the dataset root, the problems found so far, the pixel
limit, and the task state that takes progress and may ask the scan to stop."""

from __future__ import annotations

import os
from typing import Any

from xlagui.core.data.scan.model import PROBLEM_KINDS, Problem
from xlagui.core.protocol.identity import Severity
from xlagui.core.protocol.task import Cancelled, TaskState


class ScanContext:
    """One scan in progress; the steps (walk, probe, duplicates, classes) report through it."""

    def __init__(self, root: str, pixel_limit: int, state: TaskState | None) -> None:
        self.root = root
        self.pixel_limit = pixel_limit
        self.state = state
        self.problems: list[Problem] = []

    def problem(self, kind: str, paths: list[str], *, said: str = "",
                severity: Severity | None = None, **facts: Any) -> None:
        """One more problem of `kind`, on `paths` (names exactly as on disk), said by its
        sentence `said` ("": the kind's own) with `facts` (`xlagui.present.scan_problems`)."""
        self.problems.append(
            Problem(kind, severity or PROBLEM_KINDS[kind], paths, said or kind, dict(facts)))

    def check_stop(self) -> None:
        if self.state is not None and self.state.is_interruption_requested():
            raise Cancelled()

    def progress(self, fraction: float) -> None:
        if self.state is not None:
            self.state.set_progress(fraction)

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")


def reason(exc: OSError) -> str:
    """Why a file or folder could not be read, as the system says it (a fact of a problem, and
    of a `DatasetError`)."""
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc) or type(exc).__name__
