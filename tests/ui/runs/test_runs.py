"""A comparison driven by the fake worker: live plots, summary, stop, errors, closing.

Driven as a user drives it: the dataset dropped on the window (or chosen in File ▸ Open), the
run started and stopped with the buttons, the window closed with its close button or Quit.
Calling the slots instead skips what the clicks carry (`tests/ui/window/test_clicks.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPoint, QRect, QRectF, Qt
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QMessageBox, QWidget
from pytestqt.exceptions import TimeoutError as WaitTimeout
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import (
    ModalAnswerer,
    choose_combo_item,
    click,
    click_menu_item,
    click_tab,
    close_window,
    press_keys,
    wait_until,
    watching,
)
from tests.helpers.reports import comparison_report
from tests.ui.conftest import WindowFactory, drop, fake_worker, is_closed, url_mime
from tests.ui.window.test_clicks import reopen_from_history
from xlagui.core.measure.runner import RunResult
from xlagui.core.protocol.events import ErrorEvent, Event
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import history
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.widgets import ElidedLabel
from xlagui.ui.window.main_window import TAB_RUNS, MainWindow

STOP_QUESTION = "Stop the comparison?"
DATASET_DIALOG = "Choose a dataset folder"


def drop_dataset(qtbot: QtBot, window: MainWindow, folder: Path) -> None:
    """Drop `folder` on the Dataset tab, as from a file manager, and wait for its scan."""
    target = window.dataset_panel
    assert target.isVisible(), "the Dataset tab is not on screen to drop on"
    mime = url_mime(folder)  # kept alive while the events point to it
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        drop(target, mime)


@pytest.fixture
def loaded_window(qtbot: QtBot, window: MainWindow, dataset: Path) -> MainWindow:
    """A window with the tiny dataset dropped on it, settings small enough to run."""
    drop_dataset(qtbot, window, dataset)
    panel = window.settings_panel
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    return window


def start(qtbot: QtBot, window: MainWindow, button: QAbstractButton | None = None) -> None:
    """Click Run comparison (or `button`) and check that a comparison started."""
    button = button or window.run_button
    assert button.isVisible() and button.isEnabled(), (
        f"{button.text()!r} cannot be pressed: {window.cannot_run_reason()!r}")
    try:
        with qtbot.waitSignal(window.comparison_started, timeout=5_000):
            click(qtbot, button)
    except WaitTimeout:
        raise AssertionError(f"a click on {button.text()!r} started no comparison in 5 s "
                             f"(the message bar: {window.message_bar.text()!r})") from None


def run_to_end(qtbot: QtBot, window: MainWindow, button: QAbstractButton | None = None,
               timeout: int = 20_000) -> object:
    """Click Run comparison (or `button`) and wait for the comparison's end; its report."""
    try:
        with qtbot.waitSignal(window.comparison_finished, timeout=timeout) as blocker:
            start(qtbot, window, button)
    except WaitTimeout:
        raise AssertionError(f"the comparison did not end within {timeout / 1000:g} s") from None
    return blocker.args[0]


def xy(item: object) -> tuple[list[float], list[float]]:
    x, y = item.getData()  # type: ignore[attr-defined]
    return ([] if x is None else list(np.round(x, 6)), [] if y is None else list(np.round(y, 6)))


