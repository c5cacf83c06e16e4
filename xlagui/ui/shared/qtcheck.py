"""Refuse to run on a PySide6 build that drops references to None and True.

PySide6 6.12.0 on CPython 3.11 returns from most void methods (`QLabel.setText`,
`QWidget.update`, ...) without taking the reference to `None` it hands back, and from
`Signal.emit()` without taking the one to `True`. pyqtgraph makes hundreds of such calls per
repaint, so a window showing a live run aborts within seconds ("Fatal Python error:
none_dealloc"). pyproject.toml excludes that build; this check turns an environment that has it
anyway into a clear message instead of a crash mid-run.
"""

from __future__ import annotations

import sys

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QObject, Signal


class BrokenQtError(ImportError):
    """The installed PySide6 is known to crash the interpreter."""


class _Probe(QObject):
    ping = Signal()


def references_dropped() -> bool:
    """Whether this PySide6 takes references away from None or True on ordinary calls."""
    if sys.version_info >= (3, 12) or not hasattr(sys, "getrefcount"):
        return False  # None and True are immortal from 3.12 on: the bug cannot bite
    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(16):
        probe.setObjectName("probe")  # void: returns None
        probe.ping.emit()  # returns True
    none_lost = none_before - sys.getrefcount(None)
    true_lost = true_before - sys.getrefcount(True)
    return none_lost >= 16 or true_lost >= 16


def refuse_broken_pyside() -> None:
    if references_dropped():
        raise BrokenQtError(
            f"PySide6 {pyside_version} on Python {sys.version_info.major}."
            f"{sys.version_info.minor} has a reference-counting bug that crashes the window "
            "during a run. Install another release: pip install 'pyside6-essentials!=6.12.0' "
            "(or use Python 3.12 or newer)."
        )
