"""A comparison on a computer in use (issue 37), driven with real clicks: the answer measured
beside a busy program is marked in the window (banner, plot, History), and a machine already busy
before measuring is said first, with the choice to measure anyway or not start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, wait_until, watching
from tests.helpers.spinner import spinning_elsewhere
from tests.ui.conftest import WindowFactory, load_small
from tests.ui.runs.test_arms import set_by_typing
from tests.ui.runs.test_runs import run_to_end
from tests.ui.window.test_stop import measure_command
from xlagui.core.results import history
from xlagui.present.history import verdict
from xlagui.ui.runs.machine_look import BUSY_TITLE, MEASURE_ANYWAY
from xlagui.ui.window.main_window import MainWindow


def busy_threshold(qtbot: QtBot, window: MainWindow, percent: int) -> None:
    """Open the settings' advanced part if needed and type the "Busy above" percentage."""
    panel = window.settings_panel
    if not panel.busy.isVisible():
        click(qtbot, panel.advanced_button)
    set_by_typing(qtbot, panel.busy, percent)
    assert panel.busy.value() == percent


def measure_beside(qtbot: QtBot, make_window: WindowFactory, dataset: Path,
                   other_share: float) -> tuple[MainWindow, object]:
    """A speed-only comparison clicked in a window whose (fake) measuring workers say that
    something else used `other_share` of the cores in every block; the window, the report."""
    window = load_small(qtbot, make_window(measure_command=measure_command(
        {"other_share": other_share})), dataset)
    with watching(window, ModalAnswerer()):
        busy_threshold(qtbot, window, 10)
        click(qtbot, window.speed_only)
        report = run_to_end(qtbot, window)
    return window, report


def test_an_answer_measured_beside_a_busy_program_is_marked_in_the_window(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    window, report = measure_beside(qtbot, make_window, dataset, 0.45)
    c = report.comparison  # type: ignore[attr-defined]
    assert c.interleaved.machine.busy and c.interleaved.machine.disturbed_rounds >= 8
    banner = window.runs_view.comparison.machine
    assert banner.isVisible() and "measured on a busy machine" in banner.text()
    assert "spinner (pid 4242) 45%" in banner.text() and "Close them" in banner.text()
    # The live plot draws every disturbed round apart, on the curve.
    crosses = window.runs_view.comparison.speed.arms["xla"].disturbed
    assert len(crosses.getData()[0]) == c.interleaved.pairs
    items = history.list_items(window.comparisons.history_root)
    assert verdict(items[0]).endswith("(busy)")


def test_a_quiet_threshold_keeps_every_round_and_says_the_machine_was_quiet(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    window, report = measure_beside(qtbot, make_window, dataset, 0.01)
    c = report.comparison  # type: ignore[attr-defined]
    assert not c.interleaved.machine.busy and c.interleaved.disturbed_pairs == 0
    banner = window.runs_view.comparison.machine
    assert banner.isVisible() and banner.text().startswith("The machine was quiet")
    crosses = window.runs_view.comparison.speed.arms["xla"].disturbed.getData()[0]
    assert crosses is None or len(crosses) == 0


@pytest.fixture
def spinner() -> Iterator[int]:
    """A process spinning on one core, as a user's busy program would (not this process's
    child: the window's own children are its own work)."""
    with spinning_elsewhere() as pid:
        yield pid


@pytest.mark.parametrize("answer", [MEASURE_ANYWAY, "Cancel"])
def test_a_busy_machine_before_measuring_is_said_and_the_user_chooses(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path, spinner: object,
        monkeypatch: pytest.MonkeyPatch, answer: str) -> None:
    monkeypatch.setenv("XLAGUI_PREFLIGHT_SECONDS", "0.4")
    window = load_small(qtbot, make_window(measure_command=measure_command({})), dataset)
    answerer = ModalAnswerer(buttons={BUSY_TITLE: answer})
    with watching(window, answerer):
        busy_threshold(qtbot, window, 10)
        click(qtbot, window.speed_only)
        if answer == MEASURE_ANYWAY:
            report = run_to_end(qtbot, window)
        else:
            click(qtbot, window.run_button)
            wait_until(qtbot, lambda: BUSY_TITLE in answerer.titles(), "the question")
            wait_until(qtbot, lambda: not window.comparisons.preflight_pending, "the look")
    assert answerer.titles() == [BUSY_TITLE]
    if answer == "Cancel":
        assert not window.is_running() and window.comparisons.report is None
        assert "Not started" in window.statusBar().currentMessage()
        return
    # The comparison's own look found the machine busy too, and kept it.
    assert report.preflight is not None and report.preflight.busy  # type: ignore[attr-defined]
    assert report.preflight.look.other_share > 0.1  # type: ignore[attr-defined]


def test_the_epochs_something_else_disturbed_are_marked_on_the_wall_time_plot(
        qtbot: QtBot) -> None:
    """Issue 37: a training run's epoch 2 ran beside another program; the column's wall-time
    plot marks it where that epoch ends, and a new run clears the marks."""
    import dataclasses

    from tests.helpers.streams import run_events
    from xlagui.core.protocol.events import EpochEvent
    from xlagui.core.protocol.interference import Interference
    from xlagui.ui.runs.run_column import RunColumn

    column = RunColumn("baseline")
    qtbot.addWidget(column)
    column.reset(epochs=3, xla_mode="off", runs_planned=1, included=True)
    column.begin_run("01-baseline-r1", 1)
    for event in run_events(epoch_seconds=(3.0, 2.0, 1.0)):
        if isinstance(event, EpochEvent):
            busy = event.epoch == 2
            event = dataclasses.replace(event, interference=Interference(
                seconds=event.epoch_seconds, cores=2, other_share=0.45 if busy else 0.01,
                disturbed=busy))
        column.apply_event(event)
    column.redraw()
    x, y = column.disturbed_epochs.getData()
    assert list(x) == [2.0] and list(y) == [5.0]  # epoch 2 ends 5 s in
    column.reset(epochs=3, xla_mode="off", runs_planned=1, included=True)
    assert column.disturbed_epochs.getData()[0] is None or not len(
        column.disturbed_epochs.getData()[0])
