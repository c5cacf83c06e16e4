"""Fixtures for the GUI tests: a window with a fake worker, a tiny dataset, drag helpers."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import shiboken6
from PySide6.QtCore import QEvent, QMimeData, QPoint, QSettings, Qt, QUrl
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from tests.helpers.images import make_split_dataset
from tests.helpers.streams import FakeWorker, run_events
from xlagui.core.machine import cpu as machine_cpu
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.spec import RunSpec
from xlagui.ui.app import GuiThreadGarbageCollector
from xlagui.ui.window.main_window import MainWindow

# The offscreen platform says this whenever a top-level window's size limits change, and the
# next two whenever a menu pops up (tests/helpers/clicks.py opens menus with the mouse).
OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints"
POPUP_NOISE = (r"This plugin does not support raise\(\)",
               "This plugin does not support grabbing the keyboard")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/ui/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, *POPUP_NOISE))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "cpu_flags(*flags): the CPU flags `xlagui.core.machine.cpu` reads in this test "
        "(none unless marked)")


@pytest.fixture(autouse=True, scope="session")
def _collect_garbage_on_the_gui_thread(qapp: QApplication) -> Iterator[None]:
    """As the app does (`make_application`): Python's cyclic collector runs on the GUI thread
    only, so no widget left in a cycle by one test is destroyed in another's worker thread."""
    collector = GuiThreadGarbageCollector(qapp)
    yield
    collector.stop()
    collector.deleteLater()


@pytest.fixture(autouse=True)
def cpu_flags(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> frozenset[str]:
    """The window ticks "Also measure" arms by this machine's CPU flags (bf16 on AMX): tests
    see a CPU with no flags, so nothing is ticked by default, unless marked `cpu_flags`."""
    marker = request.node.get_closest_marker("cpu_flags")
    flags = frozenset(marker.args) if marker is not None else frozenset()
    monkeypatch.setattr(machine_cpu, "cpu_flags", lambda *_args, **_kwargs: flags)
    return flags


def fake_worker(delay: float = 0.0, steps: int = 4, **fail: ErrorEvent) -> FakeWorker:
    """Baseline epochs of 3, 1, 1 s against XLA's 6, 0.5, 0.5 s: XLA 2.00× faster."""
    return FakeWorker(
        {
            "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0),
                                   steps=steps),
            "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5),
                              steps=steps),
        },
        delay=delay,
        fail=fail,
    )


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "elephants"
    make_split_dataset(root, {"african": 6, "asian": 6}, {"african": 2, "asian": 2},
                       size=(40, 30))
    return root


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


WindowFactory = Callable[..., MainWindow]


FAKE_MEASURE = Path(__file__).resolve().parents[1] / "helpers" / "fake_measure_worker.py"


def fake_measure_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


@pytest.fixture
def make_window(qtbot: QtBot, settings: QSettings, tmp_path: Path) -> Iterator[WindowFactory]:
    windows: list[MainWindow] = []

    def make(worker: FakeWorker | None = None, show: bool = True, real_worker: bool = False,
             **kwargs: object) -> MainWindow:
        """A window; its runs use `worker` (a fake by default; the real runner if
        `real_worker`)."""
        kwargs.setdefault("settings", settings)
        kwargs.setdefault("history_root", tmp_path / "history")
        kwargs.setdefault("preload_plots", False)
        chosen = None if real_worker else (worker or fake_worker())
        if not real_worker:
            # The speed phase runs measuring workers that speak the protocol without TensorFlow.
            kwargs.setdefault("measure_command", fake_measure_command)
        window = MainWindow(worker=chosen, **kwargs)  # type: ignore[arg-type]
        # Not qtbot.addWidget: a window deletes itself when it closes, and pytest-qt's own
        # teardown would close it again. The teardown below closes what is still open.
        windows.append(window)
        if show:
            window.resize(1400, 900)
            window.show()
            qtbot.waitExposed(window)
        return window

    yield make
    for window in windows:
        if not shiboken6.isValid(window):
            continue  # closed: it deleted itself (and stopped what it ran)
        supervisor = window.comparisons.supervisor
        if supervisor is not None:
            supervisor.request_stop()
            supervisor.wait(10_000)
            window.comparisons.supervisor = None  # so closing does not ask
        sweeper = window.sweep_tab.supervisor
        if sweeper is not None:
            sweeper.request_stop()
            sweeper.wait(10_000)
            window.sweep_tab.supervisor = None
        window.dataset_panel.shutdown()
        window.close()  # it deletes itself: later, from the event loop
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def window(make_window: WindowFactory) -> MainWindow:
    return make_window()


@pytest.fixture
def loaded_window(qtbot: QtBot, window: MainWindow, dataset: Path) -> MainWindow:
    """A window with the tiny dataset scanned and shown, settings small enough to run."""
    return load_small(qtbot, window, dataset)


def load_small(qtbot: QtBot, window: MainWindow, dataset: Path) -> MainWindow:
    """Scan `dataset` into `window` and make its settings small enough to run."""
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    panel = window.settings_panel
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    return window


def is_closed(window: QWidget) -> bool:
    """The window closed: it deleted itself (`WA_DeleteOnClose`), or is at least hidden."""
    return not shiboken6.isValid(window) or not window.isVisible()


def url_mime(*paths: Path | str) -> QMimeData:
    mime = QMimeData()
    mime.setUrls([QUrl(p) if isinstance(p, str) else QUrl.fromLocalFile(str(p)) for p in paths])
    return mime


def drag_enter(target: QWidget, mime: QMimeData) -> QDragEnterEvent:
    event = QDragEnterEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime,
                            Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, event)
    return event


def drop(target: QWidget, mime: QMimeData) -> QDropEvent:
    """A drop, as the platform delivers it: after a drag entered the same widget."""
    drag_enter(target, mime)
    event = QDropEvent(QPoint(20, 20), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(target, event)
    return event


@pytest.fixture
def opened_urls(monkeypatch: pytest.MonkeyPatch) -> list[QUrl]:
    """What the window asked the desktop to open (folders, links), instead of opening it."""
    urls: list[QUrl] = []

    def record(url: QUrl) -> bool:
        urls.append(QUrl(url))
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(record))
    return urls
