"""Nothing lost on close: closing the window (the question answered "Stop and close"), Ctrl+C
in the terminal and SIGTERM during a training run all stop the workers, save the run in progress
as interrupted with its finished epochs and the runs never started as not run; reopened from
History, the comparison shows those epochs."""

from __future__ import annotations

import gc
import json
import signal
import weakref
from pathlib import Path

import pytest
from PySide6.QtCore import QEvent, QSettings
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import (
    ModalAnswerer,
    click,
    item_at,
    press_keys,
    watching,
)
from tests.ui.conftest import (
    WindowFactory,
    fake_measure_command,
    fake_worker,
    is_closed,
    load_small,
)
from tests.ui.window.test_clicks import reopen_from_history
from xlagui.ui import app as app_module
from xlagui.ui.window.main_window import TAB_RUNS, MainWindow

# The crash handler, not pytest-qt, must see what a slot raises: that is what a user meets.
pytestmark = pytest.mark.qt_no_exception_capture

STOP_QUESTION = "Stop the comparison?"


def close_by(how: str, qtbot: QtBot, window: MainWindow, answerer: ModalAnswerer) -> None:
    """Close `window` as a user would: Quit (Ctrl+Q) and "Stop and close" in the question,
    or a signal to the process, which asks nothing."""
    if how == "window":
        answerer.buttons[STOP_QUESTION] = "Stop and close"
        press_keys(qtbot, window, QKeySequence("Ctrl+Q"))
    else:
        signal.raise_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)


@pytest.mark.parametrize("how", ["window", "sigint", "sigterm"])
def test_closing_during_a_run_keeps_its_epochs(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path, how: str
) -> None:
    # 20 batches an epoch, 30 ms apart: the baseline's 3 epochs take about 2 s.
    window = load_small(qtbot, make_window(worker=fake_worker(delay=0.03, steps=20)), dataset)
    uninstall = app_module.install_signal_handlers(window)
    answerer = ModalAnswerer()
    column = window.runs_view.columns["baseline"]
    try:
        with watching(window, answerer):
            with qtbot.waitSignal(window.comparison_started, timeout=5_000):
                click(qtbot, window.run_button)
            qtbot.waitUntil(lambda: column.trace is not None and len(column.trace.epochs) >= 1,
                            timeout=30_000)
            with qtbot.waitSignal(window.comparison_finished, timeout=15_000) as blocker:
                close_by(how, qtbot, window, answerer)
            qtbot.waitUntil(lambda: is_closed(window), timeout=5_000)
    finally:
        uninstall()
    assert answerer.titles() == ([STOP_QUESTION] if how == "window" else [])
    assert window.comparisons.supervisor is None  # the workers were stopped and waited for
    report = blocker.args[0]
    assert [r.status for r in report.runs] == ["interrupted", "not run"]

    # What was saved, read as any other program would read it.
    folder = window.comparisons.report_folder
    assert folder is not None
    saved = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in saved["measure_runs"]] == ["finished", "finished"]
    assert [(r["run_id"], r["status"]) for r in saved["runs"]] == [
        ("01-baseline-r1", "interrupted"),
        ("02-xla-r1", "not run"),
    ]
    baseline, xla = saved["runs"]
    kinds = [e["type"] for e in baseline["events"]]
    epochs = [e["epoch"] for e in baseline["events"] if e["type"] == "epoch"]
    assert kinds[0] == "started" and kinds[-1] == "cancelled" and "finished" not in kinds
    assert 1 <= len(epochs) < 3 and epochs == list(range(1, len(epochs) + 1))
    assert xla["events"] == []

    # A fresh window (as after a restart) lists it and shows the interrupted run's epochs.
    other = make_window()
    with watching(other, ModalAnswerer()):
        reopen_from_history(qtbot, other)
    row = item_at(other.history_panel.tree, 0)
    assert row.text(3) == "0 + 1 interrupted"  # When, Comparison, Machine, Runs
    assert other.tabs.currentIndex() == TAB_RUNS
    base, xla_column = other.runs_view.columns["baseline"], other.runs_view.columns["xla"]
    assert base.status_text == "Interrupted"
    said = f"{len(epochs)} epoch; it is" if len(epochs) == 1 else f"{len(epochs)} epochs; they are"
    assert f"xlagui closed after {said} kept" in base.detail.text()
    x, train_loss = base.epoch_train.getData()
    assert list(x) == [float(e) for e in epochs]
    assert list(train_loss) == pytest.approx([1.0 / (e + 1) for e in epochs])  # the fake's
    assert xla_column.status_text == "Not run"
    assert "before this side's training started" in xla_column.detail.text()


def test_a_closed_window_is_freed_with_everything_it_held(
    qtbot: QtBot, settings: QSettings, tmp_path: Path, dataset: Path
) -> None:
    """Long sessions: once closed and no longer referred to, a window is gone, and with it
    its plots (and their menus, top-level widgets of their own). A lambda holding the window,
    held by the device probe task's connection, and every finished background task holding
    itself through its own connections, kept each closed window alive before."""
    window = MainWindow(settings=settings, history_root=tmp_path / "history",
                        probe=lambda: [{"id": "cpu", "name": "CPU", "kind": "CPU"}],
                        worker=fake_worker(), measure_command=fake_measure_command)
    with qtbot.waitSignal(window.devices_ready, timeout=10_000):
        window.show()
    load_small(qtbot, window, dataset)
    gone = weakref.ref(window)
    tops = len(QApplication.topLevelWidgets())
    window.close()
    del window
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    qtbot.waitUntil(lambda: (gc.collect(), gone() is None)[1], timeout=5_000)
    assert len(QApplication.topLevelWidgets()) < tops - 50  # the plots' menus went too
