"""The comparison as one PNG: title, dataset, environment, the arms ranked and a panel per
arm (when there are arms beyond XLA), both runs' plots, the summary.

The figure is a dedicated widget laid out at 1600 px wide, rendered offscreen and grabbed; it
works without a display (the CLI's `compare --png`) and is written atomically.
"""

from __future__ import annotations

import html
import os
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QCoreApplication, QIODevice, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.analysis.pairs import ArmResult
from xlagui.core.analysis.stats import Comparison
from xlagui.core.files.atomic import atomic_write_bytes
from xlagui.core.protocol.identity import Role, RunStatus
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.present import format as fmt
from xlagui.present import limits, verdicts, xla_did
from xlagui.present import report as report_words
from xlagui.present.arm_bars import arm_bars
from xlagui.present.levels import Level
from xlagui.present.machine_load import is_busy, load_lines
from xlagui.present.notes import comparison_notes
from xlagui.present.problems import comparison_problems
from xlagui.present.traces import RunTrace, trace_of
from xlagui.present.why_data import WhyData, why_of
from xlagui.ui.shared import plots
from xlagui.ui.shared.arm_chart import ArmChart
from xlagui.ui.shared.theme import LEVEL_COLORS, VARIANT_TITLES
from xlagui.ui.why.why_figure import WhyFigurePanel

WIDTH = 1600
_app: QApplication | None = None  # an application this module had to create, kept alive

FIGURE_STYLE = """
QWidget#ReportFigure { background: #ffffff; }
QWidget#ReportFigure QLabel { color: #202124; font-size: 15px; background: transparent; }
QWidget#ReportFigure QLabel#Title { font-size: 32px; font-weight: 700; }
QWidget#ReportFigure QLabel#Sub { color: #5f6368; font-size: 16px; }
QWidget#ReportFigure QLabel#Section { font-size: 19px; font-weight: 700; }
QWidget#ReportFigure QLabel#Key { color: #5f6368; font-size: 14px; }
QWidget#ReportFigure QLabel#Mono { font-family: monospace; font-size: 13px; color: #3c4043; }
QFrame#Box { background: #f8f9fa; border: 1px solid #dadce0; border-radius: 8px; }
"""


def ensure_app() -> QApplication:
    """The running QApplication, or a new one (offscreen when there is no display)."""
    global _app
    existing = QCoreApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    if existing is not None:
        raise RuntimeError(
            "rendering the PNG report needs a QApplication, but a "
            f"{type(existing).__name__} is already running"
        )
    headless = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if headless and sys.platform not in ("darwin", "win32"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    _app = QApplication([sys.argv[0] if sys.argv else "xlagui"])
    return _app


def _label(text: str, name: str = "", *, rich: bool = False, wrap: bool = True) -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    if name:
        label.setObjectName(name)
    label.setWordWrap(wrap)
    return label


def _kv(pairs: list[tuple[str, str]]) -> QGridLayout:
    grid = QGridLayout()
    grid.setHorizontalSpacing(14)
    grid.setVerticalSpacing(3)
    for i, (key, value) in enumerate(pairs):
        k = _label(key, "Key", wrap=False)
        k.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop)
        grid.addWidget(k, i, 0)
        grid.addWidget(_label(value), i, 1)
    grid.setColumnStretch(1, 1)
    return grid


def _bullets(title: str, lines: list[str], colour: str) -> QFrame:
    """A titled box of bullet lines in one colour (the problems, the notes)."""
    layout = QVBoxLayout()
    for line in lines:
        lab = _label(f"• {line}")
        lab.setStyleSheet(f"color: {colour};")
        layout.addWidget(lab)
    return _box(title, layout)


def _box(title: str, body: QGridLayout | QVBoxLayout | QHBoxLayout) -> QFrame:
    frame = QFrame()
    frame.setObjectName("Box")
    v = QVBoxLayout(frame)
    v.setContentsMargins(16, 12, 16, 12)
    v.setSpacing(8)
    if title:
        v.addWidget(_label(title, "Section"))
    v.addLayout(body)
    v.addStretch(1)
    return frame


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> QGridLayout:
    grid = QGridLayout()
    grid.setHorizontalSpacing(14)
    grid.setVerticalSpacing(4)
    for col, text in enumerate(header):
        grid.addWidget(_label(text, "Key", wrap=False), 0, col)
    for i, row in enumerate(rows, start=1):
        for col, text in enumerate(row):
            cell = _label(text, wrap=col >= 2)
            if text.startswith(("NOT VALID", "WORSE")):
                cell.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]};")
            grid.addWidget(cell, i, col, Qt.AlignmentFlag.AlignTop)
    for col in range(2, len(header)):
        grid.setColumnStretch(col, 1)
    return grid


