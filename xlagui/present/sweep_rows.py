"""What the Sweep tab's table and plot say: column titles, a cell's settings, each arm's
speed-up with its interval, a cell's status and reason. Pure functions of the sweep's plan and
results, so the window and a PNG say the same.

An arm's `ratio` (as everywhere in xlagui) is its step time ÷ the baseline's: below 1 the arm
is faster. People read a speed-up, its inverse, so everything here says that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xlagui.core.sweep.cell import CellStatus
from xlagui.present import format as fmt
from xlagui.present.levels import Level

if TYPE_CHECKING:
    from xlagui.core.sweep.cell import ArmRatio, CellResult
    from xlagui.core.sweep.plan import Axis, Cell, SweepPlan

AXIS_TITLES = {
    "batch_size": "Batch",
    "image_size": "Image size",
    "model": "Model",
    "arms": "Arms",
    "host": "Host",
}
LEVER_PREFIX = "lever:"
STATUS_TITLE, REASON_TITLE = "Status", "Reason"
WAITING, RUNNING = "waiting", "running…"
STATUS_WORDS = {CellStatus.DONE: "done", CellStatus.FAILED: "failed",
                CellStatus.INTERRUPTED: "stopped: runs again on resume"}
SPEEDUP_AXIS = "speed-up (baseline step time ÷ arm's)"


def axis_title(name: str) -> str:
    """A swept axis as a column or plot title: "Batch", "Image size", "threads"."""
    if name.startswith(LEVER_PREFIX):
        return name[len(LEVER_PREFIX):]
    return AXIS_TITLES.get(name, name)


def value_text(axis: str, value: str) -> str:
    """One value of an axis as a cell says it: "64 px" for an image size, else the value."""
    return f"{value} px" if axis == "image_size" else value


def settings_axes(plan: SweepPlan) -> list[Axis]:
    """The axes the table has a column for: every axis of the plan (even one value: a row
    then still says what it measured)."""
    return list(plan.axes)


def swept_axes(plan: SweepPlan) -> list[Axis]:
    """The axes with more than one value: what the plot puts on its axes."""
    return [a for a in plan.axes if len(a.values) > 1]


def setting_texts(plan: SweepPlan, cell: Cell) -> list[str]:
    settings = dict(cell.settings)
    return [value_text(a.name, settings.get(a.name, "")) for a in settings_axes(plan)]


def planned_arms(plan: SweepPlan) -> list[str]:
    """Every arm some cell measures against its baseline, in the order first planned."""
    arms: list[str] = []
    for cell in plan.cells:
        for arm in (cell.config.xla.value, *cell.config.arms):
            if arm not in arms:
                arms.append(arm)
    return arms


def arm_title(arm: str) -> str:
    return f"{arm} speed-up"


def speedup(a: ArmRatio) -> float | None:
    return 1 / a.ratio if a.ratio else None


def speedup_interval(a: ArmRatio) -> tuple[float, float] | None:
    """The speed-up's 95% interval (low, high), or None while there is none."""
    if not a.low or not a.high:
        return None
    return 1 / a.high, 1 / a.low


def arm_text(a: ArmRatio | None) -> str:
    """"1.21× (1.10–1.33)"; "—" for an arm without a ratio."""
    s = speedup(a) if a is not None else None
    if a is None or s is None:
        return fmt.DASH
    interval = speedup_interval(a)
    if interval is None:
        return fmt.ratio(s)
    return f"{fmt.ratio(s)} ({interval[0]:.2f}–{interval[1]:.2f})"


def arm_tooltip(a: ArmRatio) -> str:
    s = speedup(a)
    if s is None:
        return f"{a.arm}: not measured"
    interval = speedup_interval(a)
    low, high = interval if interval is not None else (None, None)
    words = fmt.interval_words(s, low, high)
    note = "" if a.valid else " Not valid: the arm did not run as asked."
    return f"{a.arm}: {words}, from {a.pairs} pairs.{note}"