def test_a_comparison_fills_both_columns_and_the_summary(qtbot: QtBot,
                                                         loaded_window: MainWindow) -> None:
    window = loaded_window
    report = run_to_end(qtbot, window)
    assert window.tabs.currentIndex() == TAB_RUNS
    view = window.runs_view
    base, xla = view.columns["baseline"], view.columns["xla"]
    assert base.status_text == "Finished" and xla.status_text == "Finished"
    assert base.progress.value() == 1000
    # Training runs: the plots are shown, the speed-only note is not.
    assert base.loss_plot.isVisible() and base.time_plot.isVisible()
    assert not base.speed_only_note.isVisible()
    # The plots got the streams: 4 batches per epoch, 3 epochs.
    bx, by = xy(base.batch_smooth)
    assert len(bx) == 12 and bx[0] == 0.25 and bx[-1] == 3.0
    assert by[0] == pytest.approx(0.8)  # 1 / (1 + 1/4)
    assert xy(base.epoch_train)[0] == [1.0, 2.0, 3.0]
    assert xy(base.epoch_val)[1] == pytest.approx([0.55, 1.1 / 3, 0.275])
    # Cumulative wall time per epoch, from 0.
    assert xy(base._time_curves[0]) == ([0.0, 1.0, 2.0, 3.0], [0.0, 3.0, 4.0, 5.0])
    assert xy(xla._time_curves[0]) == ([0.0, 1.0, 2.0, 3.0], [0.0, 6.0, 6.5, 7.0])
    # The overlay has both sides.
    overlay = view.comparison._curves
    assert xy(overlay[("baseline", 0)])[1] == [0.0, 3.0, 4.0, 5.0]
    assert xy(overlay[("xla", 0)])[1] == [0.0, 6.0, 6.5, 7.0]
    # Key figures from the summaries.
    assert base.figures["steady"].text() == "1.00 s"
    assert xla.figures["steady"].text() == "0.50 s"
    assert xla.figures["first"].text() == "6.00 s"
    assert xla.figures["memory"].text() == "500 MB"
    assert "2 HLO modules, 40 fusions" in xla.figures["evidence"].text()
    assert "compiled nothing" in base.figures["evidence"].text()
    # The comparison in words.
    panel = view.comparison
    assert "XLA was 2.00× faster per training step" in panel.verdict.text()
    assert panel.rows["Speed per steady epoch"].text().startswith("2.00× faster")
    # The speed phase ran first: both workers measured, and the plot has its estimate.
    assert [r.status for r in report.measure_runs] == ["finished", "finished"]
    assert base.measure_trace is not None and len(base.measure_trace.blocks) >= 8
    assert len(xy(panel.speed.estimate)[1]) == report.comparison.interleaved.pairs
    assert panel.rows["Speed per steady epoch"].text() == (
        "2.00× faster (no interval: a single measurement)"  # two identical steady epochs
    )
    assert "7.00 s with XLA vs 5.00 s without (40% more)" in \
        panel.rows["Total wall time"].text()
    assert panel.rows["Break-even"].text().startswith("epoch 7")
    # Compile cost comes from the speed phase's first steps (the fake XLA worker adds 1 s).
    compile_text = panel.rows["Compile cost"].text()
    assert compile_text.startswith("+0.7")
    assert compile_text.endswith("over the baseline's first step")
    assert "one seed each" in panel.rows["Accuracy"].text()  # no verdict from one seed a side
    assert window.comparisons.report is report
    assert window.export_action.isEnabled()
    assert window.run_button.isEnabled()  # ready for the next one


