"""`xlagui compare` watching the comparison workflow (`xlagui.core.compare.run`): a spinner or
a bar on the console for each phase, or every event as a JSON line on stdout (`--json`, also
`--events`), and Ctrl+C (or SIGTERM) stopping it from the moment the comparison is planned.

The watcher shows; the workflow decides. How a comparison ends (which run is interrupted, which
are not run, what is saved) is the workflow's, the same as in the window.
"""

from __future__ import annotations

import contextlib
import json
import signal
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn

from xlagui.cli.console import MeasureProgress, RichProgress, print_run_failure, print_summary
from xlagui.core.compare import CLOSING, ComparisonRequest, Phase, Watcher
from xlagui.core.compare.phases import inspected_arms
from xlagui.core.protocol.identity import Split
from xlagui.core.protocol.task import TaskState
from xlagui.present.hosts import dataset_line, host_line
from xlagui.present.machine_load import preflight_words
from xlagui.present.run_status import training_estimate
from xlagui.present.verdicts import recommendation_sentence

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.machine.host import HostInfo
    from xlagui.core.measure.transports import PlacedDataset
    from xlagui.core.protocol.events import Event, ModelEvent
    from xlagui.core.protocol.interference import Preflight
    from xlagui.core.protocol.record import RunEntry
    from xlagui.core.results.report import ComparisonReport


class ConsoleWatcher(Watcher):
    """The console's view of one comparison. `summarised`: the summary was printed already
    (a speed-only comparison's, before its inspection compile). `close` ends what is still
    shown and puts the previous signal handlers back."""

    def __init__(self, console: Console, request: ComparisonRequest, state: TaskState,
                 trained: DatasetScan, *, events: bool) -> None:
        self.console, self.request, self.state = console, request, state
        self.trained = trained  # the files trained on, for "Comparing on …"
        self.events = events
        self.report: ComparisonReport | None = None
        self.summarised = False
        self.said_recommendation = ""  # the recommendation as the answer said it
        self._phase: Phase | None = None
        self._shown = contextlib.ExitStack()
        self._display: Any = None  # what is shown now: a spinner, a bar, the progress
        self._copy_task: TaskID | None = None
        self._restore_signals: Callable[[], None] | None = None

    def close(self) -> None:
        self._end_display()
        if self._restore_signals is not None:
            self._restore_signals()
            self._restore_signals = None

    def _show(self, display: Any) -> Any:
        self._end_display()
        self._display = self._shown.enter_context(display)
        return self._display

    def _end_display(self) -> None:
        self._shown.close()
        self._display = None

    def on_preflight(self, preflight: Preflight, final: bool) -> None:
        """The machine before measuring: said when busy (and while waiting for it), and in
        one dim line when quiet."""
        style = "yellow" if preflight.busy else "dim"
        self._end_display()
        self.console.print(f"[{style}]{escape(preflight_words(preflight, final))}[/{style}]",
                           soft_wrap=True)

    def on_phase(self, phase: Phase, report: ComparisonReport | None) -> None:
        self._phase = phase
        self._end_display()
        config, target = self.request.config, self.request.target
        if phase is Phase.CHECKING_MODEL:
            self._show(self.console.status(f"building {config.model.label} once to check it…"))
        elif phase is Phase.CONNECTING and target is not None:
            self._show(self.console.status(
                f"connecting to {target.host} and asking what it has…"))
        elif phase is Phase.COPYING and target is not None:
            bar = self._show(Progress(
                TextColumn(f"copying the dataset to {target.host}"),
                BarColumn(),
                DownloadColumn(),
                console=self.console,
                transient=True,
            ))
            self._copy_task = bar.add_task("copy", total=None)
        elif phase is Phase.MEASURING and report is not None and not self.events:
            self._show(MeasureProgress(self.console, report))
        elif phase is Phase.INSPECTING and report is not None and self.summarised:
            self._inspecting(report)
        elif phase is Phase.TRAINING and report is not None and not self.events:
            estimate = training_estimate(report, len(self.trained.files_for(Split.TRAIN)))
            if estimate:
                self.console.print(estimate, soft_wrap=True)
            self._show(RichProgress(self.console, report))

    def on_answered(self, report: ComparisonReport) -> None:
        """A speed-only comparison's answer, said before its why."""
        self._end_display()
        print_summary(self.console, report)
        self.summarised = True
        c = report.comparison
        self.said_recommendation = recommendation_sentence(c.recommendation if c else None)

    def _inspecting(self, report: ComparisonReport) -> None:
        """After the answer, for "What XLA did" (and the why), the compile the measuring
        workers did not dump."""
        n = len(inspected_arms(report))
        arms = f"{n} arm{'s' if n > 1 else ''}"
        self._show(self.console.status(
            f"now why: {arms} once more, untimed: where each step's time goes and whether the "
            "numbers stay the same (Ctrl+C skips it)…" if report.config.explain else
            f"compiling {arms} once more with XLA's dump on, for “What XLA did” "
            "(xlagui inspect; Ctrl+C skips it)…"
        ))

    def on_model_checked(self, check: ModelEvent) -> None:
        self._end_display()
        config = self.request.config
        if check.image_size != config.image_size:
            self.console.print(
                f"{config.model.label} takes {check.image_size}x{check.image_size} images: "
                f"the image size is {check.image_size}, not {config.image_size}"
            )

    def on_host_ready(self, info: HostInfo) -> None:
        self._end_display()
        self.console.print(host_line(info), soft_wrap=True)

    def on_copy_progress(self, done: int, total: int) -> None:
        if self._display is not None and self._copy_task is not None:
            self._display.update(self._copy_task, completed=done, total=total)

    def on_dataset_ready(self, dataset: PlacedDataset) -> None:
        self._end_display()
        assert self.request.target is not None
        self.console.print(dataset_line(dataset, self.request.target.host), soft_wrap=True)

    def on_report_ready(self, report: ComparisonReport) -> None:
        self.report = report
        _say_comparing(report, self.trained, self.console)
        self._restore_signals = _install_stop_signals(self.state, self.console, CLOSING)

    def on_run_started(self, entry: RunEntry) -> None:
        if isinstance(self._display, RichProgress):
            self._display.on_run_start(entry)

    def on_event(self, entry: RunEntry, event: Event) -> None:
        if self.events:
            print(json.dumps({"run_id": entry.run_id, **event.to_dict()}), flush=True)
        elif isinstance(self._display, (MeasureProgress, RichProgress)):
            self._display.on_event(entry, event)

    def on_round(self, report: ComparisonReport) -> None:
        if isinstance(self._display, MeasureProgress):
            self._display.on_round(report)

    def on_run_done(self, entry: RunEntry) -> None:
        if self._phase is not Phase.TRAINING:
            return  # a measuring worker: MeasureProgress said its failure as it came
        if isinstance(self._display, RichProgress):
            self._display.on_run_done(entry)
        else:
            print_run_failure(self.console, entry)


