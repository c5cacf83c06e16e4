"""The session log (one file per session, older ones rotated) and the faulthandler crash log."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from xlagui.core.files import logs, paths


@pytest.fixture
def stop_logging() -> Iterator[None]:
    yield
    logs.stop_session_log()


def test_each_session_gets_its_own_file_and_old_ones_rotate(
    tmp_path: Path, stop_logging: None
) -> None:
    for session in range(logs.SESSIONS_KEPT + 2):
        path = logs.start_session_log(tmp_path)
        logging.getLogger("xlagui.test").info("session %d", session)
    assert path == tmp_path / "xlagui.log"
    assert "session 11" in path.read_text() and "session 10" not in path.read_text()
    assert "session 10" in (tmp_path / "xlagui.log.1").read_text()
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert len(kept) == logs.SESSIONS_KEPT  # the oldest sessions are gone
    # One handler, however often it is started.
    named = [h for h in logging.getLogger("xlagui").handlers if h.get_name() == logs.HANDLER_NAME]
    assert len(named) == 1


def test_the_log_folder_is_in_the_user_data_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLAGUI_DATA_DIR", "/somewhere/data")
    assert paths.log_dir() == Path("/somewhere/data/logs")


def test_a_hard_crash_leaves_its_stack_in_the_crash_log(tmp_path: Path) -> None:
    code = (
        "import faulthandler\n"
        "from xlagui.core.files import logs\n"
        "logs.enable_crash_log()\n"
        "def deep_in_the_app():\n"
        "    faulthandler._sigsegv()\n"
        "deep_in_the_app()\n"
    )
    env = {**os.environ, "XLAGUI_DATA_DIR": str(tmp_path)}
    res = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert res.returncode != 0
    text = (tmp_path / "logs" / "crash.log").read_text()
    assert text.startswith("--- xlagui ")
    assert "Fatal Python error: Segmentation fault" in text
    assert "deep_in_the_app" in text
