"""Start the desktop app: the QApplication, the window, and a crash handler that keeps results.

Each session logs to a file in the user data folder's log folder, `faulthandler` writes a crash
log there, and Ctrl+C in the terminal that started the window, or SIGTERM, closes it cleanly.

`run_app` is what `xlagui` (no command, a folder, or `--demo`) calls. It never imports
TensorFlow: devices are probed by a helper process once the window is up.

With XLAGUI_LAUNCH_PROBE=1 in the environment the app prints the wall-clock time of the
window's first show event (`shown_at=<seconds since the epoch>`) and quits: a launcher that
notes the time before starting the process gets the launch time (bench/bench_gui.py does).
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QObject, QSettings, QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QWidget

from xlagui import APP_ID, APP_NAME
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.theme import APP_STYLE

if TYPE_CHECKING:
    from xlagui.ui.window.main_window import MainWindow

LAUNCH_PROBE_ENV = "XLAGUI_LAUNCH_PROBE"
ORGANIZATION = "xlagui"
GIL_SWITCH_SECONDS = 0.001
# Python runs a signal handler only when it runs Python code; while Qt's event loop waits, a
# timer that wakes it this often lets Ctrl+C and SIGTERM through.
SIGNAL_WAKE_MS = 200
# What closes the window as Quit does, without asking: Ctrl+C in the terminal that started it,
# and SIGTERM (a logout, `kill`, a service manager stopping it).
CLOSE_SIGNALS = (signal.SIGINT, signal.SIGTERM)
SIGNAL_WORDS = {signal.SIGINT: "Ctrl+C in the terminal", signal.SIGTERM: "SIGTERM"}

log = logging.getLogger(__name__)

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


class GuiThreadGarbageCollector(QObject):
    """Python's cyclic garbage collector, run on the GUI thread only, on a timer.

    Left automatic, a collection runs in whichever thread happens to allocate: the QThread
    supervising a comparison, a scan, a thumbnail batch. A Qt object caught in a reference
    cycle then has its C++ side destroyed in that thread ("QBasicTimer::start: Timers cannot
    be started from another thread", and at worst a crash). This is pyqtgraph's
    `pyqtgraph.util.garbage_collector.GarbageCollector` recipe, written out here so the window
    does not import pyqtgraph before it appears: automatic collection off, and every
    `interval_ms` the generations past their thresholds are collected here.
    """

    def __init__(self, parent: QObject | None = None, interval_ms: int = 1000) -> None:
        super().__init__(parent)
        self.threshold = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> None:
        counts = gc.get_count()
        for generation in range(3):
            if counts[generation] <= self.threshold[generation]:
                break
            gc.collect(generation)

    def stop(self) -> None:
        """Automatic collection back on (the app is closing, or a test is done with it)."""
        self._timer.stop()
        gc.enable()


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
    if app.findChild(GuiThreadGarbageCollector) is None:
        GuiThreadGarbageCollector(app)
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
        log.error("unexpected exception:\n%s", details)
        sys.stderr.write(details)  # the terminal too, when there is one
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


def install_signal_handlers(window: MainWindow) -> Callable[[], None]:
    """Ctrl+C in the terminal (SIGINT) and SIGTERM close `window` as Quit does, without
    asking: a running comparison is stopped, its workers waited for, and it is saved with its
    run in progress marked interrupted. A second signal quits at once (the workers are still
    stopped on the way out). Returns a function that undoes this."""
    wake = QTimer(window)
    wake.setInterval(SIGNAL_WAKE_MS)
    wake.timeout.connect(_on_wake_timer_timeout)
    wake.start()
    received = [0]

    def handler(signum: int, frame: FrameType | None) -> None:
        received[0] += 1
        words = SIGNAL_WORDS.get(signal.Signals(signum), f"signal {signum}")
        if received[0] == 1:
            log.info("%s: closing the window", words)
            # Not from inside whatever Python code the signal interrupted: from the event loop.
            QTimer.singleShot(0, window.close_without_asking)
        else:
            log.info("%s again: quitting now", words)
            app = QApplication.instance()
            if app is not None:
                QTimer.singleShot(0, app.quit)

    previous = {signum: signal.signal(signum, handler) for signum in CLOSE_SIGNALS}

    def uninstall() -> None:
        if shiboken6.isValid(wake):  # it went with the window, once that closed
            wake.stop()
        for signum, before in previous.items():
            signal.signal(signum, before)

    return uninstall


def _on_wake_timer_timeout() -> None:
    """Nothing: being called is the point (Python gets to run its signal handlers)."""


def _start_logs() -> None:
    from xlagui.core.files import logs

    try:
        path = logs.start_session_log()
        crash = logs.enable_crash_log()
    except OSError as exc:  # a read-only or full data folder must not keep the window shut
        sys.stderr.write(f"xlagui: cannot write its log files: {exc}\n")
        return
    log.info("logging to %s; crash log %s", path, crash)


def run_app(dataset: str | None = None, demo: bool = False) -> int:
    """Open the window (with `dataset` or the demo set loaded) and run until it closes."""
    launch_probe = os.environ.get(LAUNCH_PROBE_ENV) == "1"
    _start_logs()
    app = make_application(sys.argv[:1])

    from xlagui.ui.settings.model_panel import real_checker
    from xlagui.ui.window.main_window import MainWindow

    window = MainWindow(settings=QSettings(), probe=None if launch_probe else _probe_devices,
                        model_checker=None if launch_probe else real_checker)
    handler = CrashHandler(lambda: window).install()
    uninstall_signals = install_signal_handlers(window)
    if launch_probe:
        window.first_shown.connect(lambda: _report_launch(window))
    window.show()
    if dataset:
        window.open_dataset(Path(dataset).expanduser())
    elif demo:
        window.open_demo()
    code = 1  # what an exception out of the event loop ends with
    try:
        code = app.exec()
    finally:
        uninstall_signals()
        handler.uninstall()
        # The window deletes itself (and its supervisor) when it closes; one quit from outside
        # (the app's quit, a second signal) may still hold a running comparison.
        supervisor = window.comparisons.supervisor if shiboken6.isValid(window) else None
        if supervisor is not None and shiboken6.isValid(supervisor) and supervisor.isRunning():
            # Only if the app was quit from outside the window: never leave a worker behind.
            log.info("quitting with a comparison running: stopping it")
            supervisor.request_stop(closing=True)
            supervisor.wait(10_000)
        log.info("session ended (exit code %s)", code)
    return int(code)


def _probe_devices() -> list[dict[str, str]]:
    # Imported here, in the probe's thread: the children are not needed to show the window.
    from xlagui.core.measure.children import devices

    return [d.choice() for d in devices()]


def _report_launch(window: QWidget) -> None:
    print(f"shown_at={time.time():.6f}", flush=True)
    QTimer.singleShot(0, window.close)
