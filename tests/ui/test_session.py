"""What a user can hand in with a bug report, and Ctrl+C in the terminal: the session log,
"Show log folder" in the Help menu, and a clean close on SIGINT (workers stopped)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, click_menu_item, watching
from tests.ui.conftest import WindowFactory, fake_worker
from xlagui.core import logs
from xlagui.ui import app as app_module
from xlagui.ui.main_window import MainWindow


@pytest.fixture
def opened_urls(monkeypatch: pytest.MonkeyPatch) -> list[QUrl]:
    urls: list[QUrl] = []

    def record(url: QUrl) -> bool:
        urls.append(QUrl(url))
        return True

    monkeypatch.setattr(QDesktopServices, "openUrl", staticmethod(record))
    return urls


@pytest.fixture
def session_log(tmp_path: Path) -> Iterator[Path]:
    path = logs.start_session_log(tmp_path / "logs")
    yield path
    logs.stop_session_log()


def test_show_log_folder_opens_the_folder(
    qtbot: QtBot, make_window: WindowFactory, tmp_path: Path, opened_urls: list[QUrl]
) -> None:
    folder = tmp_path / "data" / "logs"
    window = make_window(log_folder=folder)
    answerer = ModalAnswerer()
    with watching(window, answerer):
        assert click_menu_item(qtbot, window, window.show_logs_action)
    assert opened_urls == [QUrl.fromLocalFile(str(folder))]
    assert folder.is_dir()


def test_the_window_logs_what_it_does(
    qtbot: QtBot, loaded_window: MainWindow, session_log: Path
) -> None:
    window = loaded_window
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        click(qtbot, window.run_button)
    text = session_log.read_text()
    assert "session started" in text
    assert "started the comparison on" in text
    assert "run 01-baseline-r1 ended: finished" in text
    assert "comparison ended (done)" in text


def test_ctrl_c_in_the_terminal_stops_the_run_and_closes(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path
) -> None:
    window = make_window(worker=fake_worker(delay=0.05, steps=20))
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    window.settings_panel.batch_size.setValue(4)
    window.settings_panel.image_size.setValue(48)
    previous = signal.getsignal(signal.SIGINT)
    uninstall = app_module.install_sigint_handler(window)
    answerer = ModalAnswerer()
    try:
        assert signal.getsignal(signal.SIGINT) is not previous
        with watching(window, answerer):
            with qtbot.waitSignal(window.comparison_started, timeout=5_000):
                click(qtbot, window.run_button)
            with qtbot.waitSignal(window.comparison_finished, timeout=10_000) as blocker:
                signal.raise_signal(signal.SIGINT)
            qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)
    finally:
        uninstall()
    assert signal.getsignal(signal.SIGINT) is previous
    assert answerer.seen == []  # closed without a question: Ctrl+C was the answer
    assert window.comparisons.supervisor is None  # the workers were stopped and waited for
    assert "cancelled" in [r.status for r in blocker.args[0].runs]


def test_ctrl_c_when_idle_closes_at_once(qtbot: QtBot, window: MainWindow) -> None:
    uninstall = app_module.install_sigint_handler(window)
    try:
        signal.raise_signal(signal.SIGINT)
        qtbot.waitUntil(lambda: not window.isVisible(), timeout=5_000)
    finally:
        uninstall()
