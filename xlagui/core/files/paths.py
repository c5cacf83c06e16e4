"""Where xlagui keeps its own files: the user's cache and data folders, never the dataset's."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from xlagui import APP_NAME


def cache_dir() -> Path:
    """Demo datasets and other things that can be rebuilt. `XLAGUI_CACHE_DIR` overrides."""
    override = os.environ.get("XLAGUI_CACHE_DIR")
    return Path(override) if override else Path(platformdirs.user_cache_dir(APP_NAME))


def data_dir() -> Path:
    """The history of finished comparisons. `XLAGUI_DATA_DIR` overrides."""
    override = os.environ.get("XLAGUI_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


def history_dir() -> Path:
    return data_dir() / "history"


def log_dir() -> Path:
    """The app's log files (one per session) and its crash log."""
    return data_dir() / "logs"