class _SidePlots(QFrame):
    """A static copy of a run column's plots, for the report."""

    def __init__(self, variant: str, entries: list[RunEntry], epochs: int, xla_mode: str) -> None:
        super().__init__()
        self.variant = variant
        self.setObjectName("Box")
        v = QVBoxLayout(self)
        v.setContentsMargins(14, 10, 14, 12)
        title = _label(
            f"<span style='color:{plots.color(variant).name()}'>■</span> "
            f"{VARIANT_TITLES.get(variant, variant)} "
            f"<span style='color:#5f6368; font-size:15px; font-weight:400'>"
            f"{html.escape(fmt.mode_words(variant, xla_mode))}</span>", "Section", rich=True)
        v.addWidget(title)
        traces = [trace_of(e.events, epochs, e.run_id, e.repeat) for e in entries if e.events]
        v.addWidget(_label(plots.key_html(plots.loss_key(variant), size="13px"), rich=True))
        row = QHBoxLayout()
        self.loss = plots.make_plot("Training loss", "epoch", "loss", font_pt=10.5,
                                    interactive=False, antialias=True)
        self.time = plots.make_plot("Wall time", "epoch", "seconds (cumulative)", font_pt=10.5,
                                    interactive=False, antialias=True)
        for w in (self.loss, self.time):
            w.setFixedHeight(300)
            row.addWidget(w, 1)
        v.addLayout(row)
        if traces:
            draw_loss(self.loss, variant, traces[-1])
            for i, trace in enumerate(traces):
                alpha = 255 if i == len(traces) - 1 else 90
                curve = plots.line(self.time, plots.color(variant, alpha), width=2, symbol="o")
                plots.set_cumulative(curve, trace)
        last = traces[-1] if traces else None
        figures = fmt.training_figures(last.summary if last else None)
        if last is None:
            figures.insert(0, ("Status", RunStatus.NOT_RUN))
        elif last.summary is None:
            figures.insert(0, ("Status", entries[-1].status))
        v.addLayout(_kv(figures))


ARM_PANELS_PER_ROW = 3


class _ArmPanel(QFrame):
    """One arm beyond the XLA side, the way the sides' panels show the baseline and XLA: its
    speed-up against the baseline with the 95% interval, the pairs, whether it engaged, its
    accuracy verdict, and its training run's figures when it had one."""

    def __init__(self, report: ComparisonReport, arm: ArmResult) -> None:
        super().__init__()
        self.variant = arm.variant
        self.setObjectName("Box")
        v = QVBoxLayout(self)
        v.setContentsMargins(14, 10, 14, 12)
        v.addWidget(_label(
            f"<span style='color:{plots.color(arm.variant).name()}'>■</span> "
            f"{html.escape(arm.arm)} "
            f"<span style='color:#5f6368; font-size:15px; font-weight:400'>"
            f"{html.escape(fmt.arm_label(arm))}</span>", "Section", rich=True))
        self.rows = fmt.arm_figures(report, arm)
        grid = _kv(self.rows)
        for i, (_key, value) in enumerate(self.rows):
            item = grid.itemAtPosition(i, 1)
            cell = item.widget() if item is not None else None
            if cell is not None and value.startswith(("NOT VALID", "WORSE", "failed")):
                cell.setStyleSheet(f"color: {LEVEL_COLORS[Level.ERROR]};")
        v.addLayout(grid)
        v.addStretch(1)

    def texts(self) -> list[str]:
        """Every label's text, title first (what the panel says, for a reader or a test)."""
        return [label.text() for label in self.findChildren(QLabel)]


def draw_loss(widget: Any, variant: str, trace: RunTrace) -> None:
    col = plots.color(variant)
    plots.set_xy(plots.line(widget, col, width=2, name="per batch (smoothed)"), trace.batch_x,
                 trace.batch_smooth)
    plots.set_xy(plots.dots(widget, col.darker(140), name="train (epoch)"), trace.epoch_x,
                 trace.train_loss)
    plots.set_xy(plots.line(widget, plots.color("val"), width=1.5, dashed=True, symbol="s",
                            name="validation"), trace.epoch_x, trace.val_loss)


