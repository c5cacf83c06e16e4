"""The phases of a comparison that run workers: the interleaved speed measurement (warm workers
alternating blocks of steps, the headline figure), the inspection compile (XLA's dump, outside
every timed run) and the training runs (baseline and XLA, for total wall time, accuracy and the
curves), each a plain function over the report that `workflow.run` calls in order.

Each run is a fresh worker process. After every run the comparison files are rewritten
atomically, so a crash or a kill never takes finished runs with it. A stop (`TaskState`) is
looked at before every worker starts; the run it cuts short and the runs after it are recorded
as `planning.ended_status` and `planning.skipped_status` say.
"""

from __future__ import annotations

import functools
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xlagui.core.compare.planning import (
    check_writable,
    ended_status,
    save,
    save_or_raise,
    skipped_status,
    spec_for,
)
from xlagui.core.data.exclusions import without_recorded
from xlagui.core.measure.children import machine_limits, write_tensorboard_text
from xlagui.core.measure.interleave import (
    MeasureOutcome,
    MeasureSettings,
    measure_interleaved,
    start_process,
)
from xlagui.core.measure.runner import RunResult, run_worker, samples_from_scan
from xlagui.core.measure.transports import LOCAL, Transport
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.identity import Role, RunStatus, StopReason, WorkerMode
from xlagui.core.protocol.record import RunEntry, ended_by
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.results.history import earlier_estimates
from xlagui.core.results.report import ComparisonReport, MeasurementRecord
from xlagui.core.worker import tensorboard as tboard

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.results.export import NoteWords

RunWorker = Callable[[RunSpec, TaskState, Callable[[Event], None]], RunResult]
# The command line that starts a worker for a spec (tests: a fake worker); None: the real one.
CommandLineFor = Callable[[RunSpec], "Sequence[str] | None"]
Samples = tuple[list[str], list[Sample], list[Sample]]



def measure_limits(report: ComparisonReport, transport: Transport = LOCAL,
                   state: TaskState | None = None) -> None:
    """The limits of the machine the comparison runs on (`core/machine/peak.py`): cached for
    that machine, device and TensorFlow, or probed once there, through `transport`, in a short
    child of its own before any worker starts. A failing probe costs the comparison only its
    %-of-peak figures, and says why in the environment. A stop during the probe ends it at
    once: no figure needs it then. A probe on a machine the preflight found busy serves this
    comparison only: it is not cached as the machine's limits."""
    if report.limits is not None:
        return
    c = report.config
    keep = report.preflight is None or not report.preflight.busy
    try:
        report.limits = machine_limits(c.device, c.image_size, c.batch_size,
                                       transport=transport, state=state, keep=keep)
    except Cancelled:
        return
    except (
        OSError,
        RuntimeError,
        ValueError,
        KeyError,
        TypeError,
        subprocess.TimeoutExpired,
    ) as exc:
        report.environment["machine_limits_error"] = str(exc)


def _samples(report: ComparisonReport, scan: DatasetScan) -> Samples:
    """The samples trained on: the scan less the files the report's dataset lists as left out."""
    return samples_from_scan(without_recorded(scan, report.dataset))


def run_measurement(
    report: ComparisonReport,
    scan: DatasetScan,
    out_dir: Path,
    state: TaskState,
    *,
    on_event: Callable[[RunEntry, Event], None] | None = None,
    on_round: Callable[[ComparisonReport], None] | None = None,
    command_for: CommandLineFor | None = None,
    clock: Callable[[], float] = time.monotonic,
    transport: Transport = LOCAL,
    history: Path | None = None,
    notes: NoteWords | None = None,
) -> ComparisonReport:
    """The interleaved speed measurement of `report.measure_runs` (baseline first), every
    worker started through `transport` (this computer, or one SSH host for all of them), then
    checked against `history`'s earlier ones of its settings (`processes.spread`; None: not).

    Keeps every pair that finished whatever happens (a stop, a worker dying, a lost
    connection), records how it ended, recomputes after every round, writes the files at the end.
    """
    samples = _samples(report, scan)
    check_writable(out_dir)
    measure_limits(report, transport, state)
    entries = report.measure_runs
    by_id = _started(report)

    def relay(spec: RunSpec, event: Event) -> None:
        entry = by_id[spec.run_id]
        entry.events.append(event)
        if on_event is not None:
            on_event(entry, event)

    def round_done(_seq: int, elapsed: float, budget: float) -> None:
        assert report.measurement is not None
        report.measurement.measuring_seconds = elapsed
        report.measurement.budget_seconds = budget
        report.recompute()
        if on_round is not None:
            on_round(report)

    c = report.config
    outcome = measure_interleaved(
        [spec_for(e, report, samples, out_dir, mode=WorkerMode.MEASURE) for e in entries],
        state,
        MeasureSettings(budget_seconds=float(c.budget_seconds), target=c.target_percent / 100),
        on_event=relay,
        on_round=round_done,
        command_for=command_for,
        clock=clock,
        start_worker=functools.partial(start_process, transport=transport),
    )
    _record_outcome(report, outcome, state)
    if history is not None and outcome.stopped_by in (StopReason.TARGET, StopReason.BUDGET):
        report.earlier = earlier_estimates(report, history, own=out_dir)
        report.recompute()
    save_or_raise(report, out_dir, notes)
    return report