def test_a_recorded_real_run_fills_both_columns(qtbot: QtBot, make_window: WindowFactory,
                                                 dataset: object) -> None:
    """What a real worker sent (tests/helpers/recorded/: throttled batch events, real timings
    and summaries), replayed into the window as it arrived."""
    import statistics

    from tests.helpers.streams import recorded_events, recorded_worker
    from xlagui.core.protocol.events import BatchEvent, EpochEvent, FinishedEvent, StartedEvent

    window = make_window(worker=recorded_worker())
    # File ▸ Open dataset…, the folder chosen in its dialog.
    answerer = ModalAnswerer(folders={DATASET_DIALOG: dataset})  # type: ignore[dict-item]
    with watching(window, answerer), \
            qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        assert click_menu_item(qtbot, window, window.open_action)
    assert answerer.titles() == [DATASET_DIALOG]
    window.settings_panel.epochs.setValue(3)
    window.settings_panel.batch_size.setValue(8)
    window.settings_panel.image_size.setValue(48)
    with watching(window, ModalAnswerer()):
        report = run_to_end(qtbot, window)
    assert [r.status for r in report.runs] == ["finished", "finished"]  # type: ignore[attr-defined]
    view = window.runs_view
    steady: dict[str, list[float]] = {}
    for variant, mode in (("baseline", "off"), ("xla", "jit")):
        sent = recorded_events(mode)
        started = next(e for e in sent if isinstance(e, StartedEvent))
        epochs = [e for e in sent if isinstance(e, EpochEvent)]
        summary = next(e for e in sent if isinstance(e, FinishedEvent)).summary
        steady[variant] = [e.epoch_seconds for e in epochs[1:]]
        column = view.columns[variant]
        assert column.status_text == "Finished"
        assert column.progress.value() == 1000
        # Only the batches the worker sent (it throttles them), each at its place in its epoch.
        assert xy(column.batch_smooth)[0] == pytest.approx(
            [e.epoch - 1 + e.step / started.steps_per_epoch
             for e in sent if isinstance(e, BatchEvent)])
        assert xy(column.epoch_train)[0] == [1.0, 2.0, 3.0]
        assert xy(column._time_curves[0])[1] == pytest.approx(
            [0.0, *(e.cumulative_seconds for e in epochs)], abs=1e-5)
        assert column.figures["device"].text() == started.device_name
        ev = summary.xla_evidence
        assert ev is not None
        # The recordings are a real baseline (XLA off) and a real jit run: one compiled nothing,
        # the other its HLO modules, and the column says which.
        assert ev.compiled is (variant == "xla")
        evidence = column.figures["evidence"].text()
        if variant == "xla":
            assert ev.hlo_modules > 0 and ev.fusions > 0
            assert f"{ev.hlo_modules} HLO modules, {ev.fusions} fusions" in evidence
        else:
            assert "compiled nothing" in evidence and "HLO modules" not in evidence
    # The epoch-based speed-up is the ratio of the steady epochs' geometric means; the
    # headline comes from the (fake) interleaved measurement that ran first.
    comparison = report.comparison  # type: ignore[attr-defined]
    assert comparison is not None and comparison.speedup_epochs is not None
    assert comparison.interleaved is not None and comparison.interleaved.pairs >= 8
    assert comparison.speedup_epochs.value == pytest.approx(
        statistics.geometric_mean(steady["baseline"]) / statistics.geometric_mean(steady["xla"]))
    # The headline in the window is the measured one: the fake measuring workers' XLA arm runs
    # its steps in half the baseline's time (tests/helpers/fake_measure_worker.py).
    assert comparison.interleaved.ratio == pytest.approx(0.5)
    assert "XLA was 2.00× faster per training step" in view.comparison.verdict.text()


def test_events_reach_the_plots_on_the_next_redraw_tick(qtbot: QtBot) -> None:
    from tests.helpers.streams import run_events
    from xlagui.core.compare import plan_runs
    from xlagui.core.protocol.config import RunConfig
    from xlagui.core.results.report import ComparisonReport
    from xlagui.ui.runs.runs_view import RunsView

    view = RunsView()
    qtbot.addWidget(view)
    config = RunConfig(epochs=3, batch_size=4, image_size=48)
    report = ComparisonReport(config=config, dataset={"name": "x"}, runs=plan_runs(config))
    view.begin(report)
    view.on_run_started("01-baseline-r1", "baseline", 1)
    events = run_events()
    for event in events[:3]:  # started and two batches
        view.on_event("01-baseline-r1", event)
    column = view.columns["baseline"]
    assert xy(column.batch_smooth) == ([], [])  # appending is all an event costs
    with qtbot.waitSignal(view.redrawn, timeout=1_000):
        pass
    assert xy(column.batch_smooth)[0] == [0.25, 0.5]
    assert column.status_text == "Epoch 1 of 3"


