"""A comparison: first the interleaved speed measurement (two live workers alternating blocks
of steps, the headline figure), then unless `quick` the training runs: the baseline and the XLA
run, R times each, interleaved (B, X, B, X, ...), for total wall time, accuracy and the curves.

Each run is a fresh worker process; repeat r of every side trains with seed + r - 1 (the
seed-to-seed spread is what an accuracy verdict must clear), the measuring workers with one seed.
After every run the comparison files are rewritten atomically, so a crash or a kill never takes
finished runs with it.

A stop asked for with the reason `CLOSING` (the app is closing: its window, Ctrl+C, SIGTERM) is
recorded as such: the run it cut short is `interrupted`, its finished epochs or pairs kept in its
events, and the runs that never started are `not run`. Any other stop (Stop) leaves them
`cancelled`.
"""

from __future__ import annotations

import dataclasses
import functools
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlagui.core.data.demo import dataset_name
from xlagui.core.data.exclusions import Exclusions, without_recorded
from xlagui.core.measure.children import machine_limits, write_tensorboard_text
from xlagui.core.measure.interleave import MeasureSettings, measure_interleaved
from xlagui.core.measure.runner import RunResult, run_worker, samples_from_scan
from xlagui.core.measure.worker_process import LOCAL, Transport, WorkerProcess
from xlagui.core.model.cnn import expected_parameter_count
from xlagui.core.protocol.arms import BASELINE, CHECK_VARIANT, comparison_arms
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import Event, ModelEvent
from xlagui.core.protocol.record import (
    CANCELLED,
    ERROR,
    FINISHED,
    INTERRUPTED,
    NOT_RUN,
    QUEUED,
    RUNNING,
    RunEntry,
)
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import export
from xlagui.core.results.report import ComparisonReport, MeasurementRecord, host_environment
from xlagui.core.worker import tensorboard as tboard

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan

RunWorker = Callable[[RunSpec, TaskState, Callable[[Event], None]], RunResult]

# The reason (`TaskState.request_interruption`) of a stop because the app is closing.
CLOSING = "closing"


def ended_status(status: str, state: TaskState) -> str:
    """How a run that ended with `status` is recorded: a run cut short because the app is
    closing is `interrupted` (its events keep what it finished), not `cancelled`."""
    closing = state.interruption_reason == CLOSING
    return INTERRUPTED if status == CANCELLED and closing else status


def skipped_status(state: TaskState) -> str:
    """How a run that will not start after a stop is recorded: `not run` when the app is
    closing, `cancelled` after a Stop."""
    return NOT_RUN if state.interruption_reason == CLOSING else CANCELLED


class SaveError(OSError):
    """The comparison ran but its files could not be written (read-only folder, full disk).
    The report in memory is complete; nothing partial was left on disk."""


def check_writable(out_dir: Path) -> None:
    """Fail before any training when the output folder cannot take the files."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out_dir):
            pass
    except OSError as exc:
        raise SaveError(
            f"cannot write to the output folder {out_dir}: {exc.strerror or exc}"
        ) from exc


def _save(report: ComparisonReport, out_dir: Path, errors: list[str]) -> None:
    try:
        export.write_all(report, out_dir)
    except OSError as exc:
        # Keep training: the runs are in memory and the next save may succeed.
        errors.append(f"could not save the comparison to {out_dir}: {exc.strerror or exc}")


def measure_limits(report: ComparisonReport, machine: str = "") -> None:
    """The machine's limits for `report` (`core/machine/peak.py`): cached, or probed once in a short
    process of its own before any worker starts. A failing probe costs the comparison only its
    %-of-peak figures, and says why in the environment. The probe runs on this computer, so a
    comparison measured on another `machine` gets none: this one's peak would be wrong there."""
    if report.limits is not None:
        return
    if machine:
        report.environment["machine_limits_error"] = (
            f"not probed: the comparison ran on {machine}, the probe runs on this computer"
        )
        return
    c = report.config
    try:
        report.limits = machine_limits(c.device, c.image_size, c.batch_size)
    except (
        OSError,
        RuntimeError,
        ValueError,
        KeyError,
        TypeError,
        subprocess.TimeoutExpired,
    ) as exc:
        report.environment["machine_limits_error"] = str(exc)


