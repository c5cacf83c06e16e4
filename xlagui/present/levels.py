"""How much a line the app shows matters: the level of a message in the window's message bar,
of a note next to a setting, of a line in the reports. The level picks the colour
(`xlagui.ui.shared.theme.LEVEL_COLORS`, `xlagui.ui.shared.dialogs.MESSAGE_COLORS`); no code
branches on a colour or a sentence.
"""

from __future__ import annotations

from xlagui.core.protocol.identity import Severity, StrEnum


class Level(StrEnum):
    """How much a message or a note matters, from good news to what blocks a run: the words
    of a scan problem's `Severity`, and `OK`."""

    OK = "ok"  # done as asked ("Comparison finished.", a dataset ready to train)
    INFO = Severity.INFO.value  # only explains
    WARNING = Severity.WARNING.value  # allowed, but worth a look
    ERROR = Severity.ERROR.value  # blocks a run, or something failed


# A dataset scan's problem (`Severity`, the core's) at the level it is shown.
_OF_SEVERITY = {
    Severity.ERROR: Level.ERROR,
    Severity.WARNING: Level.WARNING,
    Severity.INFO: Level.INFO,
}


def level_of(severity: Severity) -> Level:
    """The level a scan problem of `severity` is shown at."""
    return _OF_SEVERITY[severity]
