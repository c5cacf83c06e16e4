"""What the Sweep tab's table and plot say: column titles, a cell's settings, each arm's
speed-up with its interval, a cell's status and reason. Pure functions of the sweep's plan and
results, so the window and a PNG say the same.

An arm's `ratio` (as everywhere in xlagui) is its step time ÷ the baseline's: below 1 the arm
is faster. People read a speed-up, its inverse, so everything here says that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xlagui.core.protocol.settings import SETTING
from xlagui.core.sweep.flips import Verdict, sorted_values, verdict_of
from xlagui.core.sweep.plan import ARMS, arms_config
from xlagui.present import format as fmt
from xlagui.present.intervals import pairs_noun
from xlagui.present.levels import Level
from xlagui.present.sweep import axis_noun, value_words

if TYPE_CHECKING:
    from xlagui.core.sweep.cell import ArmRatio, CellResult
    from xlagui.core.sweep.plan import Axis, SweepPlan

SPEEDUP_AXIS = "speed-up (baseline step time ÷ arm's)"
# How an arm's figure in a cell is coloured, by its verdict there.
VERDICT_LEVELS = {Verdict.FASTER: Level.OK, Verdict.SLOWER: Level.ERROR,
                  Verdict.TIES: Level.INFO, Verdict.UNKNOWN: Level.WARNING,
                  Verdict.BUSY: Level.WARNING}
WAITING, RUNNING = "to run", "running…"
STATUS_TITLE, REASON_TITLE = "status", "reason"


def tick_text(axis: str, value: str) -> str:
    """One value of an axis under a plot, its axis named beside it: "16", "64 px" (a setting's
    value with its entry's unit)."""
    one = SETTING.get(axis)
    return f"{value}{one.unit}" if one is not None and one.sweep else value


def swept_axes(plan: SweepPlan) -> list[Axis]:
    """The axes with more than one value: what the plot puts on its axes."""
    return list(plan.swept)


def planned_arms(plan: SweepPlan) -> list[str]:
    """Every arm some cell measures against its baseline, in the order first planned."""
    arms: list[str] = []
    for cell in plan.cells:
        for arm in arms_config(",".join((cell.config.xla.value, *cell.config.arms)))[1]:
            if arm not in arms:
                arms.append(arm)
    return arms


def speedup(a: ArmRatio) -> float | None:
    return 1 / a.ratio if a.ratio else None


def speedup_interval(a: ArmRatio) -> tuple[float, float] | None:
    """The speed-up's 95% interval (low, high), or None while there is none."""
    if not a.low or not a.high:
        return None
    return 1 / a.high, 1 / a.low


def arm_tooltip(a: ArmRatio) -> str:
    s = speedup(a)
    if s is None:
        return f"{a.arm}: not measured"
    interval = speedup_interval(a)
    low, high = interval if interval is not None else (None, None)
    note = "" if a.valid else " Not valid: the arm did not run as asked."
    return (f"{a.arm}: {fmt.interval_words(s, low, high)}, from {a.pairs} "
            f"{pairs_noun(a.pairs)}.{note}")


def verdict_level(result: CellResult, arm: str) -> Level:
    return VERDICT_LEVELS[verdict_of(result, arm)]


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
    # The points measured on a busy machine (x, speed-up), drawn apart.
    busy_x: list[float] = field(default_factory=list)
    busy_speedup: list[float] = field(default_factory=list)


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
    order = sorted_values(axis) if axis is not None else ()
    series = []
    for arm in planned_arms(plan):
        xs, ys, lows, highs, busy_x, busy_y = [], [], [], [], [], []
        for cell in plan.cells:
            value = dict(cell.settings).get(axis.name, "") if axis is not None else ""
            x = float(order.index(value)) if axis is not None else 0.0
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
            if a.busy:
                busy_x.append(x)
                busy_y.append(s)
        series.append(ArmSeries(arm, xs, ys, lows, highs, busy_x, busy_y))
    return series


def heat_grid(plan: SweepPlan, results: Mapping[str, CellResult], arm: str) -> HeatGrid:
    """`arm`'s speed-up over the first two swept axes."""
    x_axis, y_axis = swept_axes(plan)[:2]
    xs, ys = sorted_values(x_axis), sorted_values(y_axis)
    arms_swept = ARMS in (x_axis.name, y_axis.name)
    values = [[math.nan] * len(xs) for _ in ys]
    for cell in plan.cells:
        settings = dict(cell.settings)
        result = results.get(cell.key)
        a = _cell_arm(result.arms, arm, arms_swept) if result is not None else None
        s = speedup(a) if a is not None else None
        if s is not None:
            values[ys.index(settings[y_axis.name])][xs.index(settings[x_axis.name])] = s
    return HeatGrid(arm, axis_noun(x_axis.name), axis_noun(y_axis.name),
                    [value_words(x_axis.name, v) for v in xs],
                    [value_words(y_axis.name, v) for v in ys], values)
