"""The window's sidebar: the settings (scrollable) above the run buttons (always visible), and
the choice of the side "Run … only" trains, beside that button."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSettings, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.measure.transports import TransportOptions
from xlagui.core.protocol.identity import Role
from xlagui.ui.settings.machine_panel import HostChecker
from xlagui.ui.settings.model_panel import ModelChecker
from xlagui.ui.settings.settings_panel import SETTINGS_GROUP, SettingsPanel

LEAST_WIDTH = 300  # the sidebar's, whatever the settings' own least width
# The saved one-side choice: the key of the "XLA on" box it replaced, so older files read.
ONE_SIDE_KEY = "xla_on"
# The sides "Run … only" can train, as the choice beside it names them.
SIDES = ((Role.XLA, "XLA"), (Role.BASELINE, "baseline"))


class SettingsScroll(QScrollArea):
    """Scrolls the settings up and down, never sideways: the settings take the viewport's
    width, and the scroll area asks for at least their own least width (so the splitter never
    squeezes them under the scroll bar) and `least` pixels.

    Signals: QScrollArea's."""

    def __init__(self, settings: QWidget, least: int) -> None:
        super().__init__()
        self._least = least
        self.setWidget(settings)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        settings = self.widget()
        if settings is None:
            return hint
        bar = self.verticalScrollBar().sizeHint().width()
        frame = 2 * self.frameWidth()
        width = max(self._least, settings.minimumSizeHint().width() + bar + frame)
        return QSize(width, hint.height())

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # the settings' least width may have changed
        return super().event(event)


class RunSidebar(QWidget):
    """The settings, Run comparison, Measure speed only, the one side to run and its button,
    Stop and why not.

    Signals:
        run_requested(): Run comparison was pressed.
        run_one_requested(): Run <the side chosen beside it> only was pressed.
        one_side_changed(): another side was chosen for "Run … only".
        stop_requested(): Stop was pressed.
        speed_only_toggled(bool on): Measure speed only was switched.
    """

    run_requested = Signal()
    run_one_requested = Signal()
    one_side_changed = Signal()
    stop_requested = Signal()
    speed_only_toggled = Signal(bool)

    def __init__(self, model_checker: ModelChecker | None = None,
                 parent: QWidget | None = None, *, transport_options: TransportOptions = (),
                 host_checker: HostChecker | None = None) -> None:
        super().__init__(parent)
        sv = QVBoxLayout(self)
        sv.setContentsMargins(0, 0, 4, 0)
        sv.setSpacing(8)
        self.settings_panel = SettingsPanel(model_checker, transport_options=transport_options,
                                            host_checker=host_checker)
        self.settings_scroll = SettingsScroll(self.settings_panel, LEAST_WIDTH - 4)
        sv.addWidget(self.settings_scroll, 1)
        icon = self.style().standardIcon
        self.run_button = QPushButton("Run comparison")
        self.run_button.setObjectName("Primary")
        self.run_button.setIcon(icon(QStyle.StandardPixmap.SP_MediaPlay))
        self.run_button.setToolTip("Baseline and XLA, one after the other (Ctrl+R)")
        # Buttons get slots with no parameter `clicked(bool)` could fill: passing it on once
        # reached start_comparison's `only` as False and crashed the main button.
        self.run_button.clicked.connect(self._on_run_button_clicked)
        self.run_one_button = QPushButton("Run XLA only")
        self.run_one_button.clicked.connect(self._on_run_one_button_clicked)
        # Which side that button trains alone, chosen beside it in words that say so: a box
        # "XLA on" in the XLA settings read as "switch XLA on".
        self.one_side_choice = QComboBox()
        self.one_side_choice.setObjectName("one_side")
        for role, words in SIDES:
            self.one_side_choice.addItem(words, role.value)
        self.one_side_choice.setToolTip(
            "The side the button beside it trains alone: with XLA, or the baseline without it.\n"
            "“Run comparison” always trains both.")
        self.one_side_choice.currentIndexChanged.connect(self._on_one_side_choice_changed)
        one_side_label = QLabel("One side:")
        one_side_label.setBuddy(self.one_side_choice)
        one_side_row = QHBoxLayout()
        one_side_row.addWidget(one_side_label)
        one_side_row.addWidget(self.one_side_choice)
        one_side_row.addWidget(self.run_one_button, 1)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setIcon(icon(QStyle.StandardPixmap.SP_MediaStop))
        self.stop_button.setToolTip("Stop the running comparison (Esc)")
        self.stop_button.clicked.connect(self._on_stop_button_clicked)
        self.run_hint = QLabel()
        self.run_hint.setObjectName("Caption")
        self.run_hint.setWordWrap(True)
        self.speed_only = QCheckBox("Measure speed only")
        self.speed_only.setToolTip(
            "Only the interleaved speed measurement (a few minutes), without the training runs "
            "that give total wall time, accuracy and the loss curves"
        )
        self.speed_only.toggled.connect(self.speed_only_toggled)
        sv.addWidget(self.run_button)
        sv.addWidget(self.speed_only)
        sv.addLayout(one_side_row)
        sv.addWidget(self.stop_button)
        sv.addWidget(self.run_hint)
        # No minimum width of its own: its layout's, the settings' own least width (and
        # LEAST_WIDTH), so the splitter never narrows it under them.
        self.setMaximumWidth(460)

    @property
    def one_side(self) -> Role:
        """The side "Run … only" trains, as chosen beside it."""
        return Role(self.one_side_choice.currentData())

    def choose_one_side(self, role: Role) -> None:
        self.one_side_choice.setCurrentIndex(self.one_side_choice.findData(role.value))

    def one_side_text(self) -> str:
        """"Run XLA only" or "Run baseline only", as chosen beside the button."""
        return f"Run {self.one_side_choice.currentText()} only"

    def save(self, settings: QSettings) -> None:
        """The one-side choice, where the settings panel's "XLA on" box kept it."""
        settings.setValue(f"{SETTINGS_GROUP}/{ONE_SIDE_KEY}", self.one_side is Role.XLA)

    def restore(self, settings: QSettings) -> None:
        saved = str(settings.value(f"{SETTINGS_GROUP}/{ONE_SIDE_KEY}", "true")).lower()
        self.choose_one_side(Role.BASELINE if saved == "false" else Role.XLA)

    def show_state(self, reason: str, running: bool, stopping: bool) -> None:
        """Enable what can be pressed: running is possible when there is no `reason` not to."""
        can_run = not reason
        self.run_button.setEnabled(can_run)
        self.run_one_button.setEnabled(can_run)
        self.run_one_button.setText(self.one_side_text())
        self.stop_button.setEnabled(running and not stopping)
        self.stop_button.setText("Stopping…" if stopping else "Stop")
        self.run_hint.setText(reason if not running else
                              ("Stopping…" if stopping else "Running — Esc stops it."))

    def _on_run_button_clicked(self) -> None:
        self.run_requested.emit()

    def _on_run_one_button_clicked(self) -> None:
        self.run_one_requested.emit()

    def _on_one_side_choice_changed(self, _index: int) -> None:
        self.run_one_button.setText(self.one_side_text())
        self.one_side_changed.emit()

    def _on_stop_button_clicked(self) -> None:
        self.stop_requested.emit()
