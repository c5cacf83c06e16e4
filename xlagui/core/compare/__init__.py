"""One comparison, start to end: the only room that knows every other.

`workflow.run(request, observer, state)` is the comparison every watcher runs (the CLI, the
window's thread, a sweep's cell): `request` says what to compare and where, `observer` is told
what happens (`request.ComparisonObserver`), `state` is the stop token. Its parts:
`planning` (the runs, their specs, the statuses a stop leaves, the save), `machine` (the model
check, the machine set-up), `phases` (measurement, inspection compile, training runs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.compare.request import ComparisonObserver, ComparisonRequest, Phase, Watcher

if TYPE_CHECKING:
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
    from xlagui.core.compare.workflow import plan, run

# The workflow's parts, imported when a name is first asked for (PEP 562): the request and
# its observer are light, and a front end that only names them (the window's first screen, a
# sweep's plan) starts without the measuring and saving they bring.
_LAZY: dict[str, str] = {
    "RunWorker": "xlagui.core.compare.phases",
    "inspect_after_measurement": "xlagui.core.compare.phases",
    "measure_limits": "xlagui.core.compare.phases",
    "run_comparison": "xlagui.core.compare.phases",
    "run_inspection": "xlagui.core.compare.phases",
    "run_measurement": "xlagui.core.compare.phases",
    "CHECK": "xlagui.core.compare.planning",
    "CLOSING": "xlagui.core.compare.planning",
    "SaveError": "xlagui.core.compare.planning",
    "check_writable": "xlagui.core.compare.planning",
    "dataset_info": "xlagui.core.compare.planning",
    "ended_status": "xlagui.core.compare.planning",
    "new_report": "xlagui.core.compare.planning",
    "plan_measure_runs": "xlagui.core.compare.planning",
    "plan_runs": "xlagui.core.compare.planning",
    "skipped_status": "xlagui.core.compare.planning",
    "spec_for": "xlagui.core.compare.planning",
    "plan": "xlagui.core.compare.workflow",
    "run": "xlagui.core.compare.workflow",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once
    return value


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
