"""What a comparison will run, and how its runs are recorded: the plan (`new_report`: the
training runs, the measuring workers, the dataset block), each worker's spec (`spec_for`), the
statuses a stop leaves, and the atomic save.

The training runs are the baseline and the XLA run, R times each, interleaved (B, X, B, X, ...);
repeat r of every side trains with seed + r - 1 (the seed-to-seed spread is what an accuracy
verdict must clear), the measuring workers with one seed.

A stop asked for with the reason `CLOSING` (the app is closing: its window, Ctrl+C, SIGTERM) is
recorded as such: the run it cut short is `interrupted`, its finished epochs or pairs kept in its
events, and the runs that never started are `not run`. Any other stop (Stop) leaves them
`cancelled`.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlagui.core.data.demo import dataset_name
from xlagui.core.data.exclusions import Exclusions
from xlagui.core.machine.environment import host_environment
from xlagui.core.model.cnn import expected_parameter_count
from xlagui.core.protocol.arms import BASELINE, comparison_arms, record_fields
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.core.protocol.identity import DumpChoice, Role, RunStatus, WorkerMode
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec, Sample
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import export
from xlagui.core.results.report import ComparisonReport
from xlagui.core.worker import tensorboard as tboard

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan

# The reason (`TaskState.request_interruption`) of a stop because the app is closing.
CLOSING = "closing"


def ended_status(status: RunStatus, state: TaskState) -> RunStatus:
    """How a run that ended with `status` is recorded: a run cut short because the app is
    closing is `interrupted` (its events keep what it finished), not `cancelled`."""
    closing = state.interruption_reason == CLOSING
    status = RunStatus(status)
    return RunStatus.INTERRUPTED if status is RunStatus.CANCELLED and closing else status


def skipped_status(state: TaskState) -> RunStatus:
    """How a run that will not start after a stop is recorded: `not run` when the app is
    closing, `cancelled` after a Stop."""
    return RunStatus.NOT_RUN if state.interruption_reason == CLOSING else RunStatus.CANCELLED


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


def save(report: ComparisonReport, out_dir: Path, errors: list[str],
         notes: export.NoteWords | None = None) -> None:
    """Write the comparison's files (the CSV's notes worded by `notes`); a failure is appended
    to `errors`, not raised."""
    try:
        export.write_all(report, out_dir, notes)
    except OSError as exc:
        # Keep training: the runs are in memory and the next save may succeed.
        errors.append(f"could not save the comparison to {out_dir}: {exc.strerror or exc}")


def save_or_raise(report: ComparisonReport, out_dir: Path,
                  notes: export.NoteWords | None = None) -> None:
    """Write the comparison's files; `SaveError` when they could not be written."""
    errors: list[str] = []
    save(report, out_dir, errors, notes)
    if errors:
        raise SaveError(errors[-1])


def plan_runs(config: RunConfig) -> list[RunEntry]:
    """The training runs of a comparison in the order they run: B, X, B, X, ... (none when
    the comparison is `quick`: the interleaved measurement only)."""
    runs: list[RunEntry] = []
    if config.quick:
        return runs
    for repeat in range(1, config.repeats + 1):
        for variant, arm in comparison_arms(config.xla, config.arms):
            index = len(runs) + 1
            runs.append(RunEntry.of_arm(f"{index:02d}-{variant}-r{repeat}", variant, repeat, arm))
    return runs


CHECK = Role.CHECK  # the variant of the A/A check's second baseline worker


def plan_measure_runs(config: RunConfig) -> list[RunEntry]:
    """One measuring worker per arm, the baseline first (`m1-baseline`, `m2-xla`, `m3-bf16`...),
    and with `config.check` an identical second baseline last (`m4-check`), measured like an
    arm."""
    arms = comparison_arms(config.xla, config.arms)
    if config.check:
        arms.append((CHECK, BASELINE))
    return [RunEntry.of_arm(f"m{i}-{variant}", variant, 1, arm)
            for i, (variant, arm) in enumerate(arms, start=1)]


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
    `Transport.environment()` for another machine)."""
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
    mode: WorkerMode = WorkerMode.TRAIN,
) -> RunSpec:
    """What the worker of `entry` needs: the comparison's config and samples, its own folder.

    A measuring worker dumps no HLO: its first step is the compile cost and its blocks the
    headline, and a dump made the compile slower (BENCHMARKS.md, "Evidence collection"); the
    XLA training runs dump it, and show what XLA did. Training runs write TensorBoard scalars.
    """
    class_names, train, val = samples
    mode = WorkerMode(mode)
    return RunSpec(
        run_id=entry.run_id,
        variant=entry.variant,
        config=_seeded(report.config, entry, mode),
        class_names=class_names,
        train=train,
        val=val,
        run_dir=out_dir / "runs" / entry.run_id,
        repeat=entry.repeat,
        mode=mode,
        **record_fields(entry.arm),  # every lever's value
        # Only the short inspection compile dumps: the dump slows a compile by about a second
        # (BENCHMARKS.md, evidence collection), which no timed run should carry.
        xla_dump=DumpChoice.TEXT if mode is WorkerMode.INSPECT else DumpChoice.NONE,
        tensorboard_dir=(str(tboard.run_dir(out_dir, entry.run_id)) if mode is WorkerMode.TRAIN
                         else ""),
    )


def _seeded(config: RunConfig, entry: RunEntry, mode: WorkerMode) -> RunConfig:
    """Repeat r of every side trains with seed + r - 1: the repeats then show the seed-to-seed
    spread of training that an accuracy verdict must clear (`xlagui.core.analysis.accuracy`). The
    measuring workers share one seed (their steps and batches must match), except the A/A
    twin, which takes the next: its quick check is then baseline against baseline with
    another seed, a sample of the spread an accuracy claim has to beat."""
    if mode is WorkerMode.TRAIN:
        return dataclasses.replace(config, seed=config.seed + entry.repeat - 1)
    if entry.role is Role.CHECK:
        return dataclasses.replace(config, seed=config.seed + 1)
    return config


