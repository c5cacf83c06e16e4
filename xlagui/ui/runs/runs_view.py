"""The Runs tab: a column per side (Baseline | XLA | each other arm) side by side, scrolling
horizontally past three, and the comparison below them.

Live runs and reopened ones go through the same path: `begin`, then `on_run_started`,
`on_event` and `on_run_done` per run, then `finish`. Events only append to traces; a timer
redraws what changed at most REDRAW_HZ times a second, so a fast stream never floods the GUI.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.analysis.stats import Comparison
from xlagui.core.protocol.arms import CHECK_VARIANT
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.identity import Role, RunStatus
from xlagui.core.results.report import ComparisonReport
from xlagui.present.report import comparison_title, stopped_words
from xlagui.present.traces import SpeedupTraces
from xlagui.ui.runs.comparison_panel import ComparisonPanel
from xlagui.ui.runs.run_column import RunColumn
from xlagui.ui.shared.widgets import box_layout, transparent_body

REDRAW_HZ = 15
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no maximum"
VARIANTS = (Role.BASELINE, Role.XLA)  # always shown; a comparison's other arms follow them
VISIBLE_COLUMNS = 3  # past this many, the columns scroll horizontally
MIN_COLUMN_WIDTH = 320


def variants_of(report: ComparisonReport) -> list[str]:
    """The sides a report's columns show, in order: baseline, XLA, then each other arm as its
    measuring workers and runs name it (older reports have only the first two). The A/A
    check's second baseline has no column: its one figure is a row of the summary."""
    out: list[str] = list(VARIANTS)
    for entry in [*report.measure_runs, *report.runs]:
        if entry.variant not in out and entry.variant != CHECK_VARIANT:
            out.append(entry.variant)
    return out


def config_words(report: ComparisonReport) -> str:
    c = report.config
    left_out = len((report.dataset.get("excluded") or {}).get("files") or [])
    what = (
        f"speed only (≤ {c.budget_seconds} s or ±{c.target_percent:g}%)"
        if c.quick
        else f"{c.epochs} epochs"
    )
    return (
        f"{what} · batch {c.batch_size} · {c.image_size} px · {c.device.upper()} · "
        f"augmentation {'on' if c.augment else 'off'} · seed {c.seed}"
        + (f" · {c.repeats} repeats" if c.repeats > 1 and not c.quick else "")
        + (f" · {left_out:,} file{'s' if left_out != 1 else ''} left out" if left_out else "")
    )


