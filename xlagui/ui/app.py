"""Start the desktop app: the QApplication, the window, and a crash handler that keeps results.

`run_app` is what `xlagui` (no command, a folder, or `--demo`) calls. It never imports
TensorFlow: devices are probed by a helper process once the window is up.

With XLAGUI_LAUNCH_PROBE=1 in the environment the app prints the wall-clock time of the
window's first show event (`shown_at=<seconds since the epoch>`) and quits: a launcher that
notes the time before starting the process gets the launch time (bench/bench_gui.py does).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from xlagui import APP_ID, APP_NAME
from xlagui.ui import dialogs
from xlagui.ui.theme import APP_STYLE

LAUNCH_PROBE_ENV = "XLAGUI_LAUNCH_PROBE"
ORGANIZATION = "xlagui"
GIL_SWITCH_SECONDS = 0.001

ExceptHook = Callable[[type[BaseException], BaseException, TracebackType | None], Any]


def app_icon() -> QIcon:
    """The app's icon from the package resources, or an empty icon when they are absent."""
    icon = QIcon()
    try:
        from importlib.resources import files

        root = files("xlagui.resources")
        svg = root / "xlagui.svg"
        if svg.is_file():
            icon.addFile(str(svg))
        # Rendered sizes, where present, look crisper than the SVG scaled down.
        hicolor = root / "icons" / "hicolor"
        if hicolor.is_dir():
            for size_dir in hicolor.iterdir():
                for png in (size_dir / "apps").iterdir() if (size_dir / "apps").is_dir() else []:
                    if png.name.endswith(".png"):
                        icon.addFile(str(png))
    except (ModuleNotFoundError, FileNotFoundError, NotADirectoryError, OSError, TypeError):
        return QIcon()
    return icon


def make_application(argv: list[str] | None = None) -> QApplication:
    """The QApplication with xlagui's names, style and icon (the running one if any)."""
    # The GUI thread shares the interpreter with the supervising thread and the scans: let it
    # have the GIL back within 1 ms (Python's default is 5 ms), so the window stays smooth.
    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(argv or [APP_NAME])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APP_NAME)
    app.setDesktopFileName(APP_ID)
    if sys.platform.startswith("linux") and app.style().name().lower() != "fusion":
        app.setStyle("Fusion")
    app.setStyleSheet(APP_STYLE)
    icon = app_icon()
    if not icon.isNull():
        app.setWindowIcon(icon)
    return app


class CrashHandler:
    """sys.excepthook while the app runs: an unexpected exception becomes a dialog with the
    traceback on demand, the app stays up, and finished runs stay where they were saved."""

    def __init__(self, window_getter: Callable[[], QWidget | None]) -> None:
        self._window = window_getter
        self._previous: ExceptHook = sys.excepthook
        self._showing = False
        self.last: BaseException | None = None

    def install(self) -> CrashHandler:
        self._previous = sys.excepthook
        sys.excepthook = self
        return self

    def uninstall(self) -> None:
        if sys.excepthook is self:
            sys.excepthook = self._previous

    def __call__(self, exc_type: type[BaseException], exc: BaseException,
                 tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            app = QApplication.instance()
            if app is not None:
                app.quit()
            return
        self.last = exc
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(details)
        window = self._window()
        if window is None or self._showing:
            return
        self._showing = True
        try:
            dialogs.show_error(
                window,
                "Something unexpected went wrong",
                f"xlagui hit an unexpected problem: {exc_type.__name__}: {exc}",
                "The app keeps running, and every run that finished is saved in the history. "
                "If this happens again, please report it with the details below.",
                details,
            )
        finally:
            self._showing = False


def run_app(dataset: str | None = None, demo: bool = False) -> int:
    """Open the window (with `dataset` or the demo set loaded) and run until it closes."""
    launch_probe = os.environ.get(LAUNCH_PROBE_ENV) == "1"
    app = make_application(sys.argv[:1])

    from xlagui.ui.main_window import MainWindow

    window = MainWindow(settings=QSettings(), probe=None if launch_probe else _probe_devices)
    handler = CrashHandler(lambda: window).install()
    if launch_probe:
        window.first_shown.connect(lambda: _report_launch(window))
    window.show()
    if dataset:
        window.open_dataset(Path(dataset).expanduser())
    elif demo:
        window.open_demo()
    try:
        code = app.exec()
    finally:
        handler.uninstall()
        supervisor = window.supervisor
        if supervisor is not None and supervisor.isRunning():
            # Only if the app was quit from outside the window: never leave a worker behind.
            supervisor.request_stop()
            supervisor.wait(10_000)
    return int(code)


def _probe_devices() -> list[dict[str, str]]:
    # Imported here, in the probe's thread: the runner is not needed to show the window.
    from xlagui.core.runner import probe_devices

    return probe_devices()


def _report_launch(window: QWidget) -> None:
    print(f"shown_at={time.time():.6f}", flush=True)
    QTimer.singleShot(0, window.close)