def plan_runs(config: RunConfig) -> list[RunEntry]:
    """The training runs of a comparison in the order they run: B, X, B, X, ... (none when
    the comparison is `quick`: the interleaved measurement only)."""
    runs: list[RunEntry] = []
    if config.quick:
        return runs
    for repeat in range(1, config.repeats + 1):
        for variant, arm in comparison_arms(config.xla, config.arms):
            index = len(runs) + 1
            runs.append(
                RunEntry(
                    run_id=f"{index:02d}-{variant}-r{repeat}",
                    variant=variant,
                    repeat=repeat,
                    xla_mode=arm.xla.value,
                    precision=arm.precision.value,
                )
            )
    return runs


CHECK = CHECK_VARIANT  # the variant of the A/A check's second baseline worker


def plan_measure_runs(config: RunConfig) -> list[RunEntry]:
    """One measuring worker per arm, the baseline first (`m1-baseline`, `m2-xla`, `m3-bf16`...),
    and with `config.check` an identical second baseline last (`m4-check`), measured like an
    arm."""
    arms = comparison_arms(config.xla, config.arms)
    if config.check:
        arms.append((CHECK, BASELINE))
    return [
        RunEntry(
            run_id=f"m{i}-{variant}",
            variant=variant,
            repeat=1,
            xla_mode=arm.xla.value,
            precision=arm.precision.value,
        )
        for i, (variant, arm) in enumerate(arms, start=1)
    ]


def dataset_info(scan: DatasetScan, demo: bool = False) -> dict[str, Any]:
    return {
        "root": scan.root,
        "name": dataset_name(scan.root, demo),
        "demo": demo,
        "layout": scan.layout,
        "class_names": list(scan.class_names),
        "counts": scan.counts(),
        "fingerprint": scan.fingerprint(),
        "holdout_percent": scan.holdout_percent,
    }


def new_report(
    scan: DatasetScan,
    config: RunConfig,
    *,
    demo: bool = False,
    exclusions: Exclusions | None = None,
    model_check: ModelEvent | None = None,
    environment: dict[str, Any] | None = None,
) -> ComparisonReport:
    """A comparison of `config` on `scan`, less the files `exclusions` leaves out: the
    dataset's counts and fingerprint are those of the files trained on, and `excluded` lists
    the files left out (`run_comparison` leaves out exactly those). `model_check`: the chosen
    model's check (`xlagui.core.model.check`), whose model, with its parameter count, is the
    one recorded; the article's CNN needs none (its count is worked out from the shapes).
    `environment`: the machine it runs on (`host_environment()`, this computer, by default;
    `RemoteHost.environment()` for an SSH host)."""
    chosen = exclusions or Exclusions()
    if model_check is not None:
        config = config.replace(model=model_check.model, image_size=model_check.image_size)
    elif config.model.is_article_cnn and config.model.params is None:
        params = expected_parameter_count(config.image_size, len(scan.class_names))
        config = config.replace(model=dataclasses.replace(config.model, params=params))
    return ComparisonReport(
        model_check=model_check,
        config=config,
        dataset={**dataset_info(chosen.apply(scan), demo), "excluded": chosen.record(scan)},
        runs=plan_runs(config),
        measure_runs=plan_measure_runs(config),
        environment=environment if environment is not None else host_environment(),
    )


def spec_for(
    entry: RunEntry,
    report: ComparisonReport,
    samples: tuple[list[str], list[Sample], list[Sample]],
    out_dir: Path,
    *,
    mode: str = "train",
) -> RunSpec:
    """What the worker of `entry` needs: the comparison's config and samples, its own folder.

    A measuring worker dumps no HLO: its first step is the compile cost and its blocks the
    headline, and a dump made the compile slower (BENCHMARKS.md, "Evidence collection"); the
    XLA training runs dump it, and show what XLA did. Training runs write TensorBoard scalars.
    """
    class_names, train, val = samples
    return RunSpec(
        run_id=entry.run_id,
        variant=entry.variant,
        xla_mode=XlaMode(entry.xla_mode),
        config=_seeded(report.config, entry, mode),
        class_names=class_names,
        train=train,
        val=val,
        run_dir=out_dir / "runs" / entry.run_id,
        repeat=entry.repeat,
        mode=mode,
        precision=entry.precision,
        # Only the short inspection compile dumps: the dump slows a compile by about a second
        # (BENCHMARKS.md, evidence collection), which no timed run should carry.
        xla_dump="text" if mode == "inspect" else "none",
        tensorboard_dir=str(tboard.run_dir(out_dir, entry.run_id)) if mode == "train" else "",
    )


