"""A sweep as a PNG figure (`sweep.png`): its title, where each arm wins, loses or ties, and the
Sweep tab's own plot (the speed-up along the swept axis with its bands, or the heatmap), drawn
offscreen, so that `xlagui sweep --png` works without a display. Written atomically.

A sweep of more than two swept axes has no plot (the tab says so too): no figure is written and
`render_sweep_png` returns None; its table is in `sweep.md`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from xlagui.core.files.atomic import atomic_write_bytes
from xlagui.core.sweep.result import SweepResult
from xlagui.present.sweep import figure_title, sentences
from xlagui.ui.report_png import ensure_app, png_bytes
from xlagui.ui.sweep.sweep_plot import SweepPlot

SIZE = (1100, 640)


def render_sweep_png(result: SweepResult, path: Path) -> Path | None:
    """Write `result`'s figure to `path` and return it (None: no plot for this many axes)."""
    ensure_app()
    figure = QWidget()
    try:
        layout = QVBoxLayout(figure)
        title = QLabel(figure_title(result))
        title.setStyleSheet("font-weight: bold;")
        title.setWordWrap(True)
        said = QLabel("\n".join(f"• {s}" for s in sentences(result.plan, result.cells)))
        said.setWordWrap(True)
        plot = SweepPlot()
        plot.show_plan(result.plan)
        plot.show_results({c.key: c for c in result.cells})
        if plot.kind != "lines" and plot.kind != "heatmap":
            return None
        for widget in (title, said):
            layout.addWidget(widget)
        layout.addWidget(plot, 1)
        figure.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        figure.resize(*SIZE)
        figure.show()
        # Layout requests are posted events; deliver them (and only them, no user input).
        for _ in range(3):
            QCoreApplication.sendPostedEvents()
        data = png_bytes(figure.grab())
        figure.hide()
    finally:
        figure.close()
        figure.deleteLater()
    atomic_write_bytes(Path(path), data)
    return Path(path)