def _started(report: ComparisonReport) -> dict[str, RunEntry]:
    """The measuring runs marked running, with no events yet and a fresh measurement record;
    by run id."""
    for e in report.measure_runs:
        e.status, e.events = RunStatus.RUNNING, []
    report.measurement = MeasurementRecord()
    return {e.run_id: e for e in report.measure_runs}


def _record_outcome(report: ComparisonReport, outcome: MeasureOutcome, state: TaskState) -> None:
    """How the measurement ended, and each measuring worker's status."""
    entries = report.measure_runs
    report.measurement = MeasurementRecord(
        stopped_by=outcome.stopped_by,
        measuring_seconds=outcome.measuring_seconds,
        setup_seconds=outcome.setup_seconds,
        budget_seconds=outcome.budget_seconds,
        block_steps=outcome.block_steps,
        error=outcome.error.message if outcome.error is not None else "",
        warm_up_order=[entries[i].run_id for i in outcome.warm_up_order or []],
    )
    for e in entries:
        if not e.events:  # its worker never said a word: stopped before it started
            e.status = skipped_status(state)
            continue
        e.status = ended_status(ended_by(e.events[-1]), state)
    report.recompute()


def _runner(worker: RunWorker | None, transport: Transport,
            command_for: CommandLineFor | None) -> RunWorker:
    """`worker` (a test's), else the real runner through `transport`, each worker started with
    `command_for(spec)` (a test's fake worker) or the real command."""
    if worker is not None:
        return worker

    def run(spec: RunSpec, state: TaskState, relay: Callable[[Event], None]) -> RunResult:
        command = command_for(spec) if command_for is not None else None
        return run_worker(spec, state, relay, transport=transport, command=command)

    return run


def inspected_arms(report: ComparisonReport) -> dict[str, RunEntry]:
    """The arms the untimed inspecting worker looks at, by variant, from the measured arms, or
    the training runs' where nothing was measured (`--only`): every arm but the A/A twin when
    the comparison explains why (`RunConfig.explain`: the baseline's profile and parity steps
    are what the others are set beside), else each arm that uses XLA (its dump alone)."""
    explain = report.config.explain
    return {
        r.variant: r
        for r in (report.measure_runs or report.runs)
        if r.role is not Role.CHECK and (explain or r.arm.xla is not XlaMode.OFF)
    }


def run_inspection(
    report: ComparisonReport,
    samples: Samples,
    out_dir: Path,
    state: TaskState,
    *,
    worker: RunWorker | None = None,
    transport: Transport = LOCAL,
    command_for: CommandLineFor | None = None,
) -> None:
    """For each arm that uses XLA, one short compile with XLA's dump on, in a worker of its own
    outside every timed run (`report.inspect_runs`): what "What XLA did" and `xlagui inspect`
    read (a remote run's dump is copied home when its worker ends). A failure here is recorded
    in the entry and changes no figure."""
    runner = _runner(worker, transport, command_for)
    report.inspect_runs = [RunEntry.of_arm(f"i-{variant}", variant, 1, r.arm)
                           for variant, r in inspected_arms(report).items()]
    for entry in report.inspect_runs:
        if state.is_interruption_requested():
            entry.status = skipped_status(state)
            continue
        spec = spec_for(entry, report, samples, out_dir, mode=WorkerMode.INSPECT)
        entry.status, entry.events = RunStatus.RUNNING, []
        result = runner(spec, state, entry.events.append)
        entry.status = ended_status(result.status, state)


