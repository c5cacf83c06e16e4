"""The one comparison workflow: `run(request, observer, state)`, every phase in order.

    model check → machine (log in, preflight, dataset copy) → plan → a look at what else
    uses the machine (`preflight`, this computer only) → speed measurement →
    inspection compile → training runs → summary for TensorBoard → saved

The CLI's `compare`, the window's comparison thread and (next) a sweep's cells all call `run`
and only watch (`request.ComparisonObserver`); how a comparison ends is therefore the same
everywhere. A stop (`state`) in any phase ends it promptly: the run in progress is `cancelled`
(`interrupted` when the app is closing, `planning.CLOSING`) with what it finished, every run after
it `cancelled` (`not run` when closing), and the report is saved with them.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

from xlagui.core.compare import phases
from xlagui.core.compare.inputs import trained_scan
from xlagui.core.compare.machine import on_machine
from xlagui.core.compare.planning import (
    SaveError,
    check_writable,
    new_report,
    skipped_status,
)
from xlagui.core.compare.request import ComparisonObserver, ComparisonRequest, Phase
from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.machine.interference import look_at_machine, preflight_seconds
from xlagui.core.measure.transports import MachineError, Transport
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.events import ModelEvent
from xlagui.core.protocol.identity import RunStatus
from xlagui.core.protocol.interference import Preflight
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.results import history
from xlagui.core.results.report import ComparisonReport

log = logging.getLogger(__name__)


def plan(request: ComparisonRequest, environment: dict[str, Any] | None = None) -> ComparisonReport:
    """The report `run` fills, before anything runs: what a watcher shows when it starts.
    `environment`: the machine's (`host_environment()`, this computer, by default; the
    request's `host_info` for an SSH host)."""
    if environment is None and request.host_info is not None:
        environment = request.host_info.environment()
    return new_report(
        request.scan,
        request.config,
        demo=request.demo,
        exclusions=request.exclusions,
        model_check=request.model_check,
        environment=environment,
    )


def run(
    request: ComparisonRequest,
    observer: ComparisonObserver,
    state: TaskState,
    report: ComparisonReport | None = None,
) -> ComparisonReport:
    """Run the comparison of `request`, every phase, telling `observer` as it goes; the final
    report (`report`, when a watcher planned it already with `plan`, filled in).

    Raises `ConfigError` when the request cannot run (a dataset that, less the files left out,
    has too little to train on: `inputs.trained_scan`; a model that cannot be trained, a device
    the host lacks, an output folder that cannot be written), the machine's `MachineError` when
    it refused (said to `observer.on_host_refused` first), `Cancelled` on a stop before any
    worker started (during the model check or the dataset's copy: nothing is saved) and
    `SaveError` when the comparison ran but its files could not be written.
    """
    trained_scan(request.scan, request.exclusions, request.config)  # before anything starts
    planner = _Planner(request, observer, report)
    try:
        with on_machine(request, observer, state, planner) as (report, transport):
            _run_phases(planner.request, report, transport, observer, state)
            write_markdown(request, report)
            keep_in_history(request, report)
            return report
    except (MachineError, ConfigError):
        planner.skip_all(RunStatus.CANCELLED)
        raise
    except Cancelled:
        planner.skip_all(skipped_status(state))
        raise


class _Planner:
    """Plans the comparison once its machine is known (the report's environment is the
    machine's), or takes the plan a watcher made already; marks every run when nothing ran."""

    def __init__(self, request: ComparisonRequest, observer: ComparisonObserver,
                 report: ComparisonReport | None) -> None:
        self.request, self.observer, self.report = request, observer, report

    def __call__(self, environment: dict[str, Any], check: ModelEvent | None
                 ) -> ComparisonReport:
        self.request = dataclasses.replace(self.request, model_check=check)
        out_dir = self.request.out_dir
        try:
            check_writable(out_dir)
        except SaveError as exc:
            raise ConfigError(str(exc)) from None
        if self.report is None:
            self.report = plan(self.request, environment)
        self.observer.on_report_ready(self.report)
        return self.report

    def skip_all(self, status: RunStatus) -> None:
        """Every run not started is recorded as `status` (all of them, when the machine could
        not be made ready)."""
        if self.report is not None:
            for entry in [*self.report.measure_runs, *self.report.runs]:
                if entry.status == RunStatus.QUEUED:
                    entry.status = status


