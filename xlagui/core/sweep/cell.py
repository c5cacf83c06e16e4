"""One cell of a sweep, run: the one comparison workflow (`core.compare.workflow.run`) at the
cell's settings, in fresh workers of its own, its files in `cells/<key>/` of the sweep folder.

`run_cell` never raises for a cell that failed (a batch larger than the training set, an image
too small for the model, out of memory, a refused flag, a host that cannot be reached): the
cell's result says `failed` with its reason, and the sweep goes on. A stop during the cell makes
it `interrupted`: not kept as done, run again when the sweep resumes.

What crosses to the sweep (and back from a cluster's node) is the `CellResult`: plain data, each
arm's ratio (arm ÷ baseline step time: above 1 the arm is slower) with its 95% interval.
"""

from __future__ import annotations

import platform
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlagui.core.data.exclusions import Exclusions, ProblemKey
from xlagui.core.measure.transports import MachineError, Target
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.identity import RunStatus, StrEnum
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.sweep.plan import Cell

if TYPE_CHECKING:
    from xlagui.core.compare import ComparisonObserver
    from xlagui.core.data.scan import DatasetScan, Problem
    from xlagui.core.protocol.events import ErrorEvent
    from xlagui.core.protocol.spec import RunSpec
    from xlagui.core.results.export import NoteWords
    from xlagui.core.results.report import ComparisonReport

CELLS = "cells"  # the sweep folder's subfolder holding one comparison folder per cell


class CellStatus(StrEnum):
    """How a cell ended."""

    DONE = "done"  # measured: its arms' ratios are kept
    FAILED = "failed"  # could not be measured; `reason` says why
    INTERRUPTED = RunStatus.INTERRUPTED.value  # stopped while it ran: run again on resume


class CellFailure(StrEnum):
    """Why a cell failed, as data (`xlagui.present.sweep` words it); `CellResult.reason`
    holds the facts: the refusal's or the error's own one line, or how the measuring ended."""

    SETTINGS = "settings"  # the cell's settings cannot run (its ConfigError's message)
    MACHINE = "machine"  # its host could not take it (the MachineError's message)
    WORKER = "worker"  # a worker failed (its error event's message; "" when it had none)
    NO_RATIO = "no ratio"  # measured, but no arm has a ratio (how the measurement stopped)
    CRASH = "crash"  # something unforeseen (the exception's type and message)
    NODE_LOST = "node lost"  # a cluster lost its node every time it was tried
    NO_NODE = "no node"  # no node of the cluster has CPUs to run it on
    NODE_OUT_OF_MEMORY = "node out of memory"  # Ray's memory monitor ended its task


@dataclass
class ArmRatio:
    """One arm of a cell against that cell's baseline: `ratio` (arm ÷ baseline step time)
    with its 95% interval `low`..`high`, from `pairs` interleaved pairs; `valid`: the arm
    engaged as asked (an arm that did not is no evidence either way)."""

    arm: str
    ratio: float | None = None
    low: float | None = None
    high: float | None = None
    pairs: int = 0
    valid: bool = True
    # Measured on a busy machine (`ArmResult.busy`): too few undisturbed rounds, so no flip is
    # claimed from it (`flips.verdict_of`).
    busy: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ArmRatio:
        return cls(arm=str(d["arm"]), ratio=_number(d.get("ratio")), low=_number(d.get("low")),
                   high=_number(d.get("high")), pairs=int(d.get("pairs", 0)),
                   valid=bool(d.get("valid", True)), busy=bool(d.get("busy", False)))