def test_one_side_alone(qtbot: QtBot, loaded_window: MainWindow) -> None:
    window = loaded_window
    with watching(window, ModalAnswerer()):
        choose_combo_item(qtbot, window.one_side_choice, 1)  # the one side: the baseline
        assert window.one_side_choice.currentText() == "baseline"
        assert window.run_one_button.text() == "Run baseline only"
        report = run_to_end(qtbot, window, window.run_one_button)
    assert [r.status for r in report.runs] == ["finished", "queued"]  # type: ignore[attr-defined]
    view = window.runs_view
    assert view.columns["baseline"].status_text == "Finished"
    assert view.columns["xla"].status_text == "Not part of this run"
    assert window.comparisons.worker.specs[-1].variant == "baseline"  # type: ignore[union-attr]
    assert "Not compared" in view.comparison.verdict.text()


def test_stop_ends_the_run_early(qtbot: QtBot, make_window: WindowFactory,
                                   dataset: object) -> None:
    window = make_window(worker=fake_worker(delay=0.05, steps=40))
    drop_dataset(qtbot, window, dataset)  # type: ignore[arg-type]
    window.settings_panel.batch_size.setValue(4)
    column = window.runs_view.columns["baseline"]
    with watching(window, ModalAnswerer()):
        start(qtbot, window)
        wait_until(qtbot, lambda: column.trace is not None and column.trace.steps_done > 2,
                   "the baseline's training ran three steps", timeout=10_000)
        assert window.stop_action.isEnabled() and window.stop_button.isEnabled()
        # How quickly it stops is measured in bench/bench_cancel.py; here: that it stops, early.
        with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as blocker:
            click(qtbot, window.stop_button)
            assert window.stop_button.text() == "Stopping…"
            assert column.status_text == "Stopping…"
    report = blocker.args[0]
    assert [r.status for r in report.runs] == ["cancelled", "cancelled"]
    baseline = report.runs[0]
    kinds = [e.type for e in baseline.events]
    assert kinds[-1] == "cancelled" and "finished" not in kinds  # the run ended on the cancel
    assert kinds.count("epoch") < 3 and kinds.count("batch") < 120  # and long before its end
    assert column.status_text == "Cancelled"
    assert "Stopped" in window.message_bar.text()
    assert len(window.comparisons.worker.specs) == 1  # type: ignore[union-attr]  # XLA never started


def test_one_comparison_at_a_time(qtbot: QtBot, make_window: WindowFactory,
                                  dataset: object) -> None:
    window = make_window(worker=fake_worker(delay=0.02))
    drop_dataset(qtbot, window, dataset)  # type: ignore[arg-type]
    window.settings_panel.batch_size.setValue(4)
    started: list[object] = []
    window.comparison_started.connect(started.append)
    with watching(window, ModalAnswerer()), \
            qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        start(qtbot, window)
        assert not window.run_button.isEnabled()
        # Every way a user starts one, pressed again while it runs: none starts a second.
        qtbot.mouseDClick(window.run_button, Qt.MouseButton.LeftButton)
        click(qtbot, window.run_one_button)
        press_keys(qtbot, window, window.run_action.shortcuts()[0])
        assert not click_menu_item(qtbot, window, window.run_action)
        assert not click_menu_item(qtbot, window, window.run_one_action)
        assert len(started) == 1 and window.is_running()
        # The window's own guard, which nothing a user can press reaches while those are
        # disabled: asked anyway (the sweep tab and any future caller go through it).
        assert not window.start_comparison()
        assert "running" in window.message_bar.text()
    assert len(started) == 1
    assert len(window.comparisons.worker.specs) == 2  # type: ignore[union-attr]  # one comparison


