"""A finished (or stopped) sweep's files beside its cells: `sweep.json`, `sweep.csv` (one row
per cell and arm, a failed cell one row with its reason) and `sweep.md` (the words of
`xlagui.present.sweep`, given by the caller: the core writes no sentences), each atomic."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path

from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.sweep.result import SweepResult
from xlagui.core.sweep.store import write_sweep

SWEEP_CSV, SWEEP_MD, SWEEP_PNG = "sweep.csv", "sweep.md", "sweep.png"
_RESULT_COLUMNS = ("host", "status", "failure", "reason", "arm", "ratio", "low", "high",
                   "pairs", "valid", "node", "attempts", "wall_seconds", "comparison_dir")


def to_csv(result: SweepResult) -> str:
    """One row per cell and arm: the cell's key and settings (a column per axis), then the
    arm's ratio (arm ÷ baseline step time) with its 95% interval."""
    axes = [a.name for a in result.plan.axes]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["key", *axes, *_RESULT_COLUMNS])
    for cr in result.cells:
        cell = result.plan.cell(cr.key)
        settings = dict(cell.settings) if cell is not None else {}
        host = cell.host if cell is not None and cell.host else ""
        common = [cr.key, *(settings.get(a, "") for a in axes), host, str(cr.status),
                  cr.failure, cr.reason]
        tail = [cr.node, cr.attempts, f"{cr.wall_seconds:.1f}", cr.comparison_dir]
        if not cr.arms:
            writer.writerow([*common, "", "", "", "", "", "", *tail])
        for arm in cr.arms:
            writer.writerow([*common, arm.arm, _figure(arm.ratio), _figure(arm.low),
                             _figure(arm.high), arm.pairs, arm.valid, *tail])
    return out.getvalue()


def write_exports(folder: Path, result: SweepResult,
                  markdown: Callable[[SweepResult], str] | None = None) -> list[Path]:
    """`sweep.json`, `sweep.csv` and (with `markdown`) `sweep.md` in `folder`; the paths."""
    folder = Path(folder)
    paths = [write_sweep(folder, result.plan, result.cells)]
    atomic_write_text(folder / SWEEP_CSV, to_csv(result))
    paths.append(folder / SWEEP_CSV)
    if markdown is not None:
        atomic_write_text(folder / SWEEP_MD, markdown(result))
        paths.append(folder / SWEEP_MD)
    return paths


def _figure(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"