def verdict_level(a: ArmRatio) -> Level:
    """How the arm's figure is coloured: faster (OK), slower (ERROR), a tie or no interval
    (INFO), not valid (WARNING)."""
    interval = speedup_interval(a)
    if not a.valid:
        return Level.WARNING
    if interval is None or interval[0] <= 1 <= interval[1]:
        return Level.INFO
    return Level.OK if interval[0] > 1 else Level.ERROR


def status_text(result: CellResult) -> str:
    words = STATUS_WORDS.get(result.status, str(result.status))
    if result.attempts > 1:
        words += f" (attempt {result.attempts})"
    return words


def reason_text(result: CellResult) -> str:
    return result.reason


# -- the plot --------------------------------------------------------------------------------

PLOT_AXES_MAX = 2
TOO_MANY_AXES = ("This sweep varies {n} settings: the plot shows one (a line per arm) or two "
                 "(a heatmap); the table has every cell.")
NO_CELLS_YET = "The plot fills as cells finish."


@dataclass(frozen=True)
class ArmSeries:
    """One arm's speed-up along the swept axis: x is the value's position on that axis (NaN
    where a cell has not finished or has no ratio, which leaves a gap)."""

    arm: str
    x: list[float]
    speedup: list[float]
    low: list[float]
    high: list[float]


@dataclass(frozen=True)
class HeatGrid:
    """One arm's speed-up over two swept axes: `values[row][column]`, NaN where unknown;
    rows follow `y_values` (the second axis), columns `x_values` (the first)."""

    arm: str
    x_title: str
    y_title: str
    x_values: list[str]
    y_values: list[str]
    values: list[list[float]]


def _cell_arm(cell_arms: Sequence[ArmRatio], arm: str, arms_swept: bool) -> ArmRatio | None:
    """The cell's ratio for `arm`; where arms are what the sweep varies, a cell measures its
    own arm, which is shown in the arm's place."""
    for a in cell_arms:
        if a.arm == arm:
            return a
    return cell_arms[0] if arms_swept and cell_arms else None


def line_series(plan: SweepPlan, results: Mapping[str, CellResult]) -> list[ArmSeries]:
    """Each arm's speed-up and interval at each value of the one swept axis (at x 0 for a
    sweep of one cell)."""
    swept = swept_axes(plan)
    axis = swept[0] if swept else None
    series = []
    for arm in planned_arms(plan):
        xs, ys, lows, highs = [], [], [], []
        for cell in plan.cells:
            value = dict(cell.settings).get(axis.name, "") if axis is not None else ""
            x = float(axis.values.index(value)) if axis is not None else 0.0
            result = results.get(cell.key)
            a = next((r for r in result.arms if r.arm == arm), None) if result else None
            s = speedup(a) if a is not None else None
            if s is None or a is None:
                continue
            interval = speedup_interval(a) or (s, s)
            xs.append(x)
            ys.append(s)
            lows.append(interval[0])
            highs.append(interval[1])
        series.append(ArmSeries(arm, xs, ys, lows, highs))
    return series


def heat_grid(plan: SweepPlan, results: Mapping[str, CellResult], arm: str) -> HeatGrid:
    """`arm`'s speed-up over the first two swept axes."""
    x_axis, y_axis = swept_axes(plan)[:2]
    arms_swept = "arms" in (x_axis.name, y_axis.name)
    values = [[math.nan] * len(x_axis.values) for _ in y_axis.values]
    for cell in plan.cells:
        settings = dict(cell.settings)
        result = results.get(cell.key)
        a = _cell_arm(result.arms, arm, arms_swept) if result is not None else None
        s = speedup(a) if a is not None else None
        if s is not None:
            row = y_axis.values.index(settings[y_axis.name])
            values[row][x_axis.values.index(settings[x_axis.name])] = s
    return HeatGrid(arm, axis_title(x_axis.name), axis_title(y_axis.name),
                    [value_text(x_axis.name, v) for v in x_axis.values],
                    [value_text(y_axis.name, v) for v in y_axis.values], values)