@dataclass
class CellResult:
    """How one cell ended. `reason`: why it failed ("" when done); `environment`: the machine
    it ran on (`host_environment`, or the host's); `node`: that machine's name; `attempts`:
    how many times it was started (a cluster reruns a cell whose node was lost, and
    `lost_nodes` names them); `comparison_dir`: its comparison folder, relative to the sweep
    folder."""

    key: str
    status: CellStatus
    reason: str = ""
    failure: str = ""  # a `CellFailure` when it failed
    arms: list[ArmRatio] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    node: str = ""
    attempts: int = 1
    wall_seconds: float = 0.0
    comparison_dir: str = ""
    lost_nodes: list[str] = field(default_factory=list)
    # What else used the machine while the cell measured (`MachineLoad.other_share`; None:
    # not read).
    other_share: float | None = None

    def arm(self, name: str) -> ArmRatio | None:
        return next((a for a in self.arms if a.arm == name), None)

    @property
    def busy(self) -> bool:
        """An arm of the cell was measured on a busy machine."""
        return any(a.busy for a in self.arms)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = str(self.status)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CellResult:
        try:
            return cls(
                key=str(d["key"]), status=CellStatus(d["status"]), reason=str(d.get("reason", "")),
                failure=str(d.get("failure", "")),
                arms=[ArmRatio.from_dict(a) for a in d.get("arms", [])],
                environment=dict(d.get("environment", {})), node=str(d.get("node", "")),
                attempts=int(d.get("attempts", 1)),
                wall_seconds=float(d.get("wall_seconds", 0.0)),
                comparison_dir=str(d.get("comparison_dir", "")),
                lost_nodes=[str(n) for n in d.get("lost_nodes", [])],
                other_share=_number(d.get("other_share")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"a sweep cell could not be read: {exc!r} in {d!r}") from None


def _kinds(problems: Sequence[Problem]) -> str:
    """Problems said by their kinds alone (a job given no words for them)."""
    return "; ".join(p.kind.replace("_", " ") for p in problems)


def _message(event: ErrorEvent) -> str:
    return event.message


@dataclass(frozen=True)
class CellWords:
    """How the front end says what the core returns of a cell as data: the scan's problems
    that refuse its dataset (`problems`), a refusal or a machine's failure (`refusal`), a
    worker's error (`error`), and what its CSV says of its figures (`csv_notes`,
    `ComparisonRequest.csv_notes`). `xlagui.present.sweep.CELL_WORDS` is every front end's;
    without one, kinds and the exceptions' own lines."""

    problems: Callable[[Sequence[Problem]], str] = _kinds
    refusal: Callable[[BaseException], str] = str
    error: Callable[[ErrorEvent], str] = _message
    csv_notes: NoteWords | None = None


@dataclass(frozen=True)
class CellJob:
    """What every cell of a sweep shares besides its settings: the dataset folder (`demo`:
    the demo set, drawn where the cell runs), the sweep folder (the cell's comparison goes to
    `folder/cells/<key>`), how a cell's host is reached (`reach`: a `Target` of no host, which
    each cell's host completes), and, for tests, the measuring workers' command line
    (`ComparisonRequest.worker_command`). Plain data: a cluster sends it to its
    nodes (`dataset` is then the node's copy)."""

    dataset: str
    folder: Path
    demo: bool = False
    reach: Target = field(default_factory=Target)
    worker_command: Callable[[RunSpec], Sequence[str] | None] | None = None
    # The problems whose files the user left out (the Dataset tab's `Exclusions`), their paths
    # relative to the dataset folder (`Exclusions.portable`): no cell trains on those files.
    left_out: tuple[ProblemKey, ...] = ()
    # How the front end words what the core returns of a cell as data (`CellWords`).
    words: CellWords = field(default_factory=CellWords)


# Scans a sweep's cells share (`run_cell(scans=...)`), by folder, held-out share and seed.
Scans = dict[tuple[str, int, int], "DatasetScan"]


def run_cell(cell: Cell, job: CellJob, state: TaskState,
             observer: ComparisonObserver | None = None, scans: Scans | None = None
             ) -> CellResult:
    """Measure `cell` (quick, without the why) in fresh workers; never raises for a cell that
    failed: its result says so. `scans`: the sweep's scans so far, which this cell uses and
    adds to (a sweep scans its folder once, not once per cell)."""
    # The workflow is imported when a cell runs, not with this module: the window's Sweep tab
    # names cells and their results from its first screen, long before one runs.
    from xlagui.core.compare import SaveError, Watcher

    started = time.monotonic()
    out = Path(job.folder) / CELLS / cell.key
    result = CellResult(key=cell.key, status=CellStatus.FAILED, node=cell.host or platform.node(),
                        comparison_dir=f"{CELLS}/{cell.key}")
    try:
        result = _measured(cell, job, out, state, observer or Watcher(), result,
                           {} if scans is None else scans)
    except Cancelled:
        result.status = CellStatus.INTERRUPTED
    except MachineError as exc:
        result.failure, result.reason = CellFailure.MACHINE, job.words.refusal(exc)
    except (ConfigError, SaveError, ValueError) as exc:
        result.failure, result.reason = CellFailure.SETTINGS, job.words.refusal(exc)
    except Exception as exc:  # a cell's crash is its row; the sweep goes on
        result.failure, result.reason = CellFailure.CRASH, f"{type(exc).__name__}: {exc}"
    result.wall_seconds = time.monotonic() - started
    return result


def _measured(cell: Cell, job: CellJob, out: Path, state: TaskState,
              observer: ComparisonObserver, result: CellResult, scans: Scans) -> CellResult:
    from xlagui.core.compare import ComparisonRequest, run

    if cell.problem:
        result.failure, result.reason = CellFailure.SETTINGS, cell.problem
        return result
    state.raise_if_interrupted()
    scan = _scan(job, cell, scans)
    exclusions = Exclusions.under(scan.root, job.left_out).restricted_to(scan)
    if out.exists():  # what an interrupted run of this cell left: measured again from nothing
        shutil.rmtree(out)
    target = None if cell.host is None else replace(job.reach, host=cell.host)
    request = ComparisonRequest(scan=scan, config=cell.config, out_dir=out, demo=job.demo,
                                exclusions=exclusions, target=target, inspect=False,
                                worker_command=job.worker_command,
                                csv_notes=job.words.csv_notes)
    report = run(request, observer, state)
    result.environment = dict(report.environment)
    if state.is_interruption_requested():
        result.status = CellStatus.INTERRUPTED
        return result
    return _judged(report, result, job.words)


def _scan(job: CellJob, cell: Cell, scans: Scans) -> DatasetScan:
    """The cell's scan through the front door (`core.compare.inputs`), shared by every cell of
    the same folder, held-out share and seed."""
    from xlagui.core.compare.inputs import dataset_folder, open_dataset, trainable_problem

    demo = job.demo and not job.dataset  # a sweep of the demo set draws it where it runs
    root = str(dataset_folder(None if demo else job.dataset)[0])
    key = (root, cell.config.holdout_percent, cell.config.seed)
    scan = scans.get(key) or open_dataset(root, holdout_percent=key[1], seed=key[2])
    scans[key] = scan
    why = trainable_problem(scan)
    if why:
        raise ConfigError(f"the dataset cannot be trained on: {job.words.problems(why)}")
    return scan


def _judged(report: ComparisonReport, result: CellResult, words: CellWords) -> CellResult:
    """Done with each arm's ratio; failed with the first failed worker's message, or when no
    arm has a ratio."""
    failed = next((r for r in report.measure_runs if r.status == RunStatus.ERROR), None)
    interleaved = report.comparison.interleaved if report.comparison is not None else None
    arms = [ArmRatio(arm=a.arm, ratio=a.ratio, low=a.low, high=a.high, pairs=a.pairs,
                     valid=a.valid, busy=a.busy) for a in (interleaved.arms if interleaved else [])]
    result.arms = arms
    machine = interleaved.machine if interleaved is not None else None
    result.other_share = machine.other_share if machine is not None else None
    if failed is not None:
        error = failed.error
        result.failure = CellFailure.WORKER
        result.reason = words.error(error) if error is not None else ""
        return result
    if not any(a.ratio is not None for a in arms):
        result.failure = CellFailure.NO_RATIO
        result.reason = interleaved.stopped_by if interleaved is not None else ""
        return result
    result.status = CellStatus.DONE
    return result


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