class ColumnStrip(QScrollArea):
    """The run columns side by side. Up to VISIBLE_COLUMNS share the width; past that each
    takes a third of it and the strip scrolls horizontally.

    Signals: none.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # The strip asks for the height its columns need (`sizeHint`); on a short window the
        # splitter may still give it less, and the figures at the bottom scroll into view.
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.row = box_layout(transparent_body(self, "ColumnStrip", fill_height=True),
                              (0, 0, 0, 0), 10, False)
        self.shown: list[RunColumn] = []
        self.compact = False

    def set_compact(self, compact: bool) -> None:
        """`compact`: the columns have no plots to show (a speed-only comparison), so the strip
        is no taller than their heads and figures, and what is below it gets the room."""
        self.compact = compact
        self._fit_height()

    def _fit_height(self) -> None:
        limit = QWIDGETSIZE_MAX
        if self.compact:
            width = max(self.viewport().width(), self.row.minimumSize().width())
            tall = (self.row.totalHeightForWidth(width) if self.row.hasHeightForWidth()
                    else self.row.sizeHint().height())
            limit = max(tall, self.row.minimumSize().height()) + self._bar_height()
        if self.maximumHeight() != limit:
            self.setMaximumHeight(limit)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest and self.compact:
            self._fit_height()  # a column's words changed: its height may have
        return super().event(event)

    def set_columns(self, columns: list[RunColumn]) -> None:
        """Show `columns`, in this order; the others leave the strip (their owner frees
        them)."""
        for column in self.shown:
            self.row.removeWidget(column)
            if column not in columns:
                column.hide()
                column.setParent(None)
        for column in columns:
            self.row.addWidget(column, 1)
            column.show()
        self.shown = list(columns)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        width = MIN_COLUMN_WIDTH
        if len(self.shown) > VISIBLE_COLUMNS:
            room = self.viewport().width() - self.row.spacing() * (VISIBLE_COLUMNS - 1)
            width = max(MIN_COLUMN_WIDTH, room // VISIBLE_COLUMNS)
        for column in self.shown:
            # Never narrower than its words need (a caption in a font wider than ours was cut
            # off): the strip scrolls instead.
            least = max(width, column.minimumSizeHint().width())
            if column.minimumWidth() != least:
                column.setMinimumWidth(least)
        self.updateGeometry()
        self._fit_height()

    def _bar_height(self) -> int:
        scrolls = self.row.minimumSize().width() > self.width()
        return self.horizontalScrollBar().sizeHint().height() if scrolls else 0

    # The splitter gives the strip the height its columns need to show their plots and
    # figures (a scroll area on its own asks for little), with room for the scroll bar.
    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return QSize(hint.width(), self.row.sizeHint().height() + self._bar_height())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(hint.width(), self.row.minimumSize().height() + self._bar_height())


class RunsView(QWidget):
    """Every side of the current (or reopened) comparison: a column per arm.

    Signals:
        redrawn(): the plots were brought up to date (tests and the bench wait on it).
        reuse_requested(object ComparisonReport): "Use these settings" was pressed on a
            reopened comparison.
    """

    redrawn = Signal()
    reuse_requested = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = box_layout(self, (10, 8, 10, 10), 8)

        head = QHBoxLayout()
        self.heading = QLabel("No comparison yet")
        self.heading.setObjectName("Heading")
        self.subheading = QLabel(
            "Load a dataset, check the settings on the left, and press Run comparison."
        )
        self.subheading.setObjectName("SubHeading")
        self.folder_link = QLabel()
        self.folder_link.setObjectName("Caption")
        self.folder_link.linkActivated.connect(self._on_folder_link_activated)
        titles = QVBoxLayout()
        titles.setSpacing(0)
        titles.addWidget(self.heading)
        titles.addWidget(self.subheading)
        head.addLayout(titles, 1)
        self.reuse_button = QPushButton("Use these settings")
        self.reuse_button.setToolTip("Set the settings on the left to this comparison's (model, "
                                     "arms, budget, image size…), to run it again or vary it")
        self.reuse_button.clicked.connect(self._on_reuse_button_clicked)
        self.reuse_button.setVisible(False)
        head.addWidget(self.reuse_button, 0, Qt.AlignmentFlag.AlignBottom)
        head.addWidget(self.folder_link, 0, Qt.AlignmentFlag.AlignBottom)
        layout.addLayout(head)

        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.setChildrenCollapsible(False)
        self.strip = ColumnStrip()
        self._made: dict[str, RunColumn] = {}  # every column built so far, for reuse
        self.columns: dict[str, RunColumn] = {}  # the columns shown, in order
        self._show_columns(list(VARIANTS))
        splitter.addWidget(self.strip)
        self.comparison = ComparisonPanel()
        splitter.addWidget(self.comparison)
        splitter.setStretchFactor(0, 5)
        splitter.setStretchFactor(1, 4)
        layout.addWidget(splitter, 1)
        # Nothing to show before a comparison: no empty column boxes, no empty plots; the
        # heading says how to start one.
        self.body = splitter
        splitter.setVisible(False)
        layout.addStretch(0)

        self.report: ComparisonReport | None = None
        self.folder: Path | None = None
        self._variant_of: dict[str, str] = {}
        self._pending: dict[str, Callable[[], None]] = {}  # plot redraws, oldest first
        self._timer = QTimer(self)
        self._timer.setInterval(1000 // REDRAW_HZ)
        self._timer.timeout.connect(self._on_redraw_timer_timeout)
        self._speed = SpeedupTraces()

    def _show_columns(self, variants: list[str]) -> None:
        if list(self.columns) == variants:
            return
        for v in variants:
            if v not in self._made:
                self._made[v] = RunColumn(v)
        self.columns = {v: self._made[v] for v in variants}
        self.strip.set_columns(list(self.columns.values()))
        # An arm's column no comparison shows any more is freed (its plots hold every point
        # of its last run); the baseline's and XLA's are always shown, and reused.
        for v in [v for v in self._made if v not in self.columns]:
            self._made.pop(v).deleteLater()

    # -- the life of a comparison -----------------------------------------------------------

    def begin(self, report: ComparisonReport, *, only: set[Role] | None = None,
              folder: Path | None = None, live: bool = True) -> None:
        self.report = report
        self.folder = folder
        self.reuse_button.setVisible(not live)
        self._variant_of = {r.run_id: r.variant for r in [*report.measure_runs, *report.runs]}
        self._pending.clear()
        self._speed.clear()
        self._show_columns(variants_of(report))
        self.body.setVisible(True)
        self.strip.set_compact(not report.runs)  # speed only: no column has plots to show
        for variant, column in self.columns.items():
            column.reset(
                epochs=report.config.epochs,
                xla_mode=report.config.xla.value,
                runs_planned=sum(1 for r in report.runs if r.variant == variant),
                included=only is None or variant in only,
                sides=len(self.columns),
            )
        self.comparison.clear()
        self.comparison.verdict.setVisible(True)
        self.comparison.set_epochs(report.config.epochs)
        self.comparison.set_phases(
            measuring=bool(report.measure_runs) and only is None,
            training=bool(report.runs),
        )
        self.heading.setText(comparison_title(report))
        self.subheading.setText(config_words(report))
        self._show_folder(folder)
        if live:
            self._timer.start()

    def on_run_started(self, run_id: str, variant: str, repeat: int) -> None:
        self._variant_of[run_id] = variant
        column = self.columns.get(variant)
        if column is not None:
            column.begin_run(run_id, repeat)

    def on_event(self, run_id: str, event: Event) -> None:
        column = self.columns.get(self._variant_of.get(run_id, ""))
        if column is not None:
            column.apply_event(event)

    def on_run_done(self, run_id: str, status: RunStatus,
                    comparison: Comparison | None) -> None:
        column = self.columns.get(self._variant_of.get(run_id, ""))
        if column is not None:
            column.end_run(status)
        if not self._timer.isActive():
            self._redraw_all(force=True)
        if comparison is not None and (
            comparison.interleaved is not None
            or (comparison.runs_compared.get(Role.BASELINE)
                and comparison.runs_compared.get(Role.XLA))
        ):
            self._show_comparison(comparison)

    def on_measurement(self, comparison: Comparison | None) -> None:
        """A round of the speed measurement ended: the estimates so far, and their bands."""
        self._update_speed_curves()
        self.comparison.show_measurement(comparison)
        # The rows are filled now: the words that the comparison will appear here would say
        # otherwise above them. The verdict's place shows again with the comparison.
        if comparison is not None and comparison.interleaved is not None:
            self.comparison.verdict.setVisible(False)

    def mark_stopping(self) -> None:
        for column in self.columns.values():
            column.mark_stopping()

    def finish(self, report: ComparisonReport) -> None:
        self._timer.stop()
        for variant, column in self.columns.items():
            ended = {r.status for r in report.runs if r.variant == variant}
            unstarted = {RunStatus.NOT_RUN, RunStatus.CANCELLED}
            if ended and ended <= unstarted and not column.traces:
                column.end_unstarted(RunStatus.NOT_RUN if RunStatus.NOT_RUN in ended
                                     else RunStatus.CANCELLED)
        self._redraw_all(force=True)
        self._update_speed_curves()
        self._show_comparison(report.comparison)
        self.comparison.show_stopped(stopped_words(report))

    def show_report(self, report: ComparisonReport, folder: Path | None = None) -> None:
        """Replay a saved comparison into the same columns a live one uses."""
        self.begin(report, folder=folder, live=False)
        for entry in [*report.measure_runs, *report.runs]:
            if not entry.events:
                continue
            self.on_run_started(entry.run_id, entry.variant, entry.repeat)
            for event in entry.events:
                self.on_event(entry.run_id, event)
            column = self.columns.get(entry.variant)
            if column is not None:
                column.end_run(entry.status)
        self.finish(report)

    def _show_comparison(self, comparison: Comparison | None) -> None:
        self.comparison.show_comparison(comparison)
        self.comparison.verdict.setVisible(True)

    def _on_reuse_button_clicked(self) -> None:
        if self.report is not None:
            self.reuse_requested.emit(self.report)

    # -- drawing ----------------------------------------------------------------------------

    def _on_redraw_timer_timeout(self) -> None:
        self._redraw_all()

    def _redraw_all(self, force: bool = False) -> None:
        """Labels of both sides, then plots. Qt paints every plot changed in one pass at
        once, and a plot whose axis moved can take tens of milliseconds to paint on a busy
        machine; so, unless `force`, one plot per tick, the one that has waited longest."""
        changed = any([column.redraw_labels() for column in self.columns.values()])
        for variant, column in self.columns.items():
            for name, draw in column.plot_jobs():
                self._pending.setdefault(f"{variant}:{name}", draw)
                if name == "time":
                    self._pending.setdefault("overlay", self._draw_overlay)
        if force:
            jobs = list(self._pending.values())
            self._pending.clear()
        elif self._pending:
            key = next(iter(self._pending))
            jobs = [self._pending.pop(key)]
        else:
            jobs = []
        for draw in jobs:
            draw()
        if force:
            self._draw_overlay()
        if changed or jobs or force:
            self.redrawn.emit()

    def _update_speed_curves(self) -> None:
        """Each arm's running estimate, from the blocks its measuring worker timed."""
        blocks = {v: c.measure_trace.blocks for v, c in self.columns.items()
                  if c.measure_trace is not None}
        self.comparison.set_speed_curves(self._speed.update(blocks))

    def _draw_overlay(self) -> None:
        self.comparison.redraw({v: c.traces for v, c in self.columns.items()})

    def _show_folder(self, folder: Path | None) -> None:
        if folder is None:
            self.folder_link.setText("")
            return
        url = QUrl.fromLocalFile(str(folder)).toString()
        self.folder_link.setText(f'Saved in <a href="{url}">{folder.name}</a>')
        self.folder_link.setToolTip(str(folder))

    def _on_folder_link_activated(self, link: str) -> None:
        QDesktopServices.openUrl(QUrl(link))
