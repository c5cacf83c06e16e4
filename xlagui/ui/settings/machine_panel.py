"""The "Machine" group of the settings: where a comparison runs.

This computer, or an SSH host: picked from the hosts of the ssh configuration, or typed as
`user@host`. A host is checked when it is chosen (its transport's preflight,
`xlagui.core.measure.transports.check`, in the background and cancellable, like the model
checks): the group then shows what the host has,
and its device list replaces this computer's in the settings. Both sides of a comparison always
run on the machine chosen here.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from xlagui.core.measure import transports
from xlagui.core.measure.transports import (
    DEFAULT_PYTHON,
    HostInfo,
    MachineError,
    Target,
    TransportOptions,
    suggested_hosts,
)
from xlagui.core.protocol.task import TaskState
from xlagui.present.hosts import error_text, host_rows
from xlagui.present.levels import Level
from xlagui.ui.shared.tasks import TaskOwner
from xlagui.ui.shared.theme import LEVEL_COLORS

# Runs the preflight (`transports.check`).
HostChecker = Callable[[Target, TaskState], HostInfo]
LOCAL = ""  # the picker's data for this computer
OTHER = "\x00other"  # the picker's data for "Other SSH host…"
HOST_KEY, PYTHON_KEY = "machine_host", "machine_python"


def real_checker(target: Target, state: TaskState) -> HostInfo:
    return transports.check(target, state)


class MachinePanel(QGroupBox):
    """This computer or an SSH host, the host's Python, and what the host's preflight found.

    Signals:
        changed(): the machine chosen, or what is known about it, changed (the settings show
            its devices, the window re-checks whether it can run).
    """

    changed = Signal()

    def __init__(self, transport_options: TransportOptions = (), checker: HostChecker | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__("Machine", parent)
        self._transport_options = transport_options
        self._checker = checker or real_checker
        self._info: HostInfo | None = None
        self._error = ""
        self._checked: Target | None = None  # what `_info` / `_error` answer
        self._check = TaskOwner(self)
        self._check.done.connect(self._on_check_done)
        self._check.failed.connect(self._on_check_failed)

        v = QVBoxLayout(self)
        v.setSpacing(4)
        self.picker = QComboBox()
        self.picker.setObjectName("machine")
        self.picker.setToolTip("Where both sides are measured: this computer, or a host over "
                               "SSH (its hosts come from your ssh configuration)")
        self.picker.addItem("This computer", LOCAL)
        for host in suggested_hosts(dict(transport_options)):
            self.picker.addItem(f"{host}  (SSH)", host)
        self.picker.addItem("Other SSH host…", OTHER)
        self.picker.currentIndexChanged.connect(self._on_picker_index_changed)
        v.addWidget(self.picker)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        self.host_edit = QLineEdit()
        self.host_edit.setObjectName("machine_host")
        self.host_edit.setPlaceholderText("user@host")
        self.host_edit.setToolTip("The host as you would give it to ssh (keys, not passwords)")
        self.host_edit.editingFinished.connect(self._on_host_edit_editing_finished)
        self.python_edit = QLineEdit()
        self.python_edit.setObjectName("machine_python")
        self.python_edit.setPlaceholderText(DEFAULT_PYTHON)
        self.python_edit.setToolTip("The host's Python with TensorFlow and this version of "
                                    "xlagui (e.g. ~/venv/bin/python)")
        self.python_edit.editingFinished.connect(self._on_python_edit_editing_finished)
        self._host_label = QLabel("Host")
        self._python_label = QLabel("Its Python")
        form.addRow(self._host_label, self.host_edit)
        form.addRow(self._python_label, self.python_edit)
        v.addLayout(form)
        row = QHBoxLayout()
        self.status = QLabel()
        self.status.setObjectName("Note")
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.check_button = QPushButton("Check again")
        self.check_button.setToolTip("Ask the host again what it has")
        self.check_button.clicked.connect(self._on_check_button_clicked)
        row.addWidget(self.status, 1)
        row.addWidget(self.check_button, 0, Qt.AlignmentFlag.AlignTop)
        v.addLayout(row)
        self._show()

    # -- what the settings panel and the window call ----------------------------------------

    def target(self) -> Target | None:
        """The SSH host chosen (None: this computer, or a host not named yet)."""
        host = self._host()
        if not host:
            return None
        try:
            return Target(host, python=self.python_edit.text().strip() or DEFAULT_PYTHON,
                             options=self._transport_options)
        except ValueError:
            return None

    @property
    def is_remote(self) -> bool:
        return bool(self.picker.currentData() != LOCAL)

    def host_info(self) -> HostInfo | None:
        """What the chosen host's preflight found (None: this computer, or not known yet)."""
        target = self.target()
        return self._info if target is not None and target == self._checked else None

    def problem(self) -> str:
        """Why a comparison cannot run on the chosen machine now; "" when it can."""
        if not self.is_remote:
            return ""
        target = self.target()
        if target is None:
            return "Name the SSH host to measure on (Machine)."
        if target == self._checked and self._error:
            return f"{target.host} cannot measure: {self._error}"
        if self.host_info() is None:
            return f"Checking {target.host}…"
        return ""

    def devices(self) -> list[dict[str, str]] | None:
        """The chosen host's devices as the settings' device list takes them."""
        info = self.host_info()
        if info is None:
            return None
        return [d.choice() for d in info.devices]

    def save(self, settings: QSettings) -> None:
        settings.setValue(HOST_KEY, self._host())
        settings.setValue(PYTHON_KEY, self.python_edit.text().strip())

    def restore(self, settings: QSettings) -> None:
        python = settings.value(PYTHON_KEY)
        if isinstance(python, str):
            self.python_edit.setText(python)
        host = settings.value(HOST_KEY)
        if isinstance(host, str) and host:
            self.select_host(host)

    def select_host(self, host: str) -> None:
        """Choose `host` (an alias of the picker, else typed into "Other SSH host…")."""
        index = self.picker.findData(host)
        if index < 0:
            self.host_edit.setText(host)
            index = self.picker.findData(OTHER)
        if index == self.picker.currentIndex():
            self._check_now()
        else:
            self.picker.setCurrentIndex(index)

    def shutdown(self) -> None:
        self._check.cancel()

    # -- checks -------------------------------------------------------------------------------

    def _host(self) -> str:
        data = self.picker.currentData()
        if data == OTHER:
            return self.host_edit.text().strip()
        return str(data or "")

    def _check_now(self) -> None:
        target = self.target()
        self._check.cancel()
        self._info, self._error, self._checked = None, "", target
        if target is not None:
            checker = self._checker
            self._check.start(lambda state: (target, checker(target, state)))
        self._show()
        self.changed.emit()

    def _on_check_done(self, result: tuple[Target, HostInfo]) -> None:
        target, info = result
        if target != self._checked:
            return
        self._info = info
        self._show()
        self.changed.emit()

    def _on_check_failed(self, exc: BaseException, details: str) -> None:
        if isinstance(exc, MachineError):
            self._error = error_text(exc)
        else:
            self._error = f"the check failed: {type(exc).__name__}: {exc}"
        self._show()
        self.changed.emit()

    def _show(self) -> None:
        remote = self.is_remote
        other = self.picker.currentData() == OTHER
        widgets: list[tuple[QWidget, bool]] = [
            (self.host_edit, other), (self._host_label, other), (self.python_edit, remote),
            (self._python_label, remote), (self.check_button, remote)]
        for widget, shown in widgets:
            widget.setVisible(shown)
        target = self.target()
        colour = ""
        if not remote:
            text = "Both sides are measured on this computer."
        elif target is None:
            text = "Type the host as you would give it to ssh."
        elif target == self._checked and self._error:
            text, colour = html.escape(self._error), LEVEL_COLORS[Level.ERROR]
        elif (info := self.host_info()) is not None:
            rows = "<br>".join(f"{what}: {html.escape(value)}"
                               for what, value in host_rows(info)[1:])
            text = f"Both sides are measured on <b>{html.escape(target.host)}</b>.<br>{rows}"
        else:
            text = f"Checking {html.escape(target.host)}: logging in and asking what it has…"
        self.status.setText(text)
        self.status.setStyleSheet(f"color: {colour};" if colour else "")

    # -- slots ----------------------------------------------------------------------------------

    def _on_picker_index_changed(self, _index: int) -> None:
        self._check_now()
        if self.picker.currentData() == OTHER and not self.host_edit.text().strip():
            self.host_edit.setFocus()

    def _on_host_edit_editing_finished(self) -> None:
        if self.target() != self._checked:
            self._check_now()

    def _on_python_edit_editing_finished(self) -> None:
        if self.is_remote and self.target() != self._checked:
            self._check_now()

    def _on_check_button_clicked(self) -> None:
        self._check_now()