@pytest.mark.parametrize(("variant", "words"), [("xla", "XLA"), ("baseline", "baseline")])
def test_a_failed_run_shows_a_dialog_and_the_app_stays_usable(
        qtbot: QtBot, make_window: WindowFactory, dataset: object,
        monkeypatch: pytest.MonkeyPatch, variant: str, words: str) -> None:
    error = ErrorEvent(t=9.0, error_type="ResourceExhaustedError",
                       message="out of memory while compiling the XLA cluster",
                       hint="Try a smaller batch size or image size.",
                       details="Traceback (most recent call last): ...")
    window = make_window(worker=fake_worker(**{variant: error}))
    shown: list[tuple[str, ...]] = []

    def record(parent: QWidget | None, title: str, message: str, hint: str = "",
               details: str = "") -> None:
        shown.append((title, message, hint, details))

    monkeypatch.setattr(dialogs, "show_error", record)
    drop_dataset(qtbot, window, dataset)  # type: ignore[arg-type]
    window.settings_panel.batch_size.setValue(4)
    answerer = ModalAnswerer()
    with watching(window, answerer):
        report = run_to_end(qtbot, window)
    statuses = {r.variant: r.status for r in report.runs}  # type: ignore[attr-defined]
    assert statuses == {"baseline": "finished", "xla": "finished", variant: "error"}
    # The variant is the one the supervisor started, not a guess.
    assert shown == [(f"The {words} run failed", error.message, error.hint, error.details)]
    column = window.runs_view.columns[variant]
    assert column.status_text == "Failed"
    assert error.message in column.detail.text()
    # Still usable: the next comparison runs, from the same button.
    window.comparisons.worker = fake_worker()
    with watching(window, answerer):
        report = run_to_end(qtbot, window)
    assert [r.status for r in report.runs] == ["finished", "finished"]  # type: ignore[attr-defined]


def test_the_error_dialog_has_details_on_demand(qtbot: QtBot, window: MainWindow) -> None:
    box = dialogs.show_error(window, "The XLA run failed", "out of memory", "Try less.",
                             "Traceback ...")
    qtbot.addWidget(box)
    assert box.text() == "Out of memory."
    assert box.informativeText() == "Try less."
    assert box.detailedText() == "Traceback ..."
    # Open but not blocking: a run in progress goes on behind it.
    assert box.isVisible()
    assert box.windowModality() == Qt.WindowModality.WindowModal
    # The details on demand: a click on Show Details… shows the traceback.
    show = next(b for b in box.buttons()
                if box.buttonRole(b) == QMessageBox.ButtonRole.ActionRole)
    click(qtbot, show)
    shown = [w for w in box.findChildren(QWidget)
             if w.isVisible() and getattr(w, "toPlainText", lambda: "")() == "Traceback ..."]
    assert shown, "Show Details… showed no traceback"
    close = box.button(QMessageBox.StandardButton.Close)
    assert close is not None
    click(qtbot, close)
    wait_until(qtbot, lambda: not box.isVisible(), "the error dialog closed", timeout=2_000)


def test_closing_during_a_run_asks_then_stops_and_waits(
        qtbot: QtBot, make_window: WindowFactory, dataset: object) -> None:
    window = make_window(worker=fake_worker(delay=0.05, steps=40))
    drop_dataset(qtbot, window, dataset)  # type: ignore[arg-type]
    window.settings_panel.batch_size.setValue(4)
    answerer = ModalAnswerer()
    with watching(window, answerer):
        start(qtbot, window)
        # The title bar's ×, the question answered "Keep running".
        answerer.buttons[STOP_QUESTION] = "Keep running"
        assert not close_window(window)
        assert window.isVisible() and window.is_running()
        # File ▸ Quit, the question answered "Stop and close": it stops first, and closes when
        # the run has ended.
        answerer.buttons[STOP_QUESTION] = "Stop and close"
        with qtbot.waitSignal(window.comparison_finished, timeout=5_000) as blocker:
            assert click_menu_item(qtbot, window, window.quit_action)
            assert window.isVisible()
        wait_until(qtbot, lambda: is_closed(window), "the window closed after its run ended",
                   timeout=5_000)
    assert window.comparisons.supervisor is None
    # Closed during the speed measurement (no training run started) or, on a slow machine, in
    # the baseline's first training run (interrupted): never the XLA side's, which had not
    # begun (tests/ui/window/test_closing.py closes during training on purpose).
    first, second = (r.status for r in blocker.args[0].runs)
    assert first in ("not run", "interrupted") and second == "not run", (first, second)
    assert answerer.titles() == ["Stop the comparison?", "Stop the comparison?"]


