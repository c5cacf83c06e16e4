"""The comparison panel's notes: what did not invalidate the comparison but a reader should know
(an optional export that failed), shown in the window after a comparison the user started."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from tests.helpers.streams import FakeWorker
from tests.ui.conftest import WindowFactory, fake_worker, load_small
from xlagui.core.protocol.events import FinishedEvent
from xlagui.ui.report_png import ReportFigure
from xlagui.ui.window.main_window import MainWindow

NOTE = "TensorBoard files not written: TensorBoard is not installed"


def _noted(worker: FakeWorker) -> FakeWorker:
    """The same streams, each run's summary carrying NOTE (what a worker without TensorBoard
    reports)."""
    streams = {
        variant: [
            dataclasses.replace(e, summary=dataclasses.replace(e.summary, notes=(NOTE,)))
            if isinstance(e, FinishedEvent) and e.summary is not None
            else e
            for e in events
        ]
        for variant, events in worker.streams.items()
    }
    return dataclasses.replace(worker, streams=streams)


def _run(qtbot: QtBot, window: MainWindow) -> None:
    assert window.cannot_run_reason() == ""
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        click(qtbot, window.run_button)


def test_a_failed_export_is_a_note_not_a_failure(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path
) -> None:
    window = load_small(qtbot, make_window(worker=_noted(fake_worker())), dataset)
    _run(qtbot, window)
    panel = window.runs_view.comparison
    assert panel.notes.isVisible()
    assert panel.notes.text() == f"Note: {NOTE} (runs 01-baseline-r1, 02-xla-r1)"
    assert "faster" in panel.verdict.text()  # the comparison itself stands
    assert not panel.problems.isVisible()
    # The PNG report says it too, in its Notes box.
    figure = ReportFigure(window.comparisons.report)
    texts = [lab.text() for lab in figure.findChildren(QLabel)]
    assert "Notes" in texts and f"• {NOTE} (runs 01-baseline-r1, 02-xla-r1)" in texts
    assert "Problems" not in texts
    figure.deleteLater()


def test_no_note_when_every_export_was_written(qtbot: QtBot, loaded_window: MainWindow) -> None:
    window = loaded_window
    _run(qtbot, window)
    panel = window.runs_view.comparison
    assert not panel.notes.isVisible() and panel.notes.text() == ""


def test_check_the_measurement_adds_the_a_a_row(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path
) -> None:
    window = make_window()
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    panel = window.settings_panel
    click(qtbot, panel.advanced_button)  # the Measurement group is under "Advanced"
    assert panel.advanced_button.isChecked()
    before = panel.budget.value()
    click(qtbot, panel.check)
    assert panel.check.isChecked()
    assert panel.budget.value() == before + 60  # the twin is one more arm to measure
    assert "the A/A check's twin" in panel.notes["budget_seconds"].text
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    with qtbot.waitSignal(window.comparison_finished, timeout=30_000) as done:
        click(qtbot, window.run_button)
    report = done.args[0]
    assert report.config.check and report.measure_runs[-1].variant == "check"
    view = window.runs_view
    assert "check" not in view.columns  # its one figure is a row, not a column
    row = view.comparison.rows["Instrument check (A/A)"]
    assert row.isVisible() and row.text().startswith("identical baseline ÷ baseline ")
    e = report.comparison.efficiency
    assert e is None or all(a.variant != "check" for a in e.arms)  # not an arm anywhere
