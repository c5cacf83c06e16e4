"""What the one comparison workflow (`workflow.run`) takes besides its stop token: the request
(what to compare, where) and the observer (who watches it: the CLI's console, the window's
thread, a sweep's cell, a test).

The observer is told everything a watcher shows, in the order it happens and on the thread that
called `run`; it never changes the report (the watcher renders it, the workflow writes it). A
watcher that needs only some callbacks subclasses `Watcher`, whose callbacks do nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from xlagui.core.protocol.arms import check_backends_here
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.identity import StrEnum

if TYPE_CHECKING:
    from xlagui.core.compare.phases import RunWorker
    from xlagui.core.data.exclusions import Exclusions
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.machine.host import HostInfo
    from xlagui.core.measure.transports import MachineError, PlacedDataset, Target
    from xlagui.core.protocol.events import Event, ModelEvent
    from xlagui.core.protocol.interference import Preflight
    from xlagui.core.protocol.record import RunEntry
    from xlagui.core.protocol.spec import RunSpec
    from xlagui.core.results.export import NoteWords
    from xlagui.core.results.report import ComparisonReport


class Phase(StrEnum):
    """Where a comparison is, in the order the phases come (each only when it has work)."""

    CONNECTING = "connecting"  # logging in to the host (and its preflight, when not known)
    CHECKING_MODEL = "checking model"  # building the chosen model once, on the machine
    COPYING = "copying"  # the dataset onto the host
    MEASURING = "measuring"  # the interleaved speed measurement: starting, warm-up, rounds
    INSPECTING = "inspecting"  # the untimed compile with XLA's dump, for "What XLA did"
    TRAINING = "training"  # the training runs, then the summary for TensorBoard


@dataclass(frozen=True)
class ComparisonRequest:
    """One comparison to run: the dataset and settings, where its files go, and the machine.

    `model_check`: the chosen model's check when a watcher already has it (the window's model
    panel checks while the user chooses); None: the workflow checks a model that needs it.
    `target`: the machine every child runs on (None: this computer), with `host_info`, what
    its preflight found when it is known already (the window's Machine group); None: the
    workflow runs the preflight. `summary_text` words the finished comparison for TensorBoard's
    text tab (`xlagui.present.markdown.summary_markdown`: the core writes no sentences).
    `inspect`: False skips the inspection compile ("What XLA did", the why) after the speed
    answer: a sweep's cells want the speed only, and each inspection is one more worker.
    `worker` and `worker_command` are what tests replace: a training run's runner (with one, no
    inspection compile runs: a replay has no XLA to inspect) and the command line of the
    measuring and inspecting workers.
    """

    scan: DatasetScan
    config: RunConfig
    out_dir: Path
    demo: bool = False
    exclusions: Exclusions | None = None
    only: frozenset[str] | None = None
    model_check: ModelEvent | None = None
    target: Target | None = None
    host_info: HostInfo | None = None
    summary_text: Callable[[ComparisonReport], str] | None = None
    # The finished comparison as Markdown, from the report and its folder (the why is read from
    # the runs' files: `xlagui.present.markdown.folder_markdown`), which the workflow writes to
    # `comparison.md` beside the JSON and the CSV, whoever asked; None: no Markdown.
    report_text: Callable[[ComparisonReport, Path], str] | None = None
    # What the CSV's summary rows say of their figures, in the front end's words
    # (`xlagui.present.csv_notes.note_words`); None: each note's code.
    csv_notes: NoteWords | None = None
    inspect: bool = True
    worker: RunWorker | None = None
    worker_command: Callable[[RunSpec], Sequence[str] | None] | None = None
    # Before measuring, wait up to this long for a quiet machine (`--wait-quiet`; None: go
    # ahead at once, the answer marked if the machine stays busy).
    wait_quiet_seconds: float | None = None
    # History's folder: the earlier measurements of the same settings on this machine there
    # are checked against this one (`history.earlier_estimates`, `processes.spread`), and a
    # comparison whose `out_dir` is elsewhere (the command line's) is kept there too (its
    # JSON), for the next. None: neither (a sweep's cells, a test that says so).
    history: Path | None = None

    def __post_init__(self) -> None:
        if self.target is None:
            # An arm on a backend this Python lacks (JAX) is refused before anything starts,
            # with its install line; a host's Python answers for itself, in its worker.
            check_backends_here(self.config, self.config.arms)


class ComparisonObserver(Protocol):
    """What a watcher of `workflow.run` is told, as it happens.

    on_phase(phase, report): a phase begins (`report` is None before it is planned).
    on_model_checked(check): the chosen model was built once and can be trained.
    on_host_ready(info): logged in to the host; `info` is what its preflight found.
    on_copy_progress(done, total): bytes of the dataset copied to the host so far.
    on_dataset_ready(dataset): the dataset is on the host (copied, or found there).
    on_report_ready(report): the comparison is planned: what will run, on what.
    on_run_started(entry): a worker is about to start (every measuring worker at once).
    on_event(entry, event): one event of that run's worker.
    on_round(report): a round of the speed measurement ended; the estimate is recomputed.
    on_run_done(entry): a run ended; `entry.status` says how.
    on_measured(report): the speed measurement is over (however it ended).
    on_answered(report): a speed-only comparison's answer is final, before its why (the
    inspection compile): the one rule of when the answer comes first, kept here.
    on_host_refused(host, error): the host could not take the comparison; nothing ran.
    on_preflight(preflight, final): the machine looked at before measuring (`final` False
    while still waiting for it to go quiet).
    """

    def on_phase(self, phase: Phase, report: ComparisonReport | None) -> None: ...
    def on_model_checked(self, check: ModelEvent) -> None: ...
    def on_host_ready(self, info: HostInfo) -> None: ...
    def on_copy_progress(self, done: int, total: int) -> None: ...
    def on_dataset_ready(self, dataset: PlacedDataset) -> None: ...
    def on_report_ready(self, report: ComparisonReport) -> None: ...
    def on_run_started(self, entry: RunEntry) -> None: ...
    def on_event(self, entry: RunEntry, event: Event) -> None: ...
    def on_round(self, report: ComparisonReport) -> None: ...
    def on_run_done(self, entry: RunEntry) -> None: ...
    def on_measured(self, report: ComparisonReport) -> None: ...
    def on_answered(self, report: ComparisonReport) -> None: ...
    def on_host_refused(self, host: str, error: MachineError) -> None: ...
    def on_preflight(self, preflight: Preflight, final: bool) -> None: ...


class Watcher:
    """A `ComparisonObserver` that does nothing: subclass it and keep what you show."""

    def on_phase(self, phase: Phase, report: ComparisonReport | None) -> None:
        pass

    def on_model_checked(self, check: ModelEvent) -> None:
        pass

    def on_host_ready(self, info: HostInfo) -> None:
        pass

    def on_copy_progress(self, done: int, total: int) -> None:
        pass

    def on_dataset_ready(self, dataset: PlacedDataset) -> None:
        pass

    def on_report_ready(self, report: ComparisonReport) -> None:
        pass

    def on_run_started(self, entry: RunEntry) -> None:
        pass

    def on_event(self, entry: RunEntry, event: Event) -> None:
        pass

    def on_round(self, report: ComparisonReport) -> None:
        pass

    def on_run_done(self, entry: RunEntry) -> None:
        pass

    def on_measured(self, report: ComparisonReport) -> None:
        pass

    def on_answered(self, report: ComparisonReport) -> None:
        pass

    def on_preflight(self, preflight: Preflight, final: bool) -> None:
        pass

    def on_host_refused(self, host: str, error: MachineError) -> None:
        pass