def _has_data(plot: object) -> bool:
    """Something is drawn: a line of two points or more, or a symbol."""
    items = plot.getPlotItem().listDataItems()  # type: ignore[attr-defined]
    points = [(0 if i.xData is None else len(i.xData), i.opts.get("symbol")) for i in items]
    return any(n >= 2 or (n == 1 and symbol is not None) for n, symbol in points)


def _empty_axes(window: MainWindow) -> list[str]:
    """The plots on screen that have no data: each a set of axes drawn around nothing."""
    view = window.runs_view
    plots = [(f"{variant} {name}", plot) for variant, column in view.columns.items()
             for name, plot in (("loss", column.loss_plot), ("time", column.time_plot))]
    plots += [("speed-up", view.comparison.speed.widget),
              ("wall time since training began", view.comparison.overlay)]
    return [name for name, plot in plots if plot.isVisible() and not _has_data(plot)]


class GatedWorker:
    """The fake worker, holding the baseline's training run just after it started (compiling)
    and again after its second batch (a line's two points), each time until the test lets it
    go on."""

    def __init__(self) -> None:
        self.fake = fake_worker(delay=0.02, steps=40)
        self.held = [threading.Event(), threading.Event()]  # compiling, two batches
        self.go = [threading.Event(), threading.Event()]

    def __call__(self, spec: RunSpec, state: TaskState,
                 on_event: Callable[[Event], None]) -> RunResult:
        batches = 0

        def relay(event: Event) -> None:
            nonlocal batches
            on_event(event)
            batches += event.type == "batch"
            gate = {"started": 0}.get(event.type, 1 if batches == 2 and event.type == "batch"
                                      else None)
            if spec.variant == "baseline" and gate is not None:
                self.held[gate].set()
                while not (self.go[gate].is_set() or state.is_interruption_requested()):
                    self.go[gate].wait(0.01)

        return self.fake(spec, state, relay)


