"""One side of a comparison on screen (Baseline, XLA, or another arm such as bf16), with status,
progress, plots, figures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.analysis.pairs import compile_seconds
from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import CancelledEvent, ErrorEvent, Event, FinishedEvent
from xlagui.core.protocol.record import CANCELLED, INTERRUPTED, NOT_RUN
from xlagui.present import format as fmt
from xlagui.present.errors import error_hint
from xlagui.present.traces import RunTrace
from xlagui.ui import plots
from xlagui.ui.theme import VARIANT_TITLES, chip_style
from xlagui.ui.widgets import ElidedLabel

# Key figures, three to a row; the XLA evidence gets a row of its own.
FIGURES = (
    ("step", "Steady step"),
    ("steady", "Steady epoch"),
    ("first", "First epoch"),
    ("compile", "Compile + warm-up"),
    ("memory", "Peak memory"),
    ("accuracy", "Val. accuracy"),
    ("device", "Device"),
    ("evidence", "XLA evidence"),
)


SPEED_ONLY_NOTE = (
    "Speed only: this side ran timed blocks of steps, no training run, so there are no loss "
    "or wall-time curves. Its blocks are in the speed-up plot below."
)

# What a column shows where its plots will be, until its first training run starts: empty
# axes (which pyqtgraph labels 1e-10 … 5e-10) would say nothing true.
WAITING_NOTES = {
    "idle": "The loss and wall-time curves appear here when a comparison runs.",
    "first": "Training starts after the speed measurement.",
    "after": "Training starts after the baseline's.",
    "not run": "Not part of this run: only the other side was asked for.",
    "unstarted": "This side's training did not start.",
}
# In a plot's place while its run has nothing for it yet (compiling, the first epoch).
LOSS_WAITING = "The loss appears with the first batch."
TIME_WAITING = "The wall time appears after the first epoch."


class RunColumn(QFrame):
    """The live view of one side (Baseline, XLA or another arm) of a comparison.

    Signals: none. The runs view feeds it events with `apply_event` (cheap: appends to the
    run's trace) and calls `redraw` at a bounded rate; only then do plots and labels change,
    and only those whose data changed. Labels have fixed sizes so that changing text never
    lays out (and repaints) the plots again.
    """

    def __init__(self, variant: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.variant = variant
        # Whether this side compiles with XLA (the XLA side, or an arm such as jit+bf16).
        self.uses_xla = variant == "xla" or (
            variant != "baseline" and parse_arm(variant).xla is not XlaMode.OFF
        )
        self.setObjectName("Card")
        self.traces: list[RunTrace] = []  # the training runs, oldest first
        self.measure_trace: RunTrace | None = None  # the speed phase's worker, if any
        self._current: RunTrace | None = None  # the trace events go to
        self.state = "idle"
        self.epochs_planned = 0
        self.runs_planned = 0
        self._status_text = ""
        self._unstarted = ""  # why none of this side's training runs started, once known
        self._dirty = False
        self._loss_dirty = False
        self._time_dirty = False
        self._time_curves: list[Any] = []
        self._styled_traces = 0
        self._loss_drawn = self._time_drawn = False
        self._loss_span = 0  # the epochs the loss plot spans
        self._build()
        self.reset(epochs=0, xla_mode="off", runs_planned=0, included=True)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # The key wraps in a narrow column: its lines count in the column's minimum height,
        # or the strip (which fits its columns to its height) squeezes the plots onto the
        # figures below them.
        lines = self.key_label.heightForWidth(self.key_label.width())
        if lines > 0 and lines != self.key_label.minimumHeight():
            self.key_label.setMinimumHeight(lines)

    # -- construction ----------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        layout.addLayout(self._build_head())
        self._build_progress(layout)
        self._build_notes(layout)
        layout.addLayout(self._build_plots(), 1)
        layout.addLayout(self._build_figures())

    def _build_head(self) -> QHBoxLayout:
        """The side's colour bar, title, subtitle and status chip."""
        head = QHBoxLayout()
        self.title = QLabel(VARIANT_TITLES.get(self.variant, self.variant))
        self.title.setObjectName("ColumnTitle")
        bar = QFrame()
        bar.setFixedSize(4, 22)
        bar.setStyleSheet(f"background: {plots.color(self.variant).name()}; border-radius: 2px;")
        self.subtitle = ElidedLabel()
        self.subtitle.setObjectName("SubHeading")
        self.chip = QLabel()
        self.chip.setObjectName("Chip")
        self.chip.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.chip.setMinimumWidth(self.chip.fontMetrics().horizontalAdvance("Epoch 000 of 000")
                                  + 28)
        head.addWidget(bar)
        head.addWidget(self.title)
        head.addSpacing(6)
        head.addWidget(self.subtitle, 1)
        head.addWidget(self.chip)
        return head

    def _build_progress(self, layout: QVBoxLayout) -> None:
        """The progress bar, and under it the detail line and the ETA."""
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setFixedHeight(10)
        # The side's colour through the palette: a style sheet would make every step of the
        # bar a slow, styled repaint.
        palette = self.progress.palette()
        palette.setColor(QPalette.ColorRole.Highlight, plots.color(self.variant))
        self.progress.setPalette(palette)
        layout.addWidget(self.progress)
        detail = QHBoxLayout()
        self.detail = ElidedLabel()
        self.detail.setObjectName("Caption")
        self.eta = QLabel()
        self.eta.setObjectName("Caption")
        self.eta.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.eta.setMinimumWidth(self.eta.fontMetrics().horizontalAdvance("ETA 00:00:00") + 4)
        detail.addWidget(self.detail, 1)
        detail.addWidget(self.eta)
        layout.addLayout(detail)

    def _build_notes(self, layout: QVBoxLayout) -> None:
        """The plots' key, and the notes shown instead of the plots when there is nothing to
        draw (a speed-only comparison, a column still waiting)."""
        key_label = self.key_label = QLabel(plots.key_html(plots.loss_key(self.variant)))
        key_label.setTextFormat(Qt.TextFormat.RichText)
        key_label.setWordWrap(True)
        key_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(key_label)
        # A speed-only comparison trains nothing: no loss or wall-time curves to draw.
        self.speed_only_note = QLabel(SPEED_ONLY_NOTE)
        self.speed_only_note.setObjectName("Caption")
        self.speed_only_note.setWordWrap(True)
        self.speed_only_note.setSizePolicy(
            QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
        )
        self.speed_only_note.hide()
        layout.addWidget(self.speed_only_note)
        self.waiting_note = QLabel(WAITING_NOTES["idle"])
        self.waiting_note.setObjectName("Placeholder")
        self.waiting_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting_note.setWordWrap(True)
        self.waiting_note.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.waiting_note.setMinimumHeight(120)
        self.waiting_note.hide()
        layout.addWidget(self.waiting_note, 1)

    def _build_plots(self) -> QHBoxLayout:
        """The loss plot (per batch, per epoch, validation) beside the wall-time plot."""
        row = QHBoxLayout()
        row.setSpacing(8)
        col = plots.color(self.variant)
        self.loss_plot = plots.make_plot("Training loss", "epoch", "loss")
        self.batch_smooth = plots.line(self.loss_plot, col, width=2, name="per batch (smoothed)")
        # Thousands of batches on a few hundred pixels: draw at most a couple per pixel.
        self.batch_smooth.setDownsampling(auto=True, method="peak")
        self.batch_smooth.setClipToView(True)
        self.epoch_train = plots.dots(self.loss_plot, col.darker(140), name="train (epoch)")
        self.epoch_val = plots.line(self.loss_plot, plots.color("val"), width=1.5, dashed=True,
                                    symbol="s", name="validation")
        # Short: two plots share a column 320 px wide, and a longer title was cut off.
        self.time_plot = plots.make_plot("Wall time so far", "epoch", "seconds")
        self._loss_range = plots.StickyYRange(self.loss_plot, headroom=0.25)
        self._time_range = plots.StickyYRange(self.time_plot)
        for w in (self.loss_plot, self.time_plot):
            # Lower than other plots: a column of three at 1280×800 with the message bar open
            # made the window taller than the screen.
            w.setMinimumHeight(120)
        self.loss_waiting = self._plot_placeholder(LOSS_WAITING)
        self.time_waiting = self._plot_placeholder(TIME_WAITING)
        for w in (self.loss_plot, self.loss_waiting, self.time_plot, self.time_waiting):
            w.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
            w.setMinimumWidth(140)  # three columns side by side on a laptop screen
            row.addWidget(w, 1)
        self._plots_shown = False
        return row

    def _plot_placeholder(self, text: str) -> QLabel:
        """Said in a plot's place, the size of the plot, while there is nothing to draw: empty
        axes (with a range made up to have one) looked like data."""
        label = QLabel(text)
        label.setObjectName("Caption")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        label.setMinimumHeight(self.loss_plot.minimumHeight())
        label.hide()
        return label

    def _build_figures(self) -> QGridLayout:
        """The run's figures, three to a row, each a caption over its value."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(18)
        grid.setVerticalSpacing(0)
        self.figures: dict[str, ElidedLabel] = {}
        for i, (key, caption) in enumerate(FIGURES):
            r, c = divmod(i, 3)
            if key == "evidence":  # a row of its own, below the last full row
                r, c = (len(FIGURES) + 1) // 3, 0
            cap = QLabel(caption)
            cap.setObjectName("Caption")
            value = ElidedLabel(fmt.DASH)
            value.setObjectName("Figure")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            span = 3 if key == "evidence" else 1
            grid.addWidget(cap, r * 2, c, 1, span)
            grid.addWidget(value, r * 2 + 1, c, 1, span)
            if r < 2:
                grid.setRowMinimumHeight(r * 2 + 1, value.sizeHint().height() + 6)
            self.figures[key] = value
        for c in range(3):
            grid.setColumnStretch(c, 1)
        return grid

    # -- what the runs view calls -----------------------------------------------------------

    def reset(self, *, epochs: int, xla_mode: str, runs_planned: int, included: bool,
              sides: int = 2) -> None:
        """Forget every run and wait for new ones (`included`: this side will run at all;
        `sides`: how many sides the comparison has)."""
        self.traces = []
        self.measure_trace = self._current = None
        self._unstarted = ""
        self.epochs_planned = epochs
        self.runs_planned = runs_planned
        self.others = "side" if sides <= 2 else "sides"
        self.subtitle.setText(fmt.mode_words(self.variant, xla_mode))
        for curve in (self.batch_smooth, self.epoch_train, self.epoch_val):
            curve.setData([], [])
        for curve in self._time_curves:
            self.time_plot.getPlotItem().removeItem(curve)
        self._time_curves = []
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
        speed_only = epochs > 0 and included and runs_planned == 0
        self.speed_only_note.setVisible(speed_only)
        if speed_only:
            self._show_plots(False, "")
        elif epochs == 0:
            self._show_plots(False, WAITING_NOTES["idle"])
        elif not included:
            self._show_plots(False, WAITING_NOTES["not run"])
        else:
            self._show_plots(False, WAITING_NOTES["first" if self.variant == "baseline"
                                                  else "after"])
        if epochs == 0:
            self._set_state("idle", "No run yet")
            self.detail.setText("")
        elif included:
            self._set_state("queued", "Queued")
            self.detail.setText(f"{epochs} epochs planned"
                                + (f", {runs_planned} runs" if runs_planned > 1 else ""))
        else:
            self._set_state("not run", "Not part of this run")
            self.detail.setText("Only the other side was asked for")
        self._dirty = self._loss_dirty = self._time_dirty = False

    def begin_run(self, run_id: str, repeat: int) -> None:
        self._current = RunTrace(run_id=run_id, repeat=repeat, epochs_planned=self.epochs_planned)
        self.traces.append(self._current)
        self._set_state("starting", "Starting…")
        self.detail.setText(self._run_words() + "starting the worker and TensorFlow…")
        self.progress.setValue(0)
        self.eta.setText("")
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
        if kind in ("batch", "block"):
            self._loss_dirty = True
        elif kind == "epoch":
            self._loss_dirty = self._time_dirty = True

    def mark_stopping(self) -> None:
        if self.state in ("starting", "compiling", "running"):
            self._set_state("stopping", "Stopping…")

    def end_run(self, status: str) -> None:
        """The run ended with `status` (`core.report.RUN_STATUSES`), even if no terminal event
        said so; "interrupted" shows a cancelled run as cut short by the app's closing."""
        current = self._current
        if current is not None:
            current.status = status
            if current.terminal is None:
                if status == INTERRUPTED:
                    self._set_state("interrupted", "Interrupted")
                elif status == CANCELLED:
                    self._set_state("cancelled", "Cancelled")
                else:
                    self._set_state("error", "Failed")
        self._dirty = self._time_dirty = True

    def end_unstarted(self, status: str) -> None:
        """None of this side's training runs started, and none will: the app closed first
        (`not run`) or Stop was pressed (`cancelled`)."""
        self._unstarted = status
        self._dirty = True
        if not self.traces and self.waiting_note.isVisibleTo(self):
            self._show_plots(False, WAITING_NOTES["unstarted"])

    def _show_plots(self, show: bool, note: str) -> None:
        """The curves, or in their place `note` (nothing when "": the speed-only note says
        why)."""
        self._plots_shown = show
        self.key_label.setVisible(show)
        self._show_plot_data()
        self.waiting_note.setText(note)
        self.waiting_note.setVisible(not show and bool(note))

    def _show_plot_data(self) -> None:
        """Each plot once its run has something for it, its placeholder until then: the loss
        from the first batch, the wall time from the first epoch."""
        has_loss = self._loss_drawn
        has_time = self._time_drawn
        for plot, waiting, has in ((self.loss_plot, self.loss_waiting, has_loss),
                                   (self.time_plot, self.time_waiting, has_time)):
            if plot.isVisibleTo(self) != (self._plots_shown and has):
                plot.setVisible(self._plots_shown and has)
            if waiting.isVisibleTo(self) != (self._plots_shown and not has):
                waiting.setVisible(self._plots_shown and not has)

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
            self._update_figures(trace)
        # A measured speed that ended well stays in the figures; the chip says the training
        # never started (a measurement cut short says so itself).
        if self._unstarted and not self.traces and (
            trace is None or isinstance(trace.terminal, FinishedEvent)
        ):
            self._show_unstarted(measured=trace is not None)
            return True
        return trace is not None

    def _show_unstarted(self, *, measured: bool) -> None:
        first = "Speed measured; " if measured else ""
        if self._unstarted == NOT_RUN:
            self._set_state("not run", "Not run")
            self.detail.setText(f"{first}xlagui closed before this side's training started"
                                if first else "xlagui closed before this side started")
        else:
            self._set_state("cancelled", "Cancelled")
            self.detail.setText(f"{first}stopped before this side's training started"
                                if first else "Stopped before this side started")
        self.eta.setText("")

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
        if len(self.traces) > 1:
            plots.set_cumulative(self._time_curves[-2], self.traces[-2])
        self._time_drawn = any(t.epoch_x for t in self.traces)
        if all(t.terminal is not None for t in self.traces):
            # Done: fit what was measured.
            self._time_range.reset()
        self._time_range.update(0.0, max(t.expected_total() for t in self.traces))

    def _run_words(self) -> str:
        trace = self.trace
        if self.runs_planned > 1 and trace is not None:
            return f"Run {trace.repeat} of {self.runs_planned} · "
        return ""

    def _update_status(self, trace: RunTrace) -> None:
        if trace.measuring:
            self._update_measuring(trace)
            return
        self.progress.setValue(round(trace.fraction * 1000))
        term = trace.terminal
        if isinstance(term, FinishedEvent):
            total = trace.summary.total_seconds if trace.summary is not None else None
            self._set_state("finished", "Finished")
            self.detail.setText(self._run_words()
                                + f"{len(trace.epochs)} epochs in {fmt.seconds(total)}")
            self.progress.setValue(1000)
            self.eta.setText("")
        elif isinstance(term, CancelledEvent):
            forced = " (the worker was stopped by force)" if term.forced else ""
            if trace.status == INTERRUPTED:
                self._set_state("interrupted", "Interrupted")
                self.detail.setText(self._run_words() + f"xlagui closed after "
                                    f"{len(trace.epochs)} epochs{forced}; they are kept")
            else:
                self._set_state("cancelled", "Cancelled")
                self.detail.setText(self._run_words()
                                    + f"stopped after {term.epochs_done} epochs{forced}")
            self.eta.setText("")
        elif isinstance(term, ErrorEvent):
            self._set_state("error", "Failed")
            self.detail.setText(self._run_words() + term.message)
            self.detail.setToolTip(f"{term.message}\n{error_hint(term)}".strip())
            self.eta.setText("")
        elif self.state == "stopping":
            pass
        elif trace.started is not None and trace.first_batch_t is None:
            self._set_state("compiling", "Compiling…")
            what = "tracing the model" + (" and compiling it with XLA"
                                          if self.uses_xla else "")
            self.detail.setText(self._run_words() + f"{what}; the first batch is on its way")
        elif trace.started is not None:
            epoch = max(trace.current_epoch, 1)
            self._set_state("running", f"Epoch {epoch} of {self.epochs_planned}")
            self.detail.setText(self._run_words()
                                + f"step {trace.steps_done:,} of {trace.total_steps:,}")
            eta = trace.eta_seconds()
            self.eta.setText("" if eta is None else f"ETA {fmt.duration(eta)}")

    def _update_measuring(self, trace: RunTrace) -> None:
        """The speed phase: warm-up, then blocks of steps taken in turns with the other side."""
        self.eta.setText("")
        term = trace.terminal
        step = trace.median_step_seconds()
        per_step = f"{fmt.seconds(step)} per step (median)" if step is not None else ""
        blocks = len(trace.blocks)
        if isinstance(term, FinishedEvent):
            self._set_state("finished", "Speed measured")
            self.detail.setText(f"{blocks} blocks · {per_step}")
        elif isinstance(term, CancelledEvent):
            interrupted = trace.status == INTERRUPTED
            self._set_state("interrupted" if interrupted else "cancelled",
                            "Interrupted" if interrupted else "Stopped")
            forced = " (the worker was stopped by force)" if term.forced else ""
            why = "xlagui closed" if interrupted else "stopped"
            self.detail.setText(f"{why} after {blocks} blocks{forced}; they are kept")
        elif isinstance(term, ErrorEvent):
            self._set_state("error", "Failed")
            self.detail.setText(term.message)
            self.detail.setToolTip(f"{term.message}\n{error_hint(term)}".strip())
        elif self.state == "stopping":
            pass
        elif trace.warmup is None:
            self._set_state("compiling", "Warming up…")
            what = "tracing" + (" and compiling with XLA" if self.uses_xla else "")
            self.detail.setText(f"measuring speed: first step ({what}), then a few steady ones")
        else:
            w = trace.warmup
            self._set_state("running", "Measuring speed")
            first = f"first step {fmt.seconds(w.first_step_seconds)}"
            self.detail.setText(
                f"{blocks} blocks in turns with the other {self.others} · {per_step or first}"
            )

    def _update_figures(self, trace: RunTrace) -> None:
        if trace.measuring:
            self._update_measured_figures(trace)
            return
        s = trace.summary
        epochs = trace.epochs
        f = self.figures
        if s is not None:
            f["steady"].setText(fmt.seconds(s.steady_epoch_seconds))
            f["first"].setText(fmt.seconds(s.first_epoch_seconds))
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
            extra = compile_seconds(w.first_step_seconds, w.warm_step_seconds)
            f["compile"].setText("not measurable" if extra is None else fmt.seconds(extra))
            f["compile"].setToolTip(
                f"First step {fmt.seconds(w.first_step_seconds)} minus the median of "
                f"{len(w.warm_step_seconds)} steady steps; below their spread it is not "
                "measurable"
            )
        s = trace.summary
        if s is not None and s.peak_rss_bytes:
            f["memory"].setText(fmt.size_bytes(s.peak_rss_bytes))
        if s is not None and s.xla_evidence is not None:
            f["evidence"].setText(fmt.evidence(s))
        elif trace.started is not None:
            f["device"].setText(trace.started.device_name or trace.started.device_kind)

    def _set_state(self, state: str, text: str) -> None:
        if state != self.state:
            self.state = state
            self.chip.setStyleSheet(chip_style(state))  # restyling is costly: on change only
        if text != self._status_text:
            self._status_text = text
            self.chip.setText(text)
