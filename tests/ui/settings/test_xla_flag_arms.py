"""The window's "Also measure" offers the XLA flags measured to change speed here, by name, each
joined with jit and with its one line (`present/levers.py`); a box ticked is an arm of the
comparison. With a real click."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from xlagui.core.protocol import xla_flags
from xlagui.core.protocol.arms import parse_arm
from xlagui.present.levers import VALUE_WORDS
from xlagui.ui.settings.settings_panel import SettingsPanel


def test_the_named_flags_that_change_speed_are_offered_with_their_line(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    offered = [n for n in xla_flags.NAMED if n.offered]
    assert offered  # docs/flags-findings.md: at least one flag changed speed here
    flag_arms = [name for name in panel.arm_boxes if parse_arm(name).levers.get("xla_flags")]
    assert flag_arms == [f"jit+{n.part}" for n in offered]
    for named in offered:
        words = VALUE_WORDS[f"xla_flags.{named.part}"]
        box = panel.arm_boxes[f"jit+{named.part}"]
        assert box.text() == f"jit+{named.part}"
        beside = box.parentWidget().findChild(QLabel)
        assert beside is not None and beside.text() == f"XLA jit_compile + {words.short}"
        assert box.toolTip().endswith(f"; {words.how}")
        assert f"--{named.flag}={named.value}" in words.how
        assert not box.isChecked()  # never ticked by default: XLA is the question
    first = f"jit+{offered[0].part}"
    click(qtbot, panel.arm_boxes[first])
    config = panel.config()
    assert config is not None and config.arms == (first,)
