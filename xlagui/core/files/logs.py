"""The app's own records for a bug report: a log file per session and a crash log.

`start_session_log` sends the ``xlagui`` loggers to ``xlagui.log`` in the log folder, after
moving the previous session's file to ``xlagui.log.1`` (and so on: the last `SESSIONS_KEPT`
sessions are kept, and a session that writes more than `MAX_BYTES` rotates too).
`enable_crash_log` points `faulthandler` at ``crash.log`` there, so a crash inside Qt or a
C extension, which no Python handler sees, still leaves its Python stack behind.
"""

from __future__ import annotations

import datetime as _dt
import faulthandler
import logging
import logging.handlers
import os
from pathlib import Path
from typing import TextIO

from xlagui import __version__
from xlagui.core.files import paths

LOG_NAME = "xlagui.log"
CRASH_LOG_NAME = "crash.log"
SESSIONS_KEPT = 10
MAX_BYTES = 5 * 2**20
CRASH_LOG_MAX_BYTES = 2**20
HANDLER_NAME = "xlagui-session"
FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"

_crash_file: TextIO | None = None  # open for as long as faulthandler may write to it


def start_session_log(folder: Path | None = None, level: int = logging.INFO) -> Path:
    """Log this session to a fresh file in `folder` (the user data folder's log folder by
    default) and return its path. Calling it again replaces the handler, never adds one."""
    folder = folder or paths.log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOG_NAME
    logger = logging.getLogger("xlagui")
    stop_session_log()
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=SESSIONS_KEPT - 1, encoding="utf-8"
    )
    if path.exists() and path.stat().st_size > 0:
        handler.doRollover()  # the previous session becomes xlagui.log.1
    handler.set_name(HANDLER_NAME)
    handler.setFormatter(logging.Formatter(FORMAT))
    logger.addHandler(handler)
    logger.setLevel(min(level, logger.level or level))
    logger.info("xlagui %s session started (pid %d)", __version__, os.getpid())
    return path


def stop_session_log() -> None:
    """Close this session's log file (if any)."""
    logger = logging.getLogger("xlagui")
    for handler in list(logger.handlers):
        if handler.get_name() == HANDLER_NAME:
            logger.removeHandler(handler)
            handler.close()


def enable_crash_log(folder: Path | None = None) -> Path:
    """Have `faulthandler` write the stacks of every thread to ``crash.log`` in `folder` when
    the process crashes (a segmentation fault, an abort). Returns the file's path."""
    global _crash_file
    folder = folder or paths.log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CRASH_LOG_NAME
    if path.exists() and path.stat().st_size > CRASH_LOG_MAX_BYTES:
        os.replace(path, path.with_name(CRASH_LOG_NAME + ".1"))
    previous = _crash_file
    _crash_file = path.open("a", encoding="utf-8")
    # Which session a dump below belongs to; a session that ends well adds nothing else.
    stamp = _dt.datetime.now().isoformat(timespec="seconds")
    _crash_file.write(f"--- xlagui {__version__}, pid {os.getpid()}, started {stamp}\n")
    _crash_file.flush()
    faulthandler.enable(file=_crash_file, all_threads=True)
    if previous is not None:
        previous.close()
    return path
