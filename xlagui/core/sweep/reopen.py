"""A sweep folder read back: its plan and the cells it holds (the window's "Open a sweep…").

The plan is planned again from what `sweep.json` saved (the base settings, the axes, the
budget): the same grid, cell keys and budgets as when it ran, so a run into that folder resumes
it.
"""

from __future__ import annotations

from pathlib import Path

from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.sweep.cell import CellResult
from xlagui.core.sweep.plan import Axis, SweepPlan, plan_sweep
from xlagui.core.sweep.store import SWEEP_JSON, read_sweep, saved_cells


def open_sweep(folder: Path) -> tuple[SweepPlan, list[CellResult]]:
    """The plan of the sweep in `folder` and its saved cells (interrupted ones included, as
    saved). ConfigError when the folder holds no sweep or one this version cannot read."""
    data = read_sweep(folder)
    if data is None:
        raise ConfigError(f"{Path(folder) / SWEEP_JSON} does not exist: not a sweep folder")
    saved = data["plan"]
    try:
        base = RunConfig.from_dict(dict(saved["base"]))
        axes = [Axis(str(a[0]), tuple(str(v) for v in a[1])) for a in saved["axes"]]
        plan = plan_sweep(base, axes, int(saved["total_budget_seconds"]))
        cells = saved_cells(data)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ConfigError(f"{Path(folder) / SWEEP_JSON} cannot be read: {exc!r}") from None
    return plan, cells
