"""A sweep's folder: `sweep.json` (the plan and every finished cell, written atomically after
each cell) and `cells/<key>/` (each cell's comparison folder).

Resuming: a folder whose `sweep.json` holds the same plan (`SweepPlan.identity`: the settings
and the axes; the budget may differ) keeps its finished cells, done or failed (`kept`), and only
the missing ones run again: those not run, stopped while running, or failed for want of their
machine. A folder holding another sweep is refused, with what
differs (`SweepMismatch`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.protocol.config import ConfigError
from xlagui.core.sweep.cell import CellFailure, CellResult, CellStatus
from xlagui.core.sweep.plan import SweepPlan, plan_from_dict
from xlagui.core.sweep.result import SweepResult

SWEEP_JSON = "sweep.json"
SWEEP_FORMAT = 1


class SweepMismatch(ConfigError):
    """The folder holds another sweep: `differences` names each setting or axis that differs
    (as "name: before → now")."""

    def __init__(self, folder: Path, differences: list[str]) -> None:
        self.folder, self.differences = folder, differences
        super().__init__(
            f"{folder} holds another sweep ({'; '.join(differences)}): choose another folder, "
            "or run the same sweep to resume it")


def read_sweep(folder: Path) -> dict[str, Any] | None:
    """The folder's `sweep.json` as saved (None: there is none). ConfigError when it cannot be
    read."""
    path = Path(folder) / SWEEP_JSON
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} could not be read: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("plan"), dict):
        raise ConfigError(f"{path} is not a sweep's file")
    return data


def open_sweep(folder: Path) -> SweepResult | None:
    """The sweep kept in `folder` (None: there is none): its plan and every cell it has, as
    the window shows a reopened sweep. ConfigError when it cannot be read."""
    data = read_sweep(folder)
    if data is None:
        return None
    plan = plan_from_dict(data["plan"])
    cells = [c for c in saved_cells(data) if plan.cell(c.key) is not None]
    return SweepResult(plan=plan, cells=cells)


def saved_cells(data: dict[str, Any]) -> list[CellResult]:
    return [CellResult.from_dict(c) for c in data.get("cells", [])]


def kept_cells(folder: Path, plan: SweepPlan) -> list[CellResult]:
    """The finished cells (done or failed) of `plan` already in `folder`, in the plan's order;
    [] for a new folder. SweepMismatch when the folder holds another sweep."""
    data = read_sweep(folder)
    if data is None:
        return []
    differences = plan_differences(data["plan"], plan.identity())
    if differences:
        raise SweepMismatch(Path(folder), differences)
    by_key = {c.key: c for c in saved_cells(data) if kept(c)}
    return [by_key[c.key] for c in plan.cells if c.key in by_key]


def kept(result: CellResult) -> bool:
    """Whether a saved cell stays when its sweep resumes: done, or failed for a reason that
    would fail again (its settings, its worker); not one stopped while it ran, nor one whose
    machine was not there (the host unreachable, the cluster's node lost): it may be now."""
    if result.status == CellStatus.FAILED:
        return result.failure not in (CellFailure.MACHINE, CellFailure.NODE_LOST,
                                      CellFailure.NO_NODE)
    return result.status == CellStatus.DONE


def plan_differences(saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """Each base setting and axis that differs between two plans' identities."""
    out = []
    before, after = saved.get("base", {}), now["base"]
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            out.append(f"{name}: {_short(before.get(name))} → {_short(after.get(name))}")
    axes_before = {a[0]: a[1] for a in saved.get("axes", [])}
    axes_after = {a[0]: a[1] for a in now["axes"]}
    for name in [*axes_before, *(a for a in axes_after if a not in axes_before)]:
        if axes_before.get(name) != axes_after.get(name):
            out.append(f"axis {name}: {_short(axes_before.get(name))} → "
                       f"{_short(axes_after.get(name))}")
    if not out and list(axes_before) != list(axes_after):
        out.append(f"axes order: {', '.join(axes_before)} → {', '.join(axes_after)}")
    return out


def _short(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return json.dumps(value) if isinstance(value, dict) else str(value)


def sweep_dict(plan: SweepPlan, cells: list[CellResult]) -> dict[str, Any]:
    """`sweep.json`'s content: the plan, then every cell in the plan's order with its settings
    beside its result (`cells[*].settings`, `.arms[*]` with `ratio`, `low`, `high`, `arm`,
    `.environment`)."""
    by_key = {c.key: c for c in cells}
    rows = []
    for cell in plan.cells:
        result = by_key.get(cell.key)
        if result is not None:
            rows.append({"settings": dict(cell.settings), "host": cell.host, **result.to_dict()})
    return {"format": SWEEP_FORMAT, "plan": plan.to_dict(), "cells": rows}


def write_sweep(folder: Path, plan: SweepPlan, cells: list[CellResult]) -> Path:
    """`sweep.json`, atomically (a crash leaves the last complete one)."""
    path = Path(folder) / SWEEP_JSON
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(sweep_dict(plan, cells), indent=1) + "\n")
    return path