def test_no_plot_draws_axes_before_it_has_data(qtbot: QtBot, make_window: WindowFactory,
                                               dataset: object) -> None:
    """Before any comparison, while the baseline compiles, between its first batches and its
    first epoch, while the other side waits, and after a stop: a plot without data is not
    drawn (its place says what it waits for), in the columns and in the comparison panel;
    until the first epoch ends, the loss plot spans that epoch, not a sliver of all."""
    worker = GatedWorker()
    window = make_window(worker=worker)
    drop_dataset(qtbot, window, dataset)  # type: ignore[arg-type]
    window.settings_panel.batch_size.setValue(4)
    click_tab(qtbot, window.tabs, "Runs")
    view = window.runs_view
    xla, base = view.columns["xla"], view.columns["baseline"]
    assert _empty_axes(window) == []
    # Before any comparison: no columns, no plots, no placeholders (the heading says how).
    assert not xla.isVisible() and not view.comparison.isVisible()
    try:
        with watching(window, ModalAnswerer()):
            start(qtbot, window)
            wait_until(qtbot, worker.held[0].is_set, "the baseline started compiling",
                       timeout=10_000)
            wait_until(qtbot, lambda: base.loss_waiting.isVisible(),
                       "the loss plot's place says it waits", timeout=5_000)
            assert _empty_axes(window) == []
            assert base.time_waiting.isVisible() and not base.waiting_note.isVisible()
            assert view.comparison.speed.widget.isVisible()  # the speed phase has its pairs
            assert view.comparison.overlay_waiting.isVisible()
            worker.go[0].set()
            wait_until(qtbot, worker.held[1].is_set, "the baseline ran two batches",
                       timeout=10_000)  # two batches, no epoch
            wait_until(qtbot, lambda: base.loss_plot.isVisible(),
                       "the loss plot shows its two batches", timeout=5_000)
            assert _empty_axes(window) == []
            assert base.time_waiting.isVisible() and view.comparison.overlay_waiting.isVisible()
            assert base.loss_plot.getPlotItem().viewRange()[0][1] < 1.1
            worker.go[1].set()
            wait_until(qtbot, lambda: base.trace is not None and len(base.trace.epochs) >= 1,
                       "the baseline finished an epoch", timeout=10_000)
            wait_until(qtbot, lambda: base.time_plot.isVisible(),
                       "the time plot shows that epoch", timeout=5_000)
            wait_until(qtbot, lambda: view.comparison.overlay.isVisible(),
                       "the overlay shows that epoch", timeout=5_000)
            assert _empty_axes(window) == []
            wait_until(qtbot, lambda: base.loss_plot.getPlotItem().viewRange()[0][1] > 2.9,
                       "the loss plot spans all three epochs", timeout=5_000)
            # Only the sides with epochs are in the overlay's legend.
            legend = view.comparison.overlay.getPlotItem().legend
            assert [label.text for _sample, label in legend.items] == ["Baseline"]
            assert not xla.loss_plot.isVisible()
            assert xla.waiting_note.text() == "Training starts after the baseline's."
            with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
                click(qtbot, window.stop_button)
    finally:
        for go in worker.go:
            go.set()
    assert _empty_axes(window) == []
    assert xla.waiting_note.isVisible() and "did not start" in xla.waiting_note.text()


def _outside(inner: QRectF, outer: QRectF, what: str) -> list[str]:
    # Half a pixel of slack: rects of text are fractional.
    return [] if outer.adjusted(-0.5, -0.5, 0.5, 0.5).contains(inner) else [
        f"{what} {inner.getCoords()} outside {outer.getCoords()}"]


def _words(item: object) -> QRectF:
    """Where the glyphs of a text item are: its scene rect less its document's margin."""
    text = getattr(item, "textItem", item)
    m = text.document().documentMargin()  # type: ignore[attr-defined]
    return text.sceneBoundingRect().adjusted(m, m, -m, -m)  # type: ignore[attr-defined]


def _cut_off(name: str, widget: pg.PlotWidget, sideways: QWidget | None = None) -> list[str]:
    """What of a plot on screen is cut off: the widget by what holds it (but for `sideways`,
    which scrolls it left and right), its legend or a text item outside its view box, its
    title or axis labels outside the plot."""
    found = []
    child, at = widget, widget.rect()
    parent = widget.parentWidget()
    while parent is not None:  # each one clips what it holds to its own rect
        at = at.translated(child.mapTo(parent, QPoint(0, 0)))
        if parent is sideways:  # what it scrolls out of view left or right is not cut off
            seen = at.intersected(parent.rect())
            at = QRect(seen.left(), at.top(), seen.width(), at.height())
        if not parent.rect().contains(at):
            found.append(f"{name}: {at.getCoords()} outside its {type(parent).__name__} "
                         f"{parent.rect().getCoords()}")
        child, parent = parent, parent.parentWidget()
    item = widget.getPlotItem()
    view = item.getViewBox().sceneBoundingRect()
    whole = item.sceneBoundingRect()
    if item.legend is not None and item.legend.isVisible():
        found += _outside(item.legend.sceneBoundingRect(), view, f"{name} legend")
    for child in item.items:
        texts = [child] if isinstance(child, pg.TextItem) else [
            c for c in child.childItems() if isinstance(c, pg.InfLineLabel)]
        for text in texts:
            # The view clips what is in it: words wholly outside are not shown at all (a
            # break-even past the last epoch), words partly outside are cut off.
            rect = _words(text)
            if text.isVisible() and text.toPlainText() and rect.intersects(view):
                found += _outside(rect, view, f"{name} '{text.toPlainText()}'")
    # The words themselves: a title longer than its plot is wider than the plot's title row.
    labels = [("title", item.titleLabel.item)] + [
        (f"{side} axis label", item.getAxis(side).label) for side in ("left", "bottom")]
    for what, part in labels:
        if part.isVisible() and part.toPlainText():
            found += _outside(_words(part), whole, f"{name} {what}")
    return found


