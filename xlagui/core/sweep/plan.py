"""A sweep's plan: the grid of cells (the Cartesian product of its axes) and their budgets.

An axis is one setting swept over values (`Axis`): the batch size, the image size, the model,
the arms measured, the SSH host, or a runtime setting every worker of the cell takes
(`lever:<name>`, `RunConfig.levers`). A cell is one interleaved speed comparison (`--quick`
semantics, without the why) at one value of every axis. A cell whose settings cannot run (an
image too small for its model, a model file that is not there) is still planned, with its
`problem`: it becomes a failed row with that reason, and the sweep goes on.

The whole sweep has one budget (`total_budget_seconds`): each cell's speed budget is planned
from it, after each cell's fixed cost (starting its workers, warming them up:
`CELL_OVERHEAD_SECONDS`), so the plan says before anything starts how long it will take.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xlagui.core.model.sources import parse_model
from xlagui.core.protocol.arms import (
    Arm,
    check_backends_here,
    default_budget,
    parse_arm,
    parse_arms,
    shared_levers,
)
from xlagui.core.protocol.config import RANGES, SETTINGS, ConfigError, RunConfig, XlaMode
from xlagui.core.protocol.levers import BACKEND, TF_BACKEND

BATCH_SIZE, IMAGE_SIZE, MODEL, ARMS, HOST = "batch_size", "image_size", "model", "arms", "host"
# The settings a sweep may vary (their entries in the settings table say `sweep`), then the
# axes of other kinds; plus "lever:<name>" (RunConfig.levers).
SETTING_AXES = tuple(one.name for one in SETTINGS if one.sweep)
AXES = (*SETTING_AXES, MODEL, ARMS, HOST)
LEVER_PREFIX = "lever:"
# The host axis's value for this computer (`Cell.host` None): `--host local,gpu-box`.
LOCAL_HOST = "local"
# What a cell costs besides its speed budget: two or more workers importing TensorFlow, the
# model built and compiled in each, the warm-up. Measured on this 2-core machine at 48-64 px
# (bench/); a larger model or image takes longer, which the ETA learns from the cells done.
CELL_OVERHEAD_SECONDS = 40
# The short names in a cell's key ("b16-px64-jit"), one per axis: a setting's from its entry.
_KEY_NAMES = {**{one.name: one.key or f"{one.name}-" for one in SETTINGS if one.sweep},
              MODEL: "", ARMS: "", HOST: "on-"}


@dataclass(frozen=True)
class Axis:
    """One swept setting: `name` (one of `AXES`, or `lever:<name>`) and its values, as typed
    (canonical: `arms` values are comma lists of canonical arm names)."""

    name: str
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.name not in AXES and not is_lever_axis(self.name):
            raise ConfigError(
                f"unknown sweep axis {self.name!r}: the axes are {', '.join(AXES)} and "
                f"{LEVER_PREFIX}<name>")
        values = tuple(str(v).strip() for v in self.values)
        if not values or any(not v for v in values):
            raise ConfigError(f"the sweep axis {self.name} needs at least one value, none empty")
        if len(set(values)) != len(values):
            raise ConfigError(f"the sweep axis {self.name} names a value twice: {values}")
        object.__setattr__(self, "values", values)


def is_lever_axis(name: str) -> bool:
    return name.startswith(LEVER_PREFIX) and len(name) > len(LEVER_PREFIX)


@dataclass(frozen=True)
class Cell:
    """One comparison of the sweep. `key`: stable and file-safe, from its settings (its folder
    is `cells/<key>`); `settings`: (axis name, value) in the plan's axis order; `config`: what
    it runs (quick, without the why, its budget); `host`: the SSH host (None: where it runs);
    `problem`: why it cannot run ("": it can), found when planned."""

    key: str
    settings: tuple[tuple[str, str], ...]
    config: RunConfig
    host: str | None = None
    problem: str = ""

    def setting(self, axis: str) -> str | None:
        return dict(self.settings).get(axis)

    def to_dict(self) -> dict[str, Any]:
        return {"key": self.key, "settings": dict(self.settings), "host": self.host,
                "problem": self.problem, "config": self.config.to_dict()}


@dataclass(frozen=True)
class SweepPlan:
    """The grid: the base settings, the axes, every cell, and the budgets. `expected_seconds`
    is the wall time the plan expects (each cell's budget and its fixed cost)."""

    base: RunConfig
    axes: tuple[Axis, ...]
    cells: tuple[Cell, ...]
    total_budget_seconds: int
    cell_budget_seconds: int

    @property
    def expected_seconds(self) -> int:
        return len(self.cells) * (self.cell_budget_seconds + CELL_OVERHEAD_SECONDS)

    @property
    def swept(self) -> tuple[Axis, ...]:
        """The axes with more than one value: what the sentences walk along."""
        return tuple(a for a in self.axes if len(a.values) > 1)

    def cell(self, key: str) -> Cell | None:
        return next((c for c in self.cells if c.key == key), None)

    def identity(self) -> dict[str, Any]:
        """What makes two plans the same sweep (a folder resumes only the same one): the base
        settings without the budget, and the axes. The budget may change between runs."""
        base = self.base.to_dict()
        base.pop("budget_seconds", None)
        return {"base": base, "axes": [[a.name, list(a.values)] for a in self.axes]}

    def to_dict(self) -> dict[str, Any]:
        return {**self.identity(), "total_budget_seconds": self.total_budget_seconds,
                "cell_budget_seconds": self.cell_budget_seconds,
                "expected_seconds": self.expected_seconds,
                "cells": [c.to_dict() for c in self.cells]}


def plan_sweep(base: RunConfig, axes: Sequence[Axis], total_budget_seconds: int | None
               ) -> SweepPlan:
    """The grid of `axes` over `base`; each cell's budget from the sweep's (None: each cell the
    default speed budget of its arms). ConfigError for axes named twice, a runtime setting
    (`lever:<name>`) that is not one or a value it refuses, or a budget too small for the cells
    (the message says the least that fits)."""
    axes = tuple(axes)
    names = [a.name for a in axes]
    if len(set(names)) != len(names):
        raise ConfigError(f"a sweep axis is named twice: {', '.join(names)}")
    axes = tuple(_canonical(a) for a in axes)
    grid = list(itertools.product(*(a.values for a in axes))) if axes else [()]
    cell_budget = _cell_budget(base, axes, len(grid), total_budget_seconds)
    base = dataclasses.replace(base, quick=True, explain=False, budget_seconds=cell_budget)
    cells = tuple(_cell(base, tuple(zip(names, values, strict=True))) for values in grid)
    total = (total_budget_seconds if total_budget_seconds is not None
             else len(cells) * (cell_budget + CELL_OVERHEAD_SECONDS))
    return SweepPlan(base=base, axes=axes, cells=cells, total_budget_seconds=total,
                     cell_budget_seconds=cell_budget)


def plan_from_dict(data: dict[str, Any]) -> SweepPlan:
    """A saved plan (`SweepPlan.to_dict`, in `sweep.json`) planned again: the same cells, keys
    and budgets. ConfigError when it cannot be read."""
    try:
        base = RunConfig.from_dict({**data["base"], "budget_seconds": data["cell_budget_seconds"]})
        axes = [Axis(str(name), tuple(values)) for name, values in data["axes"]]
        total = int(data["total_budget_seconds"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"a sweep's plan could not be read: {exc!r}") from None
    return plan_sweep(base, axes, total)


def _canonical(axis: Axis) -> Axis:
    """Values as the plan keeps them: arm lists by their canonical names (`JIT, bf16` →
    `jit,bf16`), so the same sweep typed twice is the same plan."""
    if axis.name == ARMS:
        return Axis(ARMS, tuple(",".join(parse_arms([v])) or "jit" for v in axis.values))
    if is_lever_axis(axis.name):  # a lever that is not one, or a value it refuses: ConfigError
        name = axis.name[len(LEVER_PREFIX):]
        if name == BACKEND.name:
            return Axis(axis.name, tuple(_backend_value(v) for v in axis.values))
        return Axis(axis.name, tuple(shared_levers({name: v})[name] for v in axis.values))
    return axis


def _backend_value(text: str) -> str:
    """A value of the backend axis as the lever stores it ("tf", "jax"; "tensorflow" too)."""
    word = text.strip().lower()
    word = TF_BACKEND if word == "tensorflow" else word
    try:
        return BACKEND.of(word).value
    except ValueError:
        raise ConfigError(f"backend takes {', '.join(v.value for v in BACKEND.values)}, "
                          f"got {text!r}") from None


def _cell_budget(base: RunConfig, axes: tuple[Axis, ...], cells: int, total: int | None) -> int:
    budgets = RANGES["budget_seconds"]
    if total is None:
        arm_lists = next((a.values for a in axes if a.name == ARMS), (",".join(base.arms),))
        return max(default_budget(*arms_config(v)) for v in arm_lists)
    per_cell = total // cells - CELL_OVERHEAD_SECONDS
    if per_cell < budgets.low:
        least = cells * (budgets.low + CELL_OVERHEAD_SECONDS)
        raise ConfigError(
            f"a sweep budget of {total} s is too small for {cells} cells: each needs about "
            f"{CELL_OVERHEAD_SECONDS} s to start and at least {budgets.low} s of measuring, so "
            f"give at least {least} s (or fewer cells)")
    return min(per_cell, budgets.high)


def arms_config(value: str) -> tuple[XlaMode, tuple[str, ...]]:
    """The XLA side and the other arms of a comparison measuring the arms of `value` (a comma
    list): the first arm that changes only the XLA mode is the XLA side (`jit` when none does,
    which is then measured too: every comparison has an XLA side)."""
    arms = parse_arms([value])
    xla = XlaMode.JIT
    for name in arms:
        arm = parse_arm(name)
        if arm.xla.asks_for_xla and len(arm.changes) == 1:
            xla = arm.xla
            break
    return xla, arms


def _cell(base: RunConfig, settings: tuple[tuple[str, str], ...]) -> Cell:
    """The cell at `settings`; one that cannot run keeps `base` as its config, with why."""
    key = cell_key(settings)
    host = next((v for n, v in settings if n == HOST), None)
    host = None if host in (None, LOCAL_HOST) else host
    try:
        config = _configured(base, settings)
        if host is None:  # an arm on a backend this Python lacks: the cell says so, untried
            check_backends_here(config, config.arms)
    except ConfigError as exc:
        return Cell(key=key, settings=settings, config=base, host=host, problem=str(exc))
    return Cell(key=key, settings=settings, config=config, host=host)


def _configured(base: RunConfig, settings: tuple[tuple[str, str], ...]) -> RunConfig:
    changes: dict[str, Any] = {}
    levers: dict[str, str] = {}
    backend_arm = Arm()
    for name, value in settings:
        if name in SETTING_AXES:  # its range: RunConfig's check below
            changes[name] = _whole(name, value)
        elif name == MODEL:
            changes["model"] = parse_model(value, base.model.new_head)
        elif name == ARMS:
            changes["xla"], changes["arms"] = arms_config(value)
        elif name == LEVER_PREFIX + BACKEND.name:
            # Not every worker's (the baseline is TensorFlow's, XLA off): the cell measures the
            # backend's arm beside TF+XLA and the baseline ("tf": those two alone).
            backend_arm = Arm(backend=value)
        elif is_lever_axis(name):
            levers[name[len(LEVER_PREFIX):]] = value
    if not backend_arm.is_baseline:
        changes["arms"] = (*changes.get("arms", base.arms), backend_arm.name)
    if levers:
        changes["levers"] = {**base.levers, **levers}
    # `replace` runs RunConfig's checks on the whole: an image too small for the model, a
    # lever value the registry refuses.
    return dataclasses.replace(base, **changes)


def _whole(axis: str, value: str) -> int:
    try:
        return int(value, 10)
    except ValueError:
        raise ConfigError(f"{axis} takes whole numbers, got {value!r}") from None


def cell_key(settings: tuple[tuple[str, str], ...]) -> str:
    """A stable, file-safe name for the cell at `settings` ("b16-px64-cnn-jit_bf16"): readable
    where the values are, with a short hash of the settings when making a value file-safe
    changed it (a model file's path, an XLA flag) or the name grew long."""
    parts, changed = [], False
    for name, value in settings:
        short = _KEY_NAMES.get(name, name[len(LEVER_PREFIX):] + "-")
        listed = value.replace(",", "_")  # arm lists: "jit,bf16" → "jit_bf16"
        safe = re.sub(r"[^A-Za-z0-9._+-]+", "_", listed)
        changed |= safe != listed
        parts.append(f"{short}{safe}")
    key = "-".join(parts) or "cell"
    if changed or len(key) > 80:
        digest = hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:8]
        key = f"{key[:70]}-{digest}"
    return key
