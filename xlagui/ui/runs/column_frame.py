"""One column's widgets, laid out: the side's colour, title, subtitle and status chip; the
progress bar with its detail line and ETA; the plots' key and notes; the loss and wall-time plots
with their placeholders; the figures. `run_column.RunColumn` fills them from its runs' traces."""

from __future__ import annotations

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

from xlagui.present.run_status import (
    LOSS_WAITING,
    SPEED_ONLY_NOTE,
    TIME_WAITING,
    WAITING_NOTES,
    ChipState,
    StatusWords,
    Waiting,
)
from xlagui.present.units import DASH
from xlagui.ui.shared import plots
from xlagui.ui.shared.theme import VARIANT_TITLES, chip_style
from xlagui.ui.shared.widgets import ElidedLabel

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


class ColumnFrame(QFrame):
    """The widgets of one side's column (Baseline, XLA or another arm), laid out, and how the
    chip, the notes and the plots are shown; what they show is `RunColumn`'s.

    Signals: none.
    """

    def __init__(self, variant: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.variant = variant
        self.setObjectName("Card")
        self.state = ChipState.IDLE
        self._status_text = ""
        self._loss_drawn = self._time_drawn = False  # what the plots show has any points
        self._build()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        # The key wraps in a narrow column: its lines count in the column's minimum height,
        # or the strip (which fits its columns to its height) squeezes the plots onto the
        # figures below them.
        lines = self.key_label.heightForWidth(self.key_label.width())
        if lines > 0 and lines != self.key_label.minimumHeight():
            self.key_label.setMinimumHeight(lines)

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(6)
        layout.addLayout(self._build_head())
        # What the side is, on a line of its own under the title: beside it, between the
        # title and the chip, a third of a 1600 px window cut it ("XLA off (jit_compil…").
        layout.addWidget(self.subtitle)
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
        head.addStretch(1)
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
        self.waiting_note = QLabel(WAITING_NOTES[Waiting.IDLE])
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
        self.figures: dict[str, QLabel] = {}
        for i, (key, caption) in enumerate(FIGURES):
            r, c = divmod(i, 3)
            if key == "evidence":  # a row of its own, below the last full row
                r, c = (len(FIGURES) + 1) // 3, 0
            cap = QLabel(caption)
            cap.setObjectName("Caption")
            # The device and the evidence have a row each and change once a run: they wrap
            # (a narrow column cut "…log: “Compiled cluster usi…"); the live figures elide.
            wide = key in ("evidence", "device")
            value = QLabel(DASH) if wide else ElidedLabel(DASH)
            if wide:
                value.setWordWrap(True)
                value.setTextFormat(Qt.TextFormat.PlainText)
            value.setObjectName("Figure")
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            # ... the whole width: a CPU's name in a third of a column was cut ("Intel(R) Xeon(…").
            span = 3 if wide else 1
            grid.addWidget(cap, r * 2, c, 1, span)
            grid.addWidget(value, r * 2 + 1, c, 1, span)
            if r < 2:
                grid.setRowMinimumHeight(r * 2 + 1, value.sizeHint().height() + 6)
            self.figures[key] = value
        for c in range(3):
            grid.setColumnStretch(c, 1)
        return grid

    # -- showing ----------------------------------------------------------------------------

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

    def _say(self, said: StatusWords | None) -> None:
        """Show what `present.run_status` says of the column's state (None: nothing new)."""
        if said is None:
            return
        self._set_state(said.state, said.chip)
        if said.detail is not None:
            self.detail.setText(said.detail)
        if said.detail_tip is not None:
            self.detail.setToolTip(said.detail_tip)
        if said.eta is not None:
            self.eta.setText(said.eta)

    def _set_state(self, state: ChipState, text: str) -> None:
        if state != self.state:
            self.state = state
            self.chip.setStyleSheet(chip_style(state))  # restyling is costly: on change only
        if text != self._status_text:
            self._status_text = text
            self.chip.setText(text)
