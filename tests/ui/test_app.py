"""Starting the app: names and icon, the crash handler, launching without TensorFlow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from xlagui.ui import app as app_module
from xlagui.ui.shared import dialogs


def test_the_application_has_its_names_and_icon(qtbot: QtBot) -> None:
    app = app_module.make_application()
    assert isinstance(app, QApplication)
    assert app.organizationName() == "xlagui"
    assert app.applicationName() == "xlagui"
    icon = app_module.app_icon()
    assert not icon.isNull()
    assert not icon.pixmap(64, 64).isNull()


def test_the_crash_handler_shows_a_dialog_and_keeps_the_app(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    shown: list[tuple[str, str, str, str]] = []

    def record(parent: QWidget | None, title: str, message: str, hint: str = "",
               details: str = "") -> None:
        shown.append((title, message, hint, details))

    monkeypatch.setattr(dialogs, "show_error", record)
    previous = sys.excepthook
    handler = app_module.CrashHandler(lambda: window).install()
    try:
        assert sys.excepthook is handler
        try:
            raise ZeroDivisionError("division by zero")
        except ZeroDivisionError as exc:
            sys.excepthook(type(exc), exc, exc.__traceback__)
    finally:
        handler.uninstall()
    assert sys.excepthook is previous
    assert len(shown) == 1
    title, message, hint, details = shown[0]
    assert title == "Something unexpected went wrong"
    assert "ZeroDivisionError: division by zero" in message
    assert "saved in the history" in hint
    assert "Traceback" in details and "test_app.py" in details
    assert "ZeroDivisionError" in capsys.readouterr().err  # and on stderr for a report


@pytest.mark.qt_no_exception_capture  # the app's own hook must see it, not pytest-qt's
def test_a_slot_raising_reaches_the_handler(qtbot: QtBot,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in a slot that a click reaches: PySide6 hands the exception to sys.excepthook,
    which is the handler the app installs, and the user sees the dialog."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QPushButton, QVBoxLayout

    window = QWidget()
    button = QPushButton("Run", window)
    QVBoxLayout(window).addWidget(button)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    shown: list[str] = []
    monkeypatch.setattr(dialogs, "show_error",
                        lambda parent, title, message, hint="", details="": shown.append(message))

    def on_run_clicked(checked: bool) -> None:
        raise RuntimeError("a bug in a slot")

    button.clicked.connect(on_run_clicked)
    previous = sys.excepthook
    handler = app_module.CrashHandler(lambda: window).install()  # as run_app does
    try:
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: bool(shown), timeout=2_000)
    finally:
        handler.uninstall()
    assert sys.excepthook is previous
    assert isinstance(handler.last, RuntimeError) and str(handler.last) == "a bug in a slot"
    assert shown == ["xlagui hit an unexpected problem: RuntimeError: a bug in a slot"]


def test_launching_shows_the_window_without_tensorflow(tmp_path: Path) -> None:
    """`python -m xlagui` opens the window (the launch probe closes it at once) and never
    imports TensorFlow, Keras or SciPy on the way, nor the comparison's workflow (its phases,
    the measuring and saving they bring): no button was pressed (issue 38's 1.0 s launch)."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['xlagui']\n"
        "try:\n"
        "    runpy.run_module('xlagui', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "bad = [m for m in ('tensorflow', 'keras', 'scipy', 'xlagui.core.compare.phases',\n"
        "                   'xlagui.core.compare.workflow') if m in sys.modules]\n"
        "print('heavy=' + ','.join(bad))\n"
        "sys.exit(code)\n"
    )
    env = {**os.environ, "XLAGUI_LAUNCH_PROBE": "1", "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XLAGUI_DATA_DIR": str(tmp_path / "data")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    lines = res.stdout.splitlines()
    assert any(line.startswith("shown_at=") for line in lines)
    assert "heavy=" in lines


def test_launching_with_a_folder_opens_it(tmp_path: Path) -> None:
    from tests.helpers.images import make_class_folders

    make_class_folders(tmp_path / "pets", {"cats": 3, "dogs": 3})
    code = (
        "import sys\n"
        "from PySide6.QtCore import QTimer\n"
        "from PySide6.QtWidgets import QApplication\n"
        "import xlagui.ui.window.main_window as mw\n"
        "import xlagui.ui.app as app\n"
        "app._probe_devices = lambda: [{'id': 'cpu', 'name': 'CPU', 'kind': 'CPU'}]\n"
        # Polled, not run once at the first tick: under load the window may not exist yet,
        # and the folder may be loaded before a signal could be connected. A watchdog ends
        # the process with a message instead of leaving it to the subprocess timeout.
        "import time\n"
        "deadline = time.monotonic() + 90\n"
        "def check():\n"
        "    w = next((x for x in QApplication.topLevelWidgets()"
        " if isinstance(x, mw.MainWindow)), None)\n"
        "    if w is not None and 'pets' in w.windowTitle():\n"
        "        print('title=' + w.windowTitle()); w.close(); return\n"
        "    if time.monotonic() > deadline:\n"
        "        print('no window with the folder after 90 s; title: '"
        " + (w.windowTitle() if w else 'no window'), file=sys.stderr, flush=True)\n"
        "        import os; os._exit(3)  # SystemExit in a slot would only be printed\n"
        "    QTimer.singleShot(50, check)\n"
        "QTimer.singleShot(0, check)\n"
        "from xlagui.cli import main\n"
        f"sys.exit(main([{str(tmp_path / 'pets')!r}]))\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XLAGUI_DATA_DIR": str(tmp_path / "data")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "title=xlagui — pets" in res.stdout


def test_garbage_is_collected_on_the_gui_thread_only(qtbot: QtBot) -> None:
    """With the app's collector installed, a reference cycle made in a worker thread is not
    collected there (automatic collection is off), and the GUI thread's timer collects it."""
    import gc
    import threading
    import weakref

    from xlagui.ui.app import GuiThreadGarbageCollector

    was_enabled = gc.isenabled()  # the UI tests' own collector may have switched it off
    gc.enable()
    collector = GuiThreadGarbageCollector(interval_ms=10)
    try:
        assert not gc.isenabled()

        class Node:
            pass

        refs: list[weakref.ref[Node]] = []
        collected_in: list[str] = []

        def make_cycles() -> None:
            for _ in range(2000):  # well past the first generation's threshold
                a, b = Node(), Node()
                a.other, b.other = b, a  # type: ignore[attr-defined]
                refs.append(weakref.ref(a, lambda _r: collected_in.append(
                    threading.current_thread().name)))

        worker = threading.Thread(target=make_cycles, name="worker")
        worker.start()
        worker.join(timeout=60)
        assert not worker.is_alive(), "the worker thread did not finish its cycles within 60 s"
        assert collected_in == []  # nothing collected in the worker thread
        qtbot.waitUntil(lambda: all(r() is None for r in refs), timeout=5_000)
        assert set(collected_in) == {threading.current_thread().name}
    finally:
        collector.stop()
        collector.deleteLater()
        assert gc.isenabled()  # stop() hands collection back
        if not was_enabled:
            gc.disable()