def _seeded(config: RunConfig, entry: RunEntry, mode: str) -> RunConfig:
    """Repeat r of every side trains with seed + r - 1: the repeats then show the seed-to-seed
    spread of training that an accuracy verdict must clear (`xlagui.core.analysis.accuracy`). The
    measuring workers share one seed (their steps and batches must match), except the A/A
    twin, which takes the next: its quick check is then baseline against baseline with
    another seed, a sample of the spread an accuracy claim has to beat."""
    if mode == "train":
        return dataclasses.replace(config, seed=config.seed + entry.repeat - 1)
    if entry.variant == CHECK:
        return dataclasses.replace(config, seed=config.seed + 1)
    return config


def run_measurement(
    report: ComparisonReport,
    scan: DatasetScan,
    out_dir: Path,
    state: TaskState,
    *,
    on_event: Callable[[RunEntry, Event], None] | None = None,
    on_round: Callable[[ComparisonReport], None] | None = None,
    command_for: Callable[[RunSpec], list[str] | None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    transport: Transport = LOCAL,
) -> ComparisonReport:
    """The interleaved speed measurement of `report.measure_runs` (baseline first), every
    worker started through `transport` (this computer, or one SSH host for all of them).

    Keeps every pair that finished whatever happens (a stop, a worker dying, a lost
    connection), records how it ended, recomputes the comparison after every round and writes
    the files at the end.
    """
    samples = samples_from_scan(without_recorded(scan, report.dataset))
    check_writable(out_dir)
    measure_limits(report, transport.machine)
    entries = report.measure_runs
    specs = [spec_for(e, report, samples, out_dir, mode="measure") for e in entries]
    by_id = {e.run_id: e for e in entries}
    for e in entries:
        e.status, e.events = RUNNING, []
    report.measurement = MeasurementRecord()

    def relay(spec: RunSpec, event: Event) -> None:
        entry = by_id[spec.run_id]
        entry.events.append(event)
        if on_event is not None:
            on_event(entry, event)

    def round_done(_seq: int, elapsed: float) -> None:
        assert report.measurement is not None
        report.measurement.measuring_seconds = elapsed
        report.recompute()
        if on_round is not None:
            on_round(report)

    c = report.config
    outcome = measure_interleaved(
        specs,
        state,
        MeasureSettings(budget_seconds=float(c.budget_seconds), target=c.target_percent / 100),
        on_event=relay,
        on_round=round_done,
        command_for=command_for,
        clock=clock,
        start_worker=functools.partial(_start_worker, transport=transport),
    )
    report.measurement = MeasurementRecord(
        stopped_by=outcome.stopped_by,
        measuring_seconds=outcome.measuring_seconds,
        block_steps=outcome.block_steps,
        error=outcome.error.message if outcome.error is not None else "",
        warm_up_order=[entries[i].run_id for i in outcome.warm_up_order or []],
    )
    for e in entries:
        if not e.events:  # its worker never said a word: stopped before it started
            e.status = skipped_status(state)
            continue
        last = e.events[-1].type
        e.status = ended_status(last if last in (FINISHED, ERROR) else CANCELLED, state)
    report.recompute()
    errors: list[str] = []
    _save(report, out_dir, errors)
    if errors:
        raise SaveError(errors[-1])
    return report


def _start_worker(
    spec: RunSpec,
    relay: Callable[[Event], None],
    command: Sequence[str] | None,
    *,
    transport: Transport,
) -> WorkerProcess:
    return WorkerProcess(spec, relay, command=command, transport=transport)


def run_inspection(
    report: ComparisonReport,
    samples: tuple[list[str], list[Sample], list[Sample]],
    out_dir: Path,
    state: TaskState,
    *,
    worker: RunWorker | None = None,
    transport: Transport = LOCAL,
) -> None:
    """For each arm that uses XLA, one short compile with XLA's dump on, in a worker of its own
    outside every timed run (`report.inspect_runs`): what "What XLA did" and `xlagui inspect`
    read (a remote run's dump is copied home when its worker ends). A failure here is recorded
    in the entry and changes no figure."""
    runner = worker or functools.partial(run_worker, transport=transport)
    # One per XLA arm: the measured arms, or the training runs' where nothing was measured
    # (`--only`), each variant once.
    arms = {
        r.variant: r
        for r in (report.measure_runs or report.runs)
        if r.arm.xla is not XlaMode.OFF
    }
    report.inspect_runs = [
        RunEntry(
            run_id=f"i-{variant}",
            variant=variant,
            repeat=1,
            xla_mode=r.xla_mode,
            precision=r.precision,
        )
        for variant, r in arms.items()
    ]
    for entry in report.inspect_runs:
        if state.is_interruption_requested():
            entry.status = skipped_status(state)
            continue
        spec = spec_for(entry, report, samples, out_dir, mode="inspect")
        entry.status, entry.events = RUNNING, []
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
) -> None:
    """A speed-only comparison's "What XLA did": the untimed inspection compile
    (`run_inspection`) after the measurement, whose workers dump nothing. It costs one compile
    per XLA arm (BENCHMARKS.md, "What XLA did after a speed-only comparison"); nothing after a
    stop. Saves the report again."""
    if report.inspect_runs or state.is_interruption_requested():
        return
    samples = samples_from_scan(without_recorded(scan, report.dataset))
    run_inspection(report, samples, out_dir, state, worker=worker, transport=transport)
    report.recompute()
    errors: list[str] = []
    _save(report, out_dir, errors)
    if errors:
        raise SaveError(errors[-1])