def _say_comparing(report: ComparisonReport, trained: DatasetScan, console: Console) -> None:
    """What is compared, on what, with which settings and model."""
    config = report.config
    console.print(
        f"Comparing on [bold]{report.dataset['name']}[/bold] "
        f"({len(trained.files_for(Split.TRAIN))} training images, "
        f"{len(trained.files_for(Split.TEST))} validation) — {config.epochs} epochs, "
        f"batch {config.batch_size}, {config.image_size} px, {config.device}, XLA mode "
        f"{config.xla.value}, model {config.model.label}"
    )
    _say_model(report, console)


def _say_model(report: ComparisonReport, console: Console) -> None:
    """The model line, and a warning when a step may not fit in the free memory."""
    from xlagui.core.model.check import article_cnn_memory, memory_guard
    from xlagui.present.models import memory_warning, model_line

    config, check = report.config, report.model_check
    console.print(model_line(config, check), soft_wrap=True)
    if check is not None:
        per_worker = check.memory_bytes
    else:
        classes = len(report.dataset.get("class_names") or []) or 2
        per_worker = sum(article_cnn_memory(config.image_size, classes, config.batch_size).values())
    if per_worker:
        warning = memory_warning(memory_guard(per_worker, len(report.measure_runs)), config)
        if warning:
            console.print(f"[yellow]warning:[/yellow] {warning}", soft_wrap=True)


def _install_stop_signals(
    state: TaskState, console: Console, reason: str
) -> Callable[[], None]:
    """Ctrl+C (or SIGTERM) stops the comparison as closing the window does: the run in progress
    is saved as interrupted with its finished epochs, the runs not started as not run. A second
    one aborts at once. Returns a function that puts the previous handlers back."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if state.is_interruption_requested():
            raise KeyboardInterrupt
        console.print("[yellow]stopping… (Ctrl+C again to abort at once)[/yellow]")
        state.request_interruption(reason)

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, handler) for signum in signals}

    def restore() -> None:
        for signum, before in previous.items():
            signal.signal(signum, before)

    return restore
