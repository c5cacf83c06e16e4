"""A comparison reopened from its comparison.json shows the figures it showed live (issue 31:
a baseline's steady step went to "—", compile + warm-up from 2.28 s to 0.33 s, an accuracy in
the recommendation from 60.3% to 51.4%)."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, wait_until, watching
from tests.ui.conftest import WindowFactory, fake_worker
from tests.ui.runs.test_runs import drop_dataset, run_to_end, start
from tests.ui.window.test_clicks import reopen_from_history
from xlagui.ui.window.main_window import MainWindow


def shown_figures(window: MainWindow) -> dict[str, str]:
    """Every figure and sentence the Runs tab shows of a comparison: each column's chip,
    detail and figures, the summary's verdict, rows, arms and recommendation."""
    view = window.runs_view
    out: dict[str, str] = {"heading": view.heading.text(), "settings": view.subheading.text()}
    for variant, column in view.columns.items():
        out[f"{variant} chip"] = column.status_text
        out[f"{variant} detail"] = column.detail.text()
        for name, label in column.figures.items():
            out[f"{variant} {name}"] = label.text()
    panel = view.comparison
    out["verdict"] = panel.verdict.text()
    for name, label in panel.rows.items():
        if label.isVisibleTo(panel):
            out[name] = label.text()
    out["arms"] = repr(panel.arm_rows)
    out["recommendation"] = panel.recommendation.text()
    out["problems"] = panel.problems.text()
    out["notes"] = panel.notes.text()
    out["stopped"] = panel.stopped.text() if panel.stopped.isVisibleTo(panel) else ""
    return out


def test_a_reopened_comparison_shows_the_figures_it_showed_live(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    window = make_window()
    drop_dataset(qtbot, window, dataset)
    panel = window.settings_panel
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    with watching(window, ModalAnswerer()):
        run_to_end(qtbot, window)
        live = shown_figures(window)
        reopen_from_history(qtbot, window)
    reopened = shown_figures(window)
    differ = {k: (live[k], reopened.get(k)) for k in live if live[k] != reopened.get(k)}
    assert differ == {}
    assert live["baseline steady"] != "—" and live["baseline compile"] != "—"
    assert live["stopped"] == ""  # it ended on its own


def test_a_stopped_comparison_reopens_as_it_was_shown(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    """Stopped during the baseline's training: the speed phase's figures stay, and the
    reopened tab says what the live one said."""
    # 400 steps of 0.05 s: the first epoch lasts 20 s, so the stop (after 3 steps) lands in it
    # however loaded the machine is.
    window = make_window(worker=fake_worker(delay=0.05, steps=400))
    drop_dataset(qtbot, window, dataset)
    window.settings_panel.batch_size.setValue(4)
    column = window.runs_view.columns["baseline"]
    with watching(window, ModalAnswerer()):
        start(qtbot, window)
        wait_until(qtbot, lambda: column.trace is not None and column.trace.steps_done > 2,
                   "the baseline's training ran three steps", timeout=10_000)
        with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
            click(qtbot, window.stop_button)
        live = shown_figures(window)
        reopen_from_history(qtbot, window)
    reopened = shown_figures(window)
    differ = {k: (live[k], reopened.get(k)) for k in live if live[k] != reopened.get(k)}
    assert differ == {}
    assert live["baseline step"] != "—" and live["xla step"] != "—"
    # It reads as stopped, live and reopened (issue 31: the verdict alone, as if finished).
    planned = 2 * window.settings_panel.epochs.value()
    assert live["stopped"] == (f"Training stopped after 0 of {planned} epochs: the speed "
                               "figures stand, the accuracy verdict is not earned.")


def test_a_speed_only_comparison_says_no_training_is_planned(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    """Issue 31: a speed-only comparison's columns said "50 epochs planned", its note "this
    side ran timed blocks" before any had run, its status bar "each run is saved as it
    finishes"."""
    window = make_window()
    drop_dataset(qtbot, window, dataset)
    window.settings_panel.epochs.setValue(50)
    window.settings_panel.batch_size.setValue(4)
    click(qtbot, window.speed_only)
    assert window.speed_only.isChecked()
    column = window.runs_view.columns["baseline"]
    seen: list[tuple[str, str, str]] = []

    def look(*_args: object) -> None:
        seen.append((column.detail.text(), column.speed_only_note.text(),
                     window.statusBar().currentMessage()))

    window.comparison_started.connect(look)
    with watching(window, ModalAnswerer()):
        run_to_end(qtbot, window)
    detail, note, status = seen[0]
    assert detail == "Speed only: no training planned"
    assert column.speed_only_note.isVisible() and " ran " not in note
    assert "each run is saved" not in status and "speed only" in status
    assert "epochs" not in window.runs_view.subheading.text()
