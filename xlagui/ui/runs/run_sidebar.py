"""The window's sidebar: the settings (scrollable) above the run buttons (always visible)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QLabel,
    QPushButton,
    QScrollArea,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from xlagui.ui.settings.machine_panel import HostChecker
from xlagui.ui.settings.model_panel import ModelChecker
from xlagui.ui.settings.settings_panel import SettingsPanel


class RunSidebar(QWidget):
    """The settings, Run comparison, Measure speed only, Run one side, Stop and why not.

    Signals:
        run_requested(): Run comparison was pressed.
        run_one_requested(): Run <the side the XLA switch selects> only was pressed.
        stop_requested(): Stop was pressed.
        speed_only_toggled(bool on): Measure speed only was switched.
    """

    run_requested = Signal()
    run_one_requested = Signal()
    stop_requested = Signal()
    speed_only_toggled = Signal(bool)

    def __init__(self, model_checker: ModelChecker | None = None,
                 parent: QWidget | None = None, *, ssh_config: str = "",
                 host_checker: HostChecker | None = None) -> None:
        super().__init__(parent)
        sv = QVBoxLayout(self)
        sv.setContentsMargins(0, 0, 4, 0)
        sv.setSpacing(8)
        self.settings_panel = SettingsPanel(model_checker, ssh_config=ssh_config,
                                            host_checker=host_checker)
        scroll = QScrollArea()
        scroll.setWidget(self.settings_panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        sv.addWidget(scroll, 1)
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
        for w in (self.run_button, self.speed_only, self.run_one_button, self.stop_button,
                  self.run_hint):
            sv.addWidget(w)
        self.setMinimumWidth(300)
        self.setMaximumWidth(460)

    def one_side_text(self) -> str:
        """"Run XLA only" or "Run baseline only", as the XLA switch selects."""
        return f"Run {'XLA' if self.settings_panel.xla.isChecked() else 'baseline'} only"

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

    def _on_stop_button_clicked(self) -> None:
        self.stop_requested.emit()
