"""A new lever is offered under "Also measure" without touching the window, and its arm runs
in a column of its own, in a colour of its own, in plain words (`knob`, made up in
tests/helpers/levers.py and registered only here; its measuring worker is the fake one, which
takes any arm). With real clicks."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from tests.helpers.levers import KNOB, register_knob
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import DEFAULTS, EXTRA_ARM_BUDGET_SECONDS
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.ui.settings.settings_panel import SettingsPanel
from xlagui.ui.shared.theme import value_color
from xlagui.ui.window.main_window import MainWindow


@pytest.fixture(autouse=True)
def knob(monkeypatch: pytest.MonkeyPatch) -> None:
    register_knob(monkeypatch)  # before any panel or window is built


def test_also_measure_offers_the_new_levers_arm(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    box = panel.arm_boxes["knob2"]
    alone = [name for name in panel.arm_boxes if "+" not in name]
    assert alone[-1] == "knob2"  # after the values offered before it, before the pairs
    assert box.text() == "knob2"
    beside = box.parentWidget().findChild(QLabel)
    assert beside is not None and beside.text() == "knob=2"  # wrapped beside the box
    assert box.toolTip() == (
        "knob=2: XLAGUI_TEST_KNOB=2, tf.config.threading.set_inter_op_parallelism_threads(2), "
        "model.compile(steps_per_execution=2)")
    assert not box.isChecked() and panel.arms == ()  # never ticked by default
    click(qtbot, box)
    assert panel.arms == ("knob2",)
    config = panel.config()
    assert config is not None and config.arms == ("knob2",)
    assert panel.budget.value() == DEFAULTS["budget_seconds"] + EXTRA_ARM_BUDGET_SECONDS
    assert not panel._arm_notes["knob2"].isVisible()  # no hardware note against it


def test_its_arm_is_measured_in_a_column_of_its_own(qtbot: QtBot,
                                                      loaded_window: MainWindow) -> None:
    window = loaded_window
    click(qtbot, window.settings_panel.arm_boxes["knob2"])
    click(qtbot, window.speed_only)
    with qtbot.waitSignal(window.comparison_finished, timeout=30_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    assert isinstance(report, ComparisonReport) and report.config.arms == ("knob2",)
    knob2 = report.measure_runs[-1]
    assert (knob2.variant, knob2.arm, knob2.levers) == ("knob2", parse_arm("knob2"), {"knob": "2"})
    saved = json.loads(json.dumps(report.to_dict()))["measure_runs"][-1]
    assert saved["levers"] == {"knob": "2"} and RunEntry.from_dict(saved) == knob2
    view = window.runs_view
    assert list(view.columns) == ["baseline", "xla", "knob2"]
    column = view.columns["knob2"]
    assert column.title.text() == "knob2" and column.subtitle.text() == "knob=2"
    assert column.status_text == "Speed measured"
    speed = view.comparison.speed
    assert speed.shown() == ["xla", "knob2"]
    pen = speed.arms["knob2"].estimate.opts["pen"]
    assert pen.color().name() == value_color(KNOB.values[1])
    # Ranked with the XLA side (the fake worker gives both the same speed).
    assert sorted(row[1].removesuffix(" ★") for row in view.comparison.arm_rows) == [
        "jit", "knob2"]
