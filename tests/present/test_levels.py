"""The levels a message or a note is shown at, and a scan problem's severity among them."""

from __future__ import annotations

from xlagui.core.protocol.identity import Severity
from xlagui.present.levels import Level, level_of


def test_every_severity_is_shown_at_its_level() -> None:
    assert [level_of(s) for s in Severity] == [Level.ERROR, Level.WARNING, Level.INFO]
    # The saved words stay what they were: a level is its string.
    assert [str(level) for level in Level] == ["ok", "info", "warning", "error"]
