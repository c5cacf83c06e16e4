"""One comparison, start to end: the only room that knows every other.

`workflow.run(request, observer, state)` is the comparison every watcher runs (the CLI, the
window's thread, a sweep's cell): `request` says what to compare and where, `observer` is told
what happens (`request.ComparisonObserver`), `state` is the stop token. Its parts:
`planning` (the runs, their specs, the statuses a stop leaves, the save), `machine` (the model
check, the machine set-up), `phases` (measurement, inspection compile, training runs).
"""

from __future__ import annotations

from xlagui.core.compare.phases import (
    RunWorker,
    inspect_after_measurement,
    measure_limits,
    run_comparison,
    run_inspection,
    run_measurement,
)
from xlagui.core.compare.planning import (
    CHECK,
    CLOSING,
    SaveError,
    check_writable,
    dataset_info,
    ended_status,
    new_report,
    plan_measure_runs,
    plan_runs,
    skipped_status,
    spec_for,
)
from xlagui.core.compare.request import ComparisonObserver, ComparisonRequest, Phase, Watcher
from xlagui.core.compare.workflow import plan, run

__all__ = [
    "CHECK",
    "CLOSING",
    "ComparisonObserver",
    "ComparisonRequest",
    "Phase",
    "RunWorker",
    "SaveError",
    "Watcher",
    "check_writable",
    "dataset_info",
    "ended_status",
    "inspect_after_measurement",
    "measure_limits",
    "new_report",
    "plan",
    "plan_measure_runs",
    "plan_runs",
    "run",
    "run_comparison",
    "run_inspection",
    "run_measurement",
    "skipped_status",
    "spec_for",
]
