"""Finished comparisons, saved automatically in the user's data folder and listed for reopening.

Each comparison is one folder under `paths.history_dir()` holding its `comparison.json`; it is
written atomically after every run, so killing the app never loses a finished run, and once
more when the app closes during a run, with that run `interrupted` and its epochs kept.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import secrets
from dataclasses import dataclass
from pathlib import Path

from xlagui.core import export, paths
from xlagui.core.config import RunConfig
from xlagui.core.report import FINISHED, INTERRUPTED, ComparisonReport, model_words


@dataclass
class HistoryItem:
    folder: Path
    created: str
    title: str
    verdict: str
    runs_finished: int
    runs_interrupted: int = 0  # training runs cut short by the app closing (epochs kept)

    @property
    def json_path(self) -> Path:
        return self.folder / "comparison.json"


def new_folder(root: Path | None = None) -> Path:
    """A fresh, uniquely named folder for a comparison about to run."""
    root = root or paths.history_dir()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = root / f"{stamp}-{secrets.token_hex(3)}"
    folder.mkdir(parents=True, exist_ok=False)
    return folder


def save(report: ComparisonReport, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return export.write_json(report, folder / "comparison.json")


def list_items(root: Path | None = None) -> list[HistoryItem]:
    """Newest first. Unreadable entries are skipped, never fatal."""
    root = root or paths.history_dir()
    items: list[HistoryItem] = []
    if not root.is_dir():
        return items
    for folder in root.iterdir():
        path = folder / "comparison.json"
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            comp = data.get("comparison") or {}
            statuses = [r.get("status") for r in data.get("runs", [])]
            name = data.get("dataset", {}).get("name", "?")
            model = ""
            with contextlib.suppress(ValueError, TypeError):
                model = model_words(RunConfig.from_dict(data.get("config") or {}))
            items.append(
                HistoryItem(
                    folder=folder,
                    created=data.get("created", ""),
                    title=f"XLA vs baseline on {name}{model}",
                    verdict=comp.get("verdict", ""),
                    runs_finished=statuses.count(FINISHED),
                    runs_interrupted=statuses.count(INTERRUPTED),
                )
            )
        except (OSError, ValueError, AttributeError):
            continue
    items.sort(key=lambda i: (i.created, i.folder.name), reverse=True)
    return items


def load(item: HistoryItem | Path) -> ComparisonReport:
    path = item.json_path if isinstance(item, HistoryItem) else Path(item)
    if path.is_dir():
        path = path / "comparison.json"
    return export.read_json(path)
