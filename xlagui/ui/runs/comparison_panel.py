"""Below the run columns: the speed measurement converging (every arm), the runs' cumulative
wall time, and the comparison in words: the answer on XLA first, then the arms ranked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QBoxLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QWidget,
)

from xlagui.core.analysis.stats import Comparison
from xlagui.present import format as fmt
from xlagui.present import limits, verdicts
from xlagui.present.intervals import interval_method
from xlagui.present.levels import Level
from xlagui.present.machine_load import is_busy, load_lines
from xlagui.present.notes import comparison_notes
from xlagui.present.traces import RunTrace, SpeedupCurve
from xlagui.ui.shared import plots
from xlagui.ui.shared.theme import LEVEL_COLORS, VARIANT_TITLES
from xlagui.ui.shared.widgets import box_layout, transparent_body

WAITING = "The comparison appears here when both sides have finished a run."
WAITING_STYLE = "color: #6b6f76; font-size: 11pt;"
# In a plot's place while there is nothing for it yet.
SPEED_WAITING = "The speed-up appears here as pairs of blocks arrive."
OVERLAY_WAITING = "Each run's wall time appears here after its first epoch."


class ComparisonPanel(QFrame):
    """The running speed-up estimate with its band, the overlay of both sides' cumulative wall
    time per epoch, and the summary.

    Signals: none. `redraw` takes the runs' traces; `show_measurement` and `show_comparison`
    the core's `Comparison` (during the speed phase and at the end); `set_speed_curves` each
    arm's running estimate, which the speed-up plot draws.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Card")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(14)

        self.speed = plots.SpeedupPlot()
        self.speed.widget.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self.speed_waiting = self._placeholder(SPEED_WAITING)
        self._build_overlay()
        self.overlay_waiting = self._placeholder(OVERLAY_WAITING)
        for widget in (self.speed.widget, self.speed_waiting, self.overlay,
                       self.overlay_waiting):
            layout.addWidget(widget, 1)
        layout.addWidget(self._build_summary(), 1)
        self.comparison: Comparison | None = None
        self._phases = (True, True)  # measuring, training: the plots this comparison has
        self._show_plots()

    @staticmethod
    def _placeholder(text: str) -> QLabel:
        """Said in a plot's place while it has nothing to draw: empty axes (with a range
        made up to have one) looked like data."""
        label = QLabel(text)
        label.setObjectName("Caption")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        return label

    def _show_plots(self) -> None:
        """Each plot of this comparison's phases once it has data, its placeholder until
        then."""
        measuring, training = self._phases
        has_speed = self.speed.rounds >= 2  # a line needs two points
        has_times = any(epochs for epochs, _last in self._drawn.values())
        for widget, show in ((self.speed.widget, measuring and has_speed),
                             (self.speed_waiting, measuring and not has_speed),
                             (self.overlay, training and has_times),
                             (self.overlay_waiting, training and not has_times)):
            if widget.isVisibleTo(self) != show:
                widget.setVisible(show)

    def _build_overlay(self) -> None:
        """Every run's wall time since training began, on one plot, with the break-even line."""
        self.overlay = plots.make_plot("Wall time since training began", "epoch", "seconds")
        self.overlay.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
        self._range = plots.StickyYRange(self.overlay)
        plots.legend(self.overlay, corner="top-left")
        self._curves: dict[tuple[str, int], Any] = {}
        self._drawn: dict[tuple[str, int], tuple[int, bool]] = {}
        self._break_even = pg.InfiniteLine(
            angle=90, movable=False,
            pen=pg.mkPen("#6b6f76", width=1, style=Qt.PenStyle.DotLine),
            label="break-even", labelOpts={"position": 0.92, "color": "#6b6f76"},
        )
        self._break_even.setVisible(False)
        self.overlay.getPlotItem().addItem(self._break_even, ignoreBounds=True)

    def _build_summary(self) -> QScrollArea:
        """The summary beside the plots: the verdict, the arms, the figures, the problems and
        notes, and the machine's limits."""
        # The summary scrolls rather than clip when the panel is short.
        scroll = QScrollArea()
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        right = box_layout(transparent_body(scroll, "SummaryBody"), (0, 0, 6, 0), 8)
        heading = QLabel("Comparison")
        heading.setObjectName("ColumnTitle")
        right.addWidget(heading)
        self.verdict = QLabel(WAITING)
        self.verdict.setStyleSheet(WAITING_STYLE)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.verdict)
        # A comparison cut short says so under its verdict (`report.stopped_words`).
        self.stopped = QLabel()
        self.stopped.setWordWrap(True)
        self.stopped.setStyleSheet(f"color: {LEVEL_COLORS[Level.WARNING]}; font-weight: 600;")
        self.stopped.setVisible(False)
        right.addWidget(self.stopped)
        # What else used the machine while timing (`machine_load.load_lines`): a banner, amber
        # and bold when the answer was measured on a busy machine.
        self.machine = QLabel()
        self.machine.setObjectName("MachineBanner")
        self.machine.setWordWrap(True)
        self.machine.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.machine.setVisible(False)
        right.addWidget(self.machine)
        self._build_arms(right)
        right.addLayout(self._build_rows())
        self.problems = QLabel()
        self.problems.setWordWrap(True)
        self.problems.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]};")
        self.problems.setVisible(False)
        right.addWidget(self.problems)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet(f"color: {LEVEL_COLORS[Level.WARNING]};")
        self.notes.setVisible(False)
        right.addWidget(self.notes)
        self._build_limits(right)
        right.addStretch(1)
        return scroll

    def _build_arms(self, right: QBoxLayout) -> None:
        """The arms beyond XLA, ranked, and the recommendation (shown only when there are
        some)."""
        self.arms_box = QWidget()
        self.arms_grid = QGridLayout(self.arms_box)
        self.arms_grid.setContentsMargins(0, 2, 0, 2)
        self.arms_grid.setHorizontalSpacing(10)
        self.arms_grid.setVerticalSpacing(1)
        self.arms_box.setVisible(False)
        right.addWidget(self.arms_box)
        self.recommendation = QLabel()
        self.recommendation.setWordWrap(True)
        self.recommendation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.recommendation.setStyleSheet("color: #202124; font-weight: 600;")
        self.recommendation.setVisible(False)
        right.addWidget(self.recommendation)
        self.arm_rows: list[tuple[str, ...]] = []  # what the arms table shows
        self._speed_curves: dict[str, SpeedupCurve] = {}

    def _build_rows(self) -> QGridLayout:
        """The comparison's figures, one captioned row each (`fmt.COMPARISON_ROW_NAMES`)."""
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        grid.setVerticalSpacing(4)
        self.rows: dict[str, QLabel] = {}
        self._captions: dict[str, QLabel] = {}
        for i, name in enumerate(fmt.COMPARISON_ROW_NAMES):
            cap = QLabel(name)
            cap.setObjectName("Caption")
            cap.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            value = QLabel(fmt.DASH)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            grid.addWidget(cap, i, 0)
            grid.addWidget(value, i, 1)
            self.rows[name] = value
            self._captions[name] = cap
        grid.setColumnStretch(1, 1)
        return grid

    def _build_limits(self, right: QBoxLayout) -> None:
        """How far from the limit: a verdict, a row per arm and run, the roofline."""
        self.limits_heading = QLabel("How far from the limit")
        self.limits_heading.setObjectName("ColumnTitle")
        right.addWidget(self.limits_heading)
        self.limits_verdict = QLabel()
        self.limits_verdict.setWordWrap(True)
        self.limits_verdict.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse)
        right.addWidget(self.limits_verdict)
        self.limits_grid = QGridLayout()
        self.limits_grid.setHorizontalSpacing(14)
        self.limits_grid.setVerticalSpacing(4)
        self.limits_grid.setColumnStretch(1, 1)
        right.addLayout(self.limits_grid)
        self.limit_rows: dict[str, QLabel] = {}
        self.roofline = plots.RooflinePlot()
        self.roofline.widget.setFixedHeight(240)
        right.addWidget(self.roofline.widget)
        right.addWidget(self.roofline.key_label)
        self.roofline_note = QLabel()
        self.roofline_note.setObjectName("Caption")
        self.roofline_note.setWordWrap(True)
        right.addWidget(self.roofline_note)
        self._show_limits(None)

    def _show_limits(self, c: Comparison | None) -> None:
        while self.limits_grid.count():
            item = self.limits_grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.limit_rows = {}
        rows = limits.efficiency_rows(c)
        for i, (name, text) in enumerate(rows):
            cap = QLabel(name)
            cap.setObjectName("Caption")
            cap.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
            value = QLabel(text)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.limits_grid.addWidget(cap, i, 0)
            self.limits_grid.addWidget(value, i, 1)
            self.limit_rows[name] = value
        self.limits_verdict.setText(limits.limit_verdict(c))
        roof = limits.roofline(c)
        self.roofline.show_roofline(roof)
        self.roofline.widget.setVisible(roof is not None)
        self.roofline.key_label.setVisible(roof is not None)
        self.roofline_note.setText(
            "Roofline: " + roof.note + "." if roof is not None else limits.no_roofline_words(c))
        for widget in (self.limits_heading, self.limits_verdict, self.roofline_note):
            widget.setVisible(bool(rows))

    def show_stopped(self, words: str) -> None:
        """What a comparison cut short can still claim ("" for one that ended on its own)."""
        self.stopped.setText(words)
        self.stopped.setVisible(bool(words))

    def set_epochs(self, epochs: int) -> None:
        """The planned epochs: a fixed x range, so the axis does not move as they go by."""
        if epochs > 0:
            self.overlay.getPlotItem().setXRange(0, epochs, padding=0.02)

    def set_phases(self, *, measuring: bool, training: bool) -> None:
        """Show the plots of the phases this comparison has (each once it has data)."""
        self._phases = (measuring, training)
        self._show_plots()

    def set_speed_curves(self, curves: Mapping[str, SpeedupCurve]) -> None:
        """Each arm's running estimate (from `xlagui.present.traces.SpeedupTraces`); drawn with
        the next measurement or comparison shown."""
        self._speed_curves = dict(curves)

    def show_measurement(self, c: Comparison | None) -> None:
        """The speed phase so far: the converging estimates, and the rows they fill."""
        self.speed.show_summary(c.interleaved if c is not None else None, self._speed_curves)
        self._show_plots()
        if c is not None and c.interleaved is not None:
            self._fill_rows(c)

    def clear(self) -> None:
        self.show_stopped("")
        self._speed_curves = {}
        self.speed.show_summary(None)
        for curve in self._curves.values():
            self.overlay.getPlotItem().removeItem(curve)
        self._curves = {}
        self._drawn = {}
        self._range.reset()
        self._break_even.setVisible(False)
        self.show_comparison(None)
        self._show_plots()

    def redraw(self, traces: dict[str, list[RunTrace]]) -> None:
        """Feed the overlay the runs' cumulative times; curves whose run gained no epoch since
        the last call, and whose style did not change, are left alone."""
        changed = False
        for variant, runs in traces.items():
            last = len(runs) - 1
            for i, trace in enumerate(runs):
                key = (variant, i)
                curve = self._curves.get(key)
                if curve is None and not trace.epochs:
                    continue  # nothing to draw yet: no curve, and no name in the legend
                if curve is None:
                    name = VARIANT_TITLES.get(variant, variant) if i == 0 else None
                    curve = plots.line(self.overlay, plots.color(variant), width=2, symbol="o",
                                       name=name)
                    self._curves[key] = curve
                style = (len(trace.epochs), i == last)
                if self._drawn.get(key) == style:
                    continue
                if self._drawn.get(key, (None, None))[1] != (i == last):
                    col = plots.color(variant, 255 if i == last else 110)
                    curve.setPen(pg.mkPen(col, width=2.2 if i == last else 1.2))
                    curve.setSymbolBrush(pg.mkBrush(col))
                self._drawn[key] = style
                plots.set_cumulative(curve, trace)
                changed = True
        runs = [t for variant_runs in traces.values() for t in variant_runs]
        done = bool(runs) and all(t.terminal is not None for t in runs)
        if changed or done:
            if done:
                self._range.reset()  # fit what was measured
            self._range.update(0.0, max((t.expected_total() for t in runs), default=0.0))
        if changed:
            self._show_plots()

    def _show_machine(self, c: Comparison) -> None:
        lines = load_lines(c)
        busy = is_busy(c)
        self.machine.setText("\n".join(lines))
        self.machine.setStyleSheet(
            f"color: {LEVEL_COLORS[Level.WARNING if busy else Level.INFO]};"
            + (" font-weight: 600; border: 1px solid; padding: 4px;" if busy else ""))
        self.machine.setVisible(bool(lines))

    def show_comparison(self, c: Comparison | None) -> None:
        self.comparison = c
        if c is None:
            self.verdict.setText(WAITING)
            self.verdict.setStyleSheet(WAITING_STYLE)
            for name, label in self.rows.items():
                label.setText(fmt.DASH)
                label.setVisible(True)
                self._captions[name].setVisible(True)
            self.problems.setVisible(False)
            self.notes.setVisible(False)
            self.machine.setVisible(False)
            self._break_even.setVisible(False)
            self._show_limits(None)
            self._show_arms(None)
            return
        self.verdict.setText(fmt.question_verdict(c))
        # Red only for a comparison that is not valid; a valid one reads as plain text,
        # whatever it says about XLA.
        colour = "#202124" if c.valid else LEVEL_COLORS[Level.ERROR]
        self.verdict.setStyleSheet(f"color: {colour}; font-size: 10.5pt; font-weight: 600;")
        self._fill_rows(c)
        self._show_limits(c)
        self._show_arms(c)
        self.speed.show_summary(c.interleaved, self._speed_curves)
        self._show_plots()
        shown = fmt.problems_beside_verdict(c)
        self.problems.setText("\n".join(f"• {p}" for p in shown))
        self.problems.setVisible(bool(shown))
        self._show_machine(c)
        self.notes.setText("\n".join(f"Note: {n}" for n in comparison_notes(c)))
        self.notes.setVisible(bool(c.notes))
        if c.break_even_epoch is not None and c.break_even_epoch > 1:
            self._break_even.setValue(c.break_even_epoch)
            self._break_even.setVisible(True)
        else:
            self._break_even.setVisible(False)

    def _fill_rows(self, c: Comparison) -> None:
        rows = dict(fmt.comparison_rows(c))
        for name, label in self.rows.items():
            label.setText(rows.get(name, fmt.DASH))
            label.setVisible(name in rows)
            self._captions[name].setVisible(name in rows)
        speed = interval_method(c, c.speedup) if c.speedup else ""
        self.rows["Speed per training step"].setToolTip(speed)
        epochs = c.speedup_epochs or (c.speedup if c.interleaved is None else None)
        self.rows["Speed per steady epoch"].setToolTip(interval_method(c, epochs) if epochs else "")

    def _show_arms(self, c: Comparison | None) -> None:
        """The ranked arms (`fmt.arm_table`) and the recommendation, when the comparison
        measured arms beyond the XLA side."""
        rows = fmt.arm_table(c) if c is not None and fmt.other_arms(c) else []
        if rows != self.arm_rows:
            self.arm_rows = rows
            while self.arms_grid.count():
                taken = self.arms_grid.takeAt(0)
                widget = taken.widget() if taken is not None else None
                if widget is not None:
                    widget.deleteLater()
            self._fill_arm_grid(rows)
        self.arms_box.setVisible(bool(rows))
        text = (verdicts.recommendation_sentence(c.recommendation)
                if c is not None and rows else "")
        self.recommendation.setText(text)
        self.recommendation.setVisible(bool(text))

    def _fill_arm_grid(self, rows: list[tuple[str, ...]]) -> None:
        # Rank, arm and speed on a line; whether it engaged, its accuracy and the hardware note
        # below in small print: six columns do not fit the summary's width.
        heads = fmt.ARM_COLUMNS[:3]
        for col, text in enumerate(heads):
            head = QLabel(text)
            head.setObjectName("Caption")
            self.arms_grid.addWidget(head, 0, col)
        for i, row in enumerate(rows):
            rank, arm, speed, engaged, accuracy, note = row
            r = 1 + 2 * i
            cells = [QLabel(rank), QLabel(arm), QLabel(speed)]
            for col, cell in enumerate(cells):
                cell.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                if col == 2:
                    cell.setWordWrap(True)
                self.arms_grid.addWidget(cell, r, col, Qt.AlignmentFlag.AlignTop)
            bad = engaged != "yes" or accuracy.startswith("WORSE")
            if bad:
                for cell in cells:
                    cell.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]};")
            detail = " · ".join(
                p for p in (f"engaged: {engaged}", f"accuracy: {accuracy}", note) if p
            )
            small = QLabel(detail)
            small.setObjectName("Caption")
            small.setWordWrap(True)
            small.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.arms_grid.addWidget(small, r + 1, 1, 1, 2)
        self.arms_grid.setColumnStretch(2, 1)