def run_comparison(
    report: ComparisonReport,
    scan: DatasetScan,
    out_dir: Path,
    state: TaskState,
    *,
    on_event: Callable[[RunEntry, Event], None] | None = None,
    on_run_start: Callable[[RunEntry], None] | None = None,
    on_run_done: Callable[[RunEntry], None] | None = None,
    only: set[str] | None = None,
    worker: RunWorker | None = None,
    transport: Transport = LOCAL,
    tensorboard_text: Callable[[ComparisonReport], str] | None = None,
) -> ComparisonReport:
    """Run every queued run of `report` in order (or only the variants in `only`), every
    worker started through `transport` (this computer, or the SSH host the measurement ran on).
    `tensorboard_text` words the finished comparison for TensorBoard's text tab
    (`xlagui.present.markdown.summary_markdown`: the core writes no sentences); None: no text.

    Stops after the current run when `state` asks it to; the report keeps every run that
    finished, and the events of the one the stop cut short (`interrupted` when the stop's
    reason is `CLOSING`; the runs not started then are `not run`). Writes `comparison.csv` and
    `comparison.json` to `out_dir` after each run. The files the report's dataset lists as
    excluded are neither trained nor validated on.
    """
    samples = samples_from_scan(without_recorded(scan, report.dataset))
    runner = worker or functools.partial(run_worker, transport=transport)
    check_writable(out_dir)
    measure_limits(report, transport.machine)
    save_errors: list[str] = []
    if worker is None and not report.inspect_runs and not state.is_interruption_requested():
        # Before the training runs, which then run without XLA's dump (a `--quick` comparison
        # has none: its answer should not wait for it).
        run_inspection(report, samples, out_dir, state, transport=transport)
    for entry in report.runs:
        if entry.status != QUEUED or (only is not None and entry.variant not in only):
            continue
        if state.is_interruption_requested():
            entry.status = skipped_status(state)
            continue
        spec = spec_for(entry, report, samples, out_dir)
        entry.status = RUNNING
        entry.events = []
        if on_run_start is not None:
            on_run_start(entry)

        def relay(event: Event, entry: RunEntry = entry) -> None:
            entry.events.append(event)
            if on_event is not None:
                on_event(entry, event)

        result = runner(spec, state, relay)
        entry.status = ended_status(result.status, state)
        report.recompute()
        _save(report, out_dir, save_errors)
        if on_run_done is not None:
            on_run_done(entry)
    for entry in report.runs:
        if entry.status == QUEUED and only is None:
            entry.status = skipped_status(state)
    report.recompute()
    if (tensorboard_text is not None and tboard.has_runs(out_dir)
            and not state.is_interruption_requested()):
        write_tensorboard_text(out_dir, tensorboard_text(report), transport=transport)
    save_errors.clear()
    _save(report, out_dir, save_errors)
    if save_errors:
        raise SaveError(save_errors[-1])
    return report
