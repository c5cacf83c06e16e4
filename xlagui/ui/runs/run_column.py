"""One side of a comparison on screen (Baseline, XLA, or another arm such as bf16): its runs'
traces, and what the column's widgets (`column_frame.py`) show of them: status, progress, plots,
figures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtWidgets import QWidget

from xlagui.core.analysis.summary import run_compile_seconds
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import Event, FinishedEvent
from xlagui.core.protocol.identity import EventType, Role, RunStatus, role_of
from xlagui.present import format as fmt
from xlagui.present import run_status as words
from xlagui.present.compiles import compile_parts
from xlagui.present.run_status import LIVE_STATES, WAITING_NOTES, ChipState, Waiting
from xlagui.present.traces import RunTrace
from xlagui.ui.runs.column_frame import ColumnFrame
from xlagui.ui.shared import plots


class RunColumn(ColumnFrame):
    """The live view of one side (Baseline, XLA or another arm) of a comparison.

    Signals: none. The runs view feeds it events with `apply_event` (cheap: appends to the
    run's trace) and calls `redraw` at a bounded rate; only then do plots and labels change,
    and only those whose data changed. Labels have fixed sizes so that changing text never
    lays out (and repaints) the plots again.
    """

    def __init__(self, variant: str, parent: QWidget | None = None) -> None:
        super().__init__(variant, parent)  # builds the widgets
        # Whether this side compiles with XLA (the XLA side, or an arm such as jit+bf16).
        role = role_of(variant)
        self.uses_xla = role is Role.XLA or (
            role is Role.ARM and parse_arm(variant).xla is not XlaMode.OFF
        )
        self.traces: list[RunTrace] = []  # the training runs, oldest first
        self.measure_trace: RunTrace | None = None  # the speed phase's worker, if any
        self._current: RunTrace | None = None  # the trace events go to
        self.epochs_planned = 0
        self.runs_planned = 0
        # Why none of this side's training runs started, once known.
        self._unstarted: RunStatus | None = None
        self._dirty = False
        self._loss_dirty = False
        self._time_dirty = False
        self._time_curves: list[Any] = []
        self._styled_traces = 0
        self._loss_span = 0  # the epochs the loss plot spans
        # The epochs something else disturbed (issue 37): crosses on the wall-time curve.
        self.disturbed_epochs = pg.PlotDataItem(
            [], [], pen=None, symbol="x", symbolSize=11,
            symbolPen=pg.mkPen(plots.DISTURBED_COLOR, width=2))
        self.time_plot.getPlotItem().addItem(self.disturbed_epochs)
        self.reset(epochs=0, xla_mode=XlaMode.OFF, runs_planned=0, included=True)

    # -- what the runs view calls -----------------------------------------------------------

    def reset(self, *, epochs: int, xla_mode: str, runs_planned: int, included: bool,
              sides: int = 2) -> None:
        """Forget every run and wait for new ones (`included`: this side will run at all;
        `sides`: how many sides the comparison has)."""
        self.traces = []
        self.measure_trace = self._current = None
        self._unstarted = None
        self.epochs_planned = epochs
        self.runs_planned = runs_planned
        self.others = "side" if sides <= 2 else "sides"
        self.subtitle.setText(fmt.mode_words(self.variant, xla_mode))
        for curve in (self.batch_smooth, self.epoch_train, self.epoch_val):
            curve.setData([], [])
        for curve in self._time_curves:
            self.time_plot.getPlotItem().removeItem(curve)
        self._time_curves = []
        self.disturbed_epochs.setData([], [])
        self._styled_traces = 0
        self._loss_drawn = self._time_drawn = False  # what the plots show has any points
        self._loss_range.reset()
        self._time_range.reset()
        for label in self.figures.values():
            label.setText(fmt.DASH)
            label.setToolTip("")
        self.detail.setToolTip("")
        self.progress.setValue(0)
        self.eta.setText("")
        self._loss_span = epochs
        if epochs > 0:
            # A fixed x range: the axis is not laid out again as the epochs go by.
            for w in (self.loss_plot, self.time_plot):
                w.getPlotItem().setXRange(0, epochs, padding=0.02)
        self.speed_only_note.setVisible(epochs > 0 and included and runs_planned == 0)
        self._show_plots(False, words.waiting_note(epochs=epochs, included=included,
                                                   runs_planned=runs_planned,
                                                   baseline=self.variant == Role.BASELINE))
        self._say(words.planned_words(epochs=epochs, runs_planned=runs_planned,
                                      included=included))
        self._dirty = self._loss_dirty = self._time_dirty = False

    def begin_run(self, run_id: str, repeat: int) -> None:
        self._current = RunTrace(run_id=run_id, repeat=repeat, epochs_planned=self.epochs_planned)
        self.traces.append(self._current)
        self._say(words.starting_words(repeat, self.runs_planned))
        self.progress.setValue(0)
        self._dirty = self._loss_dirty = self._time_dirty = True

    def apply_event(self, event: Event) -> None:
        if self._current is None:
            self.begin_run("", 1)
        current = self._current
        assert current is not None
        current.add(event)
        if current.measuring and current is not self.measure_trace:
            # A measuring worker is not a training run: it has a place of its own.
            self.traces.remove(current)
            self.measure_trace = current
        if not current.measuring and not self._plots_shown:
            self._show_plots(True, "")  # the first training run: now there is something
        self._dirty = True
        kind = event.type
        if kind in (EventType.BATCH, EventType.BLOCK):
            self._loss_dirty = True
        elif kind == EventType.EPOCH:
            self._loss_dirty = self._time_dirty = True

    def mark_stopping(self) -> None:
        if self.state in LIVE_STATES:
            self._say(words.STOPPING)

    def end_run(self, status: RunStatus) -> None:
        """The run ended with `status`, even if no terminal event said so; `INTERRUPTED` shows
        a cancelled run as cut short by the app's closing."""
        current = self._current
        if current is not None:
            current.status = status
            if current.terminal is None:
                self._say(words.ended_words(status))
        self._dirty = self._time_dirty = True

    def end_unstarted(self, status: RunStatus) -> None:
        """None of this side's training runs started, and none will: the app closed first
        (`not run`) or Stop was pressed (`cancelled`)."""
        self._unstarted = status
        self._dirty = True
        if not self.traces and self.waiting_note.isVisibleTo(self):
            self._show_plots(False, WAITING_NOTES[Waiting.UNSTARTED])

    @property
    def trace(self) -> RunTrace | None:
        """The latest training run."""
        return self.traces[-1] if self.traces else None

    @property
    def shown(self) -> RunTrace | None:
        """What the column shows: the latest training run, else the speed phase."""
        return self.traces[-1] if self.traces else self.measure_trace

    @property
    def status_text(self) -> str:
        return self._status_text

    # -- drawing --------------------------------------------------------------------------

    def redraw(self, plots_too: bool = True) -> bool:
        """Bring labels (and, with `plots_too`, plots) up to date if anything changed since
        the last call; say whether something did."""
        changed = self.redraw_labels()
        if plots_too:
            for _name, draw in self.plot_jobs():
                draw()
                changed = True
        return changed

    def redraw_labels(self) -> bool:
        """Status, progress and figures: cheap, small repaints."""
        if not self._dirty:
            return False
        self._dirty = False
        trace = self.shown
        if trace is not None:
            self._update_status(trace)
            self._update_figures()
        # A measured speed that ended well stays in the figures; the chip says the training
        # never started (a measurement cut short says so itself).
        if self._unstarted is not None and not self.traces and (
            trace is None or isinstance(trace.terminal, FinishedEvent)
        ):
            self._say(words.unstarted_words(self._unstarted, measured=trace is not None))
            return True
        return trace is not None

    def plot_jobs(self) -> list[tuple[str, Callable[[], None]]]:
        """The plots whose data changed, each with what redraws it. A plot repaint is the
        costly part of a redraw; the runs view spreads these over its ticks."""
        jobs: list[tuple[str, Callable[[], None]]] = []
        if self.shown is None:
            return jobs
        if self._loss_dirty:
            jobs.append(("loss", self._draw_loss))
        if self._time_dirty:
            jobs.append(("time", self._draw_time))
        return jobs

    def _draw_loss(self) -> None:
        trace = self.shown
        self._loss_dirty = False
        if trace is None:
            return
        plots.set_xy(self.batch_smooth, trace.batch_x, trace.batch_smooth)
        plots.set_xy(self.epoch_train, trace.epoch_x, trace.train_loss)
        plots.set_xy(self.epoch_val, trace.epoch_x, trace.val_loss)
        # A line needs two points; and the first epoch's batches would be a sliver at the left
        # of all the epochs planned, so until it ends the plot spans that epoch alone.
        self._loss_drawn = len(trace.batch_x) >= 2 or bool(trace.epoch_x)
        span = self.epochs_planned if trace.epoch_x or trace.measuring else 1
        if span > 0 and span != self._loss_span:
            self._loss_span = span
            self.loss_plot.getPlotItem().setXRange(0, span, padding=0.02)
        series = (trace.batch_loss, trace.train_loss, trace.val_loss)
        self._loss_range.update(plots.finite_min(*series), plots.finite_max(*series))
        self._show_plot_data()  # once drawn: never an empty plot, even for a moment

    def _draw_time(self) -> None:
        self._time_dirty = False
        if self.traces:
            self._draw_time_curves()
        self._show_plot_data()

    def _draw_time_curves(self) -> None:
        while len(self._time_curves) < len(self.traces):
            self._time_curves.append(plots.line(self.time_plot, plots.color(self.variant),
                                                width=2, symbol="o"))
        if self._styled_traces != len(self.traces):
            # Earlier repeats fade; restyled only when a run is added.
            self._styled_traces = len(self.traces)
            last = len(self.traces) - 1
            for i, curve in enumerate(self._time_curves):
                col = plots.color(self.variant, 255 if i == last else 90)
                curve.setPen(pg.mkPen(col, width=2 if i == last else 1.2))
                curve.setSymbolBrush(pg.mkBrush(col))
        plots.set_cumulative(self._time_curves[-1], self.traces[-1])
        self.disturbed_epochs.setData(*self.traces[-1].disturbed_points)
        if len(self.traces) > 1:
            plots.set_cumulative(self._time_curves[-2], self.traces[-2])
        self._time_drawn = any(t.epoch_x for t in self.traces)
        if all(t.terminal is not None for t in self.traces):
            # Done: fit what was measured.
            self._time_range.reset()
        self._time_range.update(0.0, max(t.expected_total() for t in self.traces))

    def _update_status(self, trace: RunTrace) -> None:
        if trace.measuring:
            # The speed phase: warm-up, then blocks of steps taken in turns with the others.
            self.eta.setText("")
            self._say(words.measuring_words(trace, uses_xla=self.uses_xla, others=self.others,
                                            stopping=self.state == ChipState.STOPPING))
            return
        self.progress.setValue(round(trace.fraction * 1000))
        if isinstance(trace.terminal, FinishedEvent):
            self.progress.setValue(1000)
        self._say(words.training_words(trace, runs_planned=self.runs_planned,
                                       epochs_planned=self.epochs_planned,
                                       uses_xla=self.uses_xla,
                                       stopping=self.state == ChipState.STOPPING))

    def _update_figures(self) -> None:
        """Every figure from everything this side ran, whatever was drawn before: a live
        column (redrawn as events come) and a reopened one (its events replayed at once) show
        the same. The speed phase's figures first; a training run adds its own, and its
        compile figure only where the speed phase measured none."""
        if self.measure_trace is not None:
            self._update_measured_figures(self.measure_trace)
        trace = self.trace
        if trace is not None:
            self._update_training_figures(trace)

    def _update_training_figures(self, trace: RunTrace) -> None:
        s = trace.summary
        epochs = trace.epochs
        f = self.figures
        if s is not None:
            f["steady"].setText(fmt.seconds(s.steady_epoch_seconds))
            f["first"].setText(fmt.seconds(s.first_epoch_seconds))
            if self.measure_trace is None or self.measure_trace.warmup is None:
                f["compile"].setText(fmt.overhead(s.compile_overhead_seconds))
            mem = fmt.size_bytes(s.peak_rss_bytes)
            if s.peak_device_bytes:
                mem += f" RAM, {fmt.size_bytes(s.peak_device_bytes)} GPU"
            f["memory"].setText(mem)
            f["accuracy"].setText(fmt.percent(s.final_val_accuracy))
            f["evidence"].setText(fmt.evidence(s))
            ev = s.xla_evidence
            if ev is not None and ev.dump_dir:
                f["evidence"].setToolTip(f"{fmt.evidence(s)}\nHLO dump: {ev.dump_dir}")
        elif epochs:
            # Live: the figures so far, labelled as such; the summary replaces them at the end.
            f["steady"].setText(f"last {fmt.seconds(epochs[-1].epoch_seconds)}"
                                if len(epochs) > 1 else fmt.DASH)
            f["first"].setText(fmt.seconds(epochs[0].epoch_seconds))
            f["accuracy"].setText(fmt.percent(epochs[-1].val_accuracy))
        started = trace.started
        if started is not None:
            f["device"].setText(started.device_name or started.device_kind)
            if s is None:
                f["evidence"].setText(
                    ("XLA in effect" if started.xla_in_effect else "XLA off")
                    + " (read back after compiling); compiled modules are counted at the end"
                )

    def _update_measured_figures(self, trace: RunTrace) -> None:
        f = self.figures
        f["step"].setText(fmt.seconds(trace.median_step_seconds()))
        w = trace.warmup
        if w is not None:
            # The figure the compile cost subtracts (`run_compile_seconds`), said the same way.
            extra = run_compile_seconds([w, *trace.compiled])
            f["compile"].setText("not measurable" if extra is None else fmt.seconds(extra))
            f["compile"].setToolTip(compile_parts(w, trace.compiled))
        s = trace.summary
        if s is not None and s.peak_rss_bytes:
            f["memory"].setText(fmt.size_bytes(s.peak_rss_bytes))
        if s is not None and s.xla_evidence is not None:
            f["evidence"].setText(fmt.evidence(s))
        if trace.started is not None:
            f["device"].setText(trace.started.device_name or trace.started.device_kind)