def inspect_after_measurement(
    report: ComparisonReport,
    scan: DatasetScan,
    out_dir: Path,
    state: TaskState,
    *,
    worker: RunWorker | None = None,
    transport: Transport = LOCAL,
    command_for: CommandLineFor | None = None,
    notes: NoteWords | None = None,
) -> None:
    """"What XLA did" for a comparison whose measuring workers dumped nothing: the untimed
    inspection compile (`run_inspection`) after the measurement. It costs one compile per XLA
    arm (BENCHMARKS.md, "What XLA did after a speed-only comparison"); nothing after a stop, or
    when it was done already. Saves the report again."""
    if report.inspect_runs or state.is_interruption_requested():
        return
    run_inspection(report, _samples(report, scan), out_dir, state, worker=worker,
                   transport=transport, command_for=command_for)
    report.recompute()
    save_or_raise(report, out_dir, notes)


def run_comparison(
    report: ComparisonReport,
    scan: DatasetScan,
    out_dir: Path,
    state: TaskState,
    *,
    on_event: Callable[[RunEntry, Event], None] | None = None,
    on_run_start: Callable[[RunEntry], None] | None = None,
    on_run_done: Callable[[RunEntry], None] | None = None,
    only: set[str] | frozenset[str] | None = None,
    worker: RunWorker | None = None,
    transport: Transport = LOCAL,
    tensorboard_text: Callable[[ComparisonReport], str] | None = None,
    notes: NoteWords | None = None,
) -> ComparisonReport:
    """Run every queued training run of `report` in order (or only the variants in `only`),
    every worker started through `transport` (this computer, or the SSH host the measurement
    ran on). `tensorboard_text` words the finished comparison for TensorBoard's text tab
    (`xlagui.present.markdown.summary_markdown`: the core writes no sentences); None: no text.

    Stops after the current run when `state` asks it to; the report keeps every run that
    finished, and the events of the one the stop cut short (`interrupted` when the stop's
    reason is `CLOSING`; the runs not started then are `not run`). Writes `comparison.csv` and
    `comparison.json` to `out_dir` after each run. The files the report's dataset lists as
    excluded are neither trained nor validated on. Without a `worker` of a test's, the
    inspection compile (`run_inspection`) runs first unless it ran already.
    """
    samples = _samples(report, scan)
    runner = _runner(worker, transport, None)
    check_writable(out_dir)
    measure_limits(report, transport, state)
    save_errors: list[str] = []
    if worker is None and not report.inspect_runs and not state.is_interruption_requested():
        # Before the training runs, which then run without XLA's dump (a `--quick` comparison
        # has none: its answer should not wait for it).
        run_inspection(report, samples, out_dir, state, transport=transport)
    for entry in report.runs:
        if entry.status != RunStatus.QUEUED or (only is not None and entry.variant not in only):
            continue
        if state.is_interruption_requested():
            entry.status = skipped_status(state)
            continue
        spec = spec_for(entry, report, samples, out_dir)
        _train(entry, spec, state, runner, on_event, on_run_start)
        report.recompute()
        save(report, out_dir, save_errors, notes)
        if on_run_done is not None:
            on_run_done(entry)
    report.recompute()
    _write_summary_text(report, out_dir, state, tensorboard_text, transport)
    save_or_raise(report, out_dir, notes)
    return report


def _train(
    entry: RunEntry,
    spec: RunSpec,
    state: TaskState,
    runner: RunWorker,
    on_event: Callable[[RunEntry, Event], None] | None,
    on_run_start: Callable[[RunEntry], None] | None,
) -> None:
    """One training run, its events kept in `entry` and relayed as they come."""
    entry.status, entry.events = RunStatus.RUNNING, []
    if on_run_start is not None:
        on_run_start(entry)

    def relay(event: Event) -> None:
        entry.events.append(event)
        if on_event is not None:
            on_event(entry, event)

    result = runner(spec, state, relay)
    entry.status = ended_status(result.status, state)


def _write_summary_text(
    report: ComparisonReport,
    out_dir: Path,
    state: TaskState,
    text: Callable[[ComparisonReport], str] | None,
    transport: Transport,
) -> None:
    """The comparison's summary in TensorBoard's text tab, beside the runs' scalars, written on
    the machine that ran them: not after a stop, and a stop while it is written ends the writer
    at once."""
    if text is None or not tboard.has_runs(out_dir) or state.is_interruption_requested():
        return
    write_tensorboard_text(out_dir, text(report), transport=transport, state=state)