class ReportFigure(QWidget):
    """The whole report as one widget, WIDTH pixels wide, for grabbing into a PNG.

    Signals: none.
    """

    def __init__(self, report: ComparisonReport, parent: QWidget | None = None,
                 why: WhyData | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("ReportFigure")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(FIGURE_STYLE)
        root = self._root = QVBoxLayout(self)
        # No size constraint: the figure is sized by `render`, and a top-level minimum size
        # makes some platforms (offscreen) complain.
        root.setSizeConstraint(QVBoxLayout.SizeConstraint.SetNoConstraint)
        root.setContentsMargins(36, 28, 36, 28)
        root.setSpacing(16)

        self._add_heading(root, report)
        comp = report.comparison
        self.arm_chart: ArmChart | None = None
        self._add_arms(root, report)
        # A speed-only comparison trained nothing: no empty loss and wall-time panels.
        self.side_plots: list[_SidePlots] = []
        bottom = QHBoxLayout()
        bottom.setSpacing(16)
        if report.runs:
            self._add_training(root, bottom, report)
        summary = _kv(fmt.comparison_rows(comp) if comp is not None else [])
        bottom.addWidget(_box("Summary", summary), 6)
        root.addLayout(bottom)
        self._add_limits(root, comp)
        why = why if why is not None else why_of(report)  # "why": one panel, when there is one
        self.why_panel = None if why.empty else WhyFigurePanel(why)
        if self.why_panel is not None:
            root.addWidget(self.why_panel)
        self._add_footer(root, report)

    def _add_heading(self, root: QVBoxLayout, report: ComparisonReport) -> None:
        """The title, what was compared, the dataset and environment boxes and the verdict."""
        c = report.config
        root.addWidget(_label(report_words.comparison_title(report), "Title"))
        # `--arms jit,bf16` names the XLA side's own arm too: said once, as "XLA (…)".
        others = [a for a in c.arms if a != c.xla.value]
        root.addWidget(_label(
            f"Baseline (XLA off) vs XLA ({fmt.mode_words(Role.XLA, c.xla.value)})"
            + (f" and {', '.join(others)}" if others else "") + " · "
            f"{fmt.created(report.created)} · xlagui {report.app_version}", "Sub"))
        info = QHBoxLayout()
        info.setSpacing(16)
        info.addWidget(_box("Dataset", _kv(report_words.dataset_words(report))), 1)
        info.addWidget(_box("Environment", _kv(report_words.environment_words(report))), 1)
        root.addLayout(info)
        comp = report.comparison
        verdict = fmt.question_verdict(comp) if comp is not None else "Not compared yet."
        colour = "#202124" if comp is not None and comp.valid else LEVEL_COLORS[Level.ERROR]
        v = _label(verdict, "Section")
        v.setStyleSheet(f"color: {colour}; font-size: 21px;")
        root.addWidget(v)
        load = load_lines(comp)
        if load:
            level = Level.WARNING if is_busy(comp) else Level.INFO
            root.addWidget(_bullets("The machine while timing", load, LEVEL_COLORS[level]))

    def _add_arms(self, root: QVBoxLayout, report: ComparisonReport) -> None:
        """The other levers ranked (only when the comparison measured arms beyond XLA), the
        recommendation, and a panel per arm beyond the XLA side, as many to a row as fit."""
        comp = report.comparison
        if comp is not None and fmt.other_arms(comp):
            self.arm_chart = ArmChart(arm_bars(comp))
            arms = QHBoxLayout()
            arms.setSpacing(16)
            chart = QVBoxLayout()
            chart.addWidget(self.arm_chart.widget)
            chart.addWidget(_label("Whiskers: each arm's 95% CI, Bonferroni-adjusted for "
                                   f"{len(fmt.arm_table(comp))} arms, as in the table.",
                                   "Key"))
            arms.addWidget(_box("Every arm against the baseline, fastest first", chart), 5)
            arms.addWidget(_box("Arms", _table(fmt.ARM_COLUMNS, fmt.arm_table(comp))), 6)
            root.addLayout(arms)
            recommendation = verdicts.recommendation_sentence(comp.recommendation)
            if recommendation:
                rec = _label(recommendation, "Section")
                rec.setStyleSheet("color: #202124; font-size: 18px;")
                root.addWidget(rec)
        self.arm_panels = [_ArmPanel(report, a) for a in fmt.extra_arms(comp)]
        for first in range(0, len(self.arm_panels), ARM_PANELS_PER_ROW):
            panels = QHBoxLayout()
            panels.setSpacing(16)
            for panel in self.arm_panels[first:first + ARM_PANELS_PER_ROW]:
                panels.addWidget(panel, 1)
            for _ in range(ARM_PANELS_PER_ROW - len(self.arm_panels[first:])):
                panels.addStretch(1)  # a last, short row keeps the panels' width
            root.addLayout(panels)

    def _add_footer(self, root: QVBoxLayout, report: ComparisonReport) -> None:
        """The runs table, what XLA did, the problems and notes, and the reproduce line."""
        comp = report.comparison
        if report.runs:
            runs = QGridLayout()
            runs.setHorizontalSpacing(18)
            runs.setVerticalSpacing(3)
            header = [name for name, _ in report_words.RUN_COLUMNS]
            for col, text in enumerate(header):
                runs.addWidget(_label(text, "Key", wrap=False), 0, col)
            for i, row in enumerate(report_words.run_rows(report), start=1):
                for col, text in enumerate(row):
                    runs.addWidget(_label(text, wrap=col == len(row) - 1), i, col)
            runs.setColumnStretch(len(header) - 1, 1)
            root.addWidget(_box("Runs", runs))
        did_line = xla_did.report_line(report)
        if did_line:
            root.addWidget(_label(did_line))
        if comp is not None:
            problems = comparison_problems(comp.problems)
            for title, lines, level in (("Problems", problems, Level.ERROR),
                                        ("Notes", comparison_notes(comp), Level.WARNING)):
                if lines:
                    root.addWidget(_bullets(title, lines, LEVEL_COLORS[level]))
        root.addWidget(_label(f"Reproduce: {report.reproduce_command()}", "Mono"))

    def _add_training(self, root: QVBoxLayout, bottom: QHBoxLayout,
                      report: ComparisonReport) -> None:
        """Each side's loss and wall-time plots, and both sides' wall time in one plot."""
        c = report.config
        sides = QHBoxLayout()
        sides.setSpacing(16)
        for variant in (Role.BASELINE, Role.XLA):
            entries = [r for r in report.runs if r.variant == variant]
            side = _SidePlots(variant, entries, c.epochs, c.xla.value)
            self.side_plots.append(side)
            sides.addWidget(side, 1)
        root.addLayout(sides)
        overlay = plots.make_plot("Cumulative wall time, both sides", "epoch",
                                  "seconds since training began", font_pt=10.5,
                                  interactive=False, antialias=True)
        overlay.setFixedHeight(330)
        plots.legend(overlay, font_pt=9.5, corner="top-left")
        for variant in (Role.BASELINE, Role.XLA):
            entries = [r for r in report.runs if r.variant == variant and r.events]
            for i, entry in enumerate(entries):
                trace = trace_of(entry.events, c.epochs)
                curve = plots.line(overlay, plots.color(variant, 255 if i == 0 else 120),
                                   width=2, symbol="o",
                                   name=VARIANT_TITLES[variant] if i == 0 else None)
                plots.set_cumulative(curve, trace)
        frame = QFrame()
        frame.setObjectName("Box")
        fv = QVBoxLayout(frame)
        fv.setContentsMargins(8, 8, 8, 8)
        fv.addWidget(overlay)
        bottom.addWidget(frame, 5)

    def _add_limits(self, root: QVBoxLayout, comp: Comparison | None) -> None:
        """How far from the limit: the roofline (where the data allow it) beside the rows
        and the verdict on the gap."""
        rows = limits.efficiency_rows(comp)
        if not rows:
            return
        line = QHBoxLayout()
        line.setSpacing(16)
        roof = limits.roofline(comp)
        if roof is not None:
            self.roofline = plots.RooflinePlot(font_pt=10.5, interactive=False, antialias=True)
            self.roofline.widget.setFixedHeight(330)
            self.roofline.show_roofline(roof)
            frame = QFrame()
            frame.setObjectName("Box")
            fv = QVBoxLayout(frame)
            fv.setContentsMargins(8, 8, 8, 8)
            fv.addWidget(self.roofline.widget)
            fv.addWidget(self.roofline.key_label)
            fv.addWidget(_label("Roofline: " + roof.note + "."))
            line.addWidget(frame, 5)
        body = QVBoxLayout()
        body.addLayout(_kv(rows))
        body.addWidget(_label(limits.limit_verdict(comp)))
        missing = limits.no_roofline_words(comp)
        if missing:
            body.addWidget(_label(missing))
        line.addWidget(_box("How far from the limit", body), 6)
        root.addLayout(line)

    def render_pixmap(self) -> QPixmap:
        """Lay the figure out offscreen at WIDTH pixels and grab it."""
        self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        layout = self._root
        height = layout.totalHeightForWidth(WIDTH) if layout.hasHeightForWidth() else -1
        self.resize(WIDTH, height if height > 0 else layout.sizeHint().height())
        self.show()
        # Layout requests are posted events; deliver them (and only them, no user input).
        for _ in range(3):
            QCoreApplication.sendPostedEvents()
        pixmap = self.grab()
        self.hide()
        return pixmap


def png_bytes(pixmap: QPixmap) -> bytes:
    array = QByteArray()
    buffer = QBuffer(array)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not pixmap.save(buffer, "PNG"):
        raise OSError("Qt could not encode the report as PNG")
    buffer.close()
    return bytes(array.data())


def render_report_png(report: ComparisonReport, path: Path, why: WhyData | None = None) -> Path:
    """Write `report` (with `why`, by default what it carries) as a PNG figure to `path`
    (atomically) and return `path`."""
    ensure_app()
    figure = ReportFigure(report, why=why)
    try:
        data = png_bytes(figure.render_pixmap())
    finally:
        figure.close()
        del figure  # no parent: Python owns it, and deletes it here
    path = Path(path)
    atomic_write_bytes(path, data)
    return path
