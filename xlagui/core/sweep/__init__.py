"""Sweeps: many comparisons over a grid of settings, to find where XLA's verdict flips.

`plan.plan_sweep` lays out the grid (`SweepPlan`, its `Cell`s and their budgets); `cell.run_cell`
runs one cell as one comparison (`core.compare.workflow.run`, quick, without the why);
`runner.run_sweep` runs the cells an executor (`CellExecutor`: `LocalExecutor` here, one at a
time) gives it, keeps the folder (`store`: `sweep.json`, resume) and writes the exports
(`export`). The words are `xlagui.present.sweep`'s.
"""

from __future__ import annotations