def _run_phases(
    request: ComparisonRequest,
    report: ComparisonReport,
    transport: Transport,
    observer: ComparisonObserver,
    state: TaskState,
) -> None:
    """Measurement, inspection compile, training runs: after a stop each phase only records
    its runs as not run (and saves)."""
    if request.only is None and report.measure_runs:
        if request.target is None:  # over SSH the workers' own readings say it, on the host
            report.preflight = preflight(request.config.busy_percent, observer, state,
                                         request.wait_quiet_seconds)
        _measure(request, report, transport, observer, state)
    stopped = state.is_interruption_requested
    inspecting = request.inspect and request.worker is None and phases.inspected_arms(report)
    if inspecting and not stopped():
        # Untimed, outside every timed run; before the training runs, which then run without
        # XLA's dump. A replayed run (a test's `worker`) has no XLA to inspect. A speed-only
        # comparison has its answer now: said first, the why after it.
        if report.config.quick:
            observer.on_answered(report)
        observer.on_phase(Phase.INSPECTING, report)
        phases.inspect_after_measurement(
            report, request.scan, request.out_dir, state,
            transport=transport, command_for=request.worker_command,
            notes=request.csv_notes,
        )
    if report.runs:
        if not stopped():  # after a stop this only records the runs as not run
            observer.on_phase(Phase.TRAINING, report)
        phases.run_comparison(
            report,
            request.scan,
            request.out_dir,
            state,
            on_event=observer.on_event,
            on_run_start=observer.on_run_started,
            on_run_done=observer.on_run_done,
            only=request.only,
            worker=request.worker,
            transport=transport,
            tensorboard_text=request.summary_text,
            notes=request.csv_notes,
        )


# The comparison as Markdown, in its folder (`write_markdown`).
MARKDOWN_FILE = "comparison.md"


def write_markdown(request: ComparisonRequest, report: ComparisonReport) -> None:
    """`comparison.md` beside the JSON and the CSV (`MARKDOWN_FILE`), worded by the request's
    `report_text`, written atomically; `SaveError` when it could not be."""
    if request.report_text is None:
        return
    try:
        atomic_write_text(request.out_dir / MARKDOWN_FILE,
                          request.report_text(report, request.out_dir))
    except OSError as exc:
        raise SaveError(f"could not write the Markdown: {exc}") from exc


def keep_in_history(request: ComparisonRequest, report: ComparisonReport) -> None:
    """A comparison saved outside History (the command line's `--out`) kept there as well, its
    JSON in a folder of its own: the next comparison of the same settings on this machine is
    checked against it, and the window's History lists it. Its own folder holds everything, so
    History failing to take it loses nothing (it is logged)."""
    root = request.history
    if root is None or request.out_dir.resolve().is_relative_to(root.resolve()):
        return
    if report.comparison is None or report.comparison.interleaved is None:
        return  # nothing measured (`--only`): nothing a later comparison could check against
    try:
        history.save(report, history.new_folder(root))
    except OSError as exc:
        log.warning("could not keep the comparison in History (%s): %s", root, exc)


def preflight(busy_percent: float, observer: ComparisonObserver, state: TaskState,
              wait_limit: float | None, look_seconds: float | None = None,
              clock: Callable[[], float] = time.monotonic) -> Preflight | None:
    """Look at the machine before the measuring workers start (`look_seconds`, by default
    `PREFLIGHT_SECONDS`; 0: no look, None returned). Busy: said to `observer` at once, then,
    with `wait_limit`, looked at again until it is quiet or the limit is spent (a stop ends
    the wait); measuring goes ahead either way, and the answer says if it was disturbed."""
    seconds = preflight_seconds() if look_seconds is None else look_seconds
    if seconds <= 0:
        return None
    start = clock()
    found = Preflight(look=look_at_machine(seconds, busy_percent), wait_limit_seconds=wait_limit)
    while found.busy and wait_limit and clock() - start < wait_limit \
            and not state.is_interruption_requested():
        observer.on_preflight(found, False)
        found = Preflight(look=look_at_machine(seconds, busy_percent),
                          waited_seconds=clock() - start, wait_limit_seconds=wait_limit)
    observer.on_preflight(found, True)
    return found


def _measure(
    request: ComparisonRequest,
    report: ComparisonReport,
    transport: Transport,
    observer: ComparisonObserver,
    state: TaskState,
) -> None:
    observer.on_phase(Phase.MEASURING, report)
    for entry in report.measure_runs:
        observer.on_run_started(entry)
    try:
        phases.run_measurement(
            report,
            request.scan,
            request.out_dir,
            state,
            on_event=observer.on_event,
            on_round=observer.on_round,
            command_for=request.worker_command,
            transport=transport,
            history=request.history,
            notes=request.csv_notes,
        )
    finally:
        for entry in report.measure_runs:
            observer.on_run_done(entry)
        observer.on_measured(report)
