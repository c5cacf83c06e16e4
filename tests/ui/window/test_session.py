"""What a user can hand in with a bug report, and Ctrl+C in the terminal: the session log,
"Show log folder" in the Help menu, and a close on SIGINT or SIGTERM (during a run:
tests/ui/window/test_closing.py)."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, click_menu_item, watching
from tests.ui.conftest import WindowFactory, is_closed
from xlagui.core.files import logs
from xlagui.ui import app as app_module
from xlagui.ui.window.main_window import MainWindow


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


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_sigterm_when_idle_closes_at_once(
    qtbot: QtBot, window: MainWindow, signum: signal.Signals
) -> None:
    """During a run they close as Quit does, without asking (tests/ui/window/test_closing.py)."""
    previous = signal.getsignal(signum)
    uninstall = app_module.install_signal_handlers(window)
    try:
        assert signal.getsignal(signum) is not previous
        signal.raise_signal(signum)
        qtbot.waitUntil(lambda: is_closed(window), timeout=5_000)
    finally:
        uninstall()
    assert signal.getsignal(signum) is previous