def _covered(speed: object) -> list[str]:
    """The speed-up plot's stop words hidden behind its legend."""
    legend, label = speed.legend, speed.stop_label  # type: ignore[attr-defined]
    if not (legend.isVisible() and label.isVisible() and label.toPlainText()):
        return []
    if legend.sceneBoundingRect().intersects(_words(label)):
        return [f"'{label.toPlainText()}' under the legend"]
    return []


@pytest.mark.parametrize("size", [(1280, 800), (1920, 1080)])
@pytest.mark.parametrize("training", [True, False])
def test_every_plot_is_whole_with_its_legend_and_labels_inside(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path, size: tuple[int, int],
        training: bool) -> None:
    """At a laptop's 1280×800 and at 1920×1080, a reopened comparison with an extra arm (a
    legend on the speed-up plot, the stop marker's words at its right edge): every plot
    shown has data and is seen whole (the columns' plots once ran past the bottom of their
    strip, axes out of sight), and its legend, words and axes stay inside it."""
    report = comparison_report(arms=("bf16",), training=training, rounds=30, jitter=0.05)
    history.save(report, tmp_path / "history" / "saved")  # the window's history folder
    window = make_window()
    window.resize(*size)
    # History (Ctrl+3), its one comparison clicked, then Open: the Runs tab shows it.
    with watching(window, ModalAnswerer()):
        reopen_from_history(qtbot, window)
    assert window.tabs.currentIndex() == TAB_RUNS
    assert window.comparisons.report_folder == tmp_path / "history" / "saved"
    wait_until(qtbot, lambda: window.size().toTuple() == size,
               f"the window took the size {size}", timeout=5_000)
    QApplication.processEvents()
    view = window.runs_view
    assert view.comparison.speed.legend.isVisible()
    assert view.comparison.speed.stop_label.toPlainText() == "budget spent"
    shown = [(f"{variant} {name}", plot) for variant, column in view.columns.items()
             for name, plot in (("loss", column.loss_plot), ("time", column.time_plot))]
    shown += [("speed-up", view.comparison.speed.widget),
              ("wall time since training began", view.comparison.overlay)]
    shown = [(name, plot) for name, plot in shown if plot.isVisible()]
    assert len(shown) == (8 if training else 1)
    assert _empty_axes(window) == []
    # Read as the user sees them, painted: a pyqtgraph TextItem (the stop marker's words) takes
    # its place from its anchor when its view is painted (`TextItem.updateTransform`, on the
    # scene's sigPrepareForPaint), not when the window is laid out.
    for _name, plot in shown:
        plot.grab()
    # The strip scrolls sideways past what fits (three columns at 1280 px), never up and down.
    viewport = view.strip.viewport()
    assert [p for name, plot in shown for p in _cut_off(name, plot, viewport)] == []
    assert _covered(view.comparison.speed) == []
    assert _clipped_labels(window) == []


def _clipped_labels(window: MainWindow) -> list[str]:
    """Labels on screen narrower than their words (a label that wraps or elides is made to
    fit; any other is cut off)."""
    return [f"'{label.text()}' {label.width()} px of {label.sizeHint().width()}"
            for label in window.findChildren(QLabel)
            if label.isVisible() and label.text() and not label.wordWrap()
            and not isinstance(label, ElidedLabel)
            and label.width() + 1 < label.sizeHint().width()]
