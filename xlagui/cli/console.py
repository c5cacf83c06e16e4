"""Terminal presentation of a comparison with rich: a progress bar per run, a final table."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Any, Self

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from xlagui.core.protocol.events import (
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    StartedEvent,
    WarmupEvent,
)
from xlagui.core.protocol.identity import Role, RunStatus
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.core.sweep.cell import CellResult, CellStatus
from xlagui.core.sweep.plan import Cell, SweepPlan
from xlagui.core.sweep.runner import SweepWatcher
from xlagui.present.errors import error_hint
from xlagui.present.format import ARM_COLUMNS, arm_table, comparison_rows
from xlagui.present.intervals import block_words, pairs_noun
from xlagui.present.limits import efficiency_rows, limit_verdict
from xlagui.present.machine_load import is_busy, load_lines
from xlagui.present.model_files import error_text
from xlagui.present.notes import comparison_notes
from xlagui.present.report import RUN_COLUMNS, run_name, run_rows, stopped_words
from xlagui.present.sweep import arm_figure, cell_title, eta_words, reason_words
from xlagui.present.verdicts import recommendation_sentence, verdict_sentence


def run_label(entry: RunEntry) -> str:
    return run_name(entry.variant, entry.xla_mode, entry.arm.name, entry.repeat)


class _LiveDisplay:
    """A rich display that is live while the `with` block runs."""

    def _live(self) -> AbstractContextManager[object]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._entered = self._live()
        self._entered.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._entered.__exit__(exc_type, exc, tb)


class RichProgress(_LiveDisplay):
    """One bar per run, advanced by batch events; the description says the phase."""

    def __init__(self, console: Console, report: ComparisonReport) -> None:
        self.console = console
        self.report = report
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
        )
        self.tasks: dict[str, TaskID] = {}
        self.steps: dict[str, int] = {}

    def _live(self) -> AbstractContextManager[object]:
        return self.progress

    def on_run_start(self, entry: RunEntry) -> None:
        self.tasks[entry.run_id] = self.progress.add_task(
            f"{run_label(entry):<28}", total=None, status="starting TensorFlow…"
        )

    def on_event(self, entry: RunEntry, event: Event) -> None:
        if not self.console.is_terminal:
            # No live bars in a log file or CI: one line per milestone instead.
            line = self._log_line(entry, event)
            if line:
                self.console.print(line, soft_wrap=True)
        task = self.tasks.get(entry.run_id)
        if task is None:
            return
        epochs = self.report.config.epochs
        if isinstance(event, StartedEvent):
            self.steps[entry.run_id] = event.steps_per_epoch
            self.progress.update(
                task,
                total=epochs * event.steps_per_epoch,
                completed=0,
                status="compiling / first steps…",
            )
        elif isinstance(event, BatchEvent):
            steps = self.steps.get(entry.run_id, 0)
            self.progress.update(
                task,
                completed=(event.epoch - 1) * steps + event.step,
                status=f"epoch {event.epoch}/{epochs} loss {event.loss or 0:.3f}",
            )
        elif isinstance(event, EpochEvent):
            steps = self.steps.get(entry.run_id, 0)
            va = f" val acc {event.val_accuracy:.2f}" if event.val_accuracy is not None else ""
            self.progress.update(
                task,
                completed=event.epoch * steps,
                status=f"epoch {event.epoch}/{epochs} {event.epoch_seconds:.1f} s{va}",
            )
        elif isinstance(event, FinishedEvent):
            self.progress.update(
                task, status=f"[green]done[/green] {event.summary.total_seconds or 0:.1f} s"
            )
        elif isinstance(event, CancelledEvent):
            self.progress.update(task, status="[yellow]cancelled[/yellow]")
        elif isinstance(event, ErrorEvent):
            self.progress.update(task, status=f"[red]failed: {error_text(event)[:60]}[/red]")

    def _log_line(self, entry: RunEntry, event: Event) -> str:
        label = run_label(entry)
        if isinstance(event, StartedEvent):
            return (
                f"{label}: started on {event.device_name} ({event.device_kind}), XLA in "
                f"effect: {'yes' if event.xla_in_effect else 'no'}, setup "
                f"{event.setup_seconds:.1f} s"
            )
        if isinstance(event, EpochEvent):
            va = f", val acc {event.val_accuracy:.3f}" if event.val_accuracy is not None else ""
            return (
                f"{label}: epoch {event.epoch}/{self.report.config.epochs} "
                f"{event.epoch_seconds:.2f} s, loss {event.loss:.4f}{va}"
            )
        if isinstance(event, FinishedEvent):
            return f"{label}: finished in {event.summary.total_seconds or 0:.1f} s"
        if isinstance(event, CancelledEvent):
            return f"{label}: cancelled"
        return ""

    def on_run_done(self, entry: RunEntry) -> None:
        task = self.tasks.get(entry.run_id)
        if entry.status == RunStatus.INTERRUPTED and task is not None:
            # The worker said "cancelled"; the comparison keeps the run as cut short.
            epochs = sum(1 for e in entry.events if isinstance(e, EpochEvent))
            self.progress.update(task, status=f"[yellow]interrupted, {epochs} epochs kept[/yellow]")
        print_run_failure(self.console, entry)


class MeasureProgress(_LiveDisplay):
    """The interleaved measurement on a terminal: one line that says the phase and the
    running estimate; on a log (no terminal) one line per milestone and every few pairs."""

    def __init__(self, console: Console, report: ComparisonReport) -> None:
        self.console = console
        self.report = report
        self.status = console.status("Measuring speed: starting two workers…")
        self._warm: set[str] = set()
        self._printed_pairs = 0

    def _live(self) -> AbstractContextManager[object]:
        # On a log (no terminal) a spinner would only repeat itself: nothing live.
        return self.status if self.console.is_terminal else nullcontext()

    def _say(self, text: str) -> None:
        if self.console.is_terminal:
            self.status.update(text)
        else:
            self.console.print(text, soft_wrap=True)

    def on_event(self, entry: RunEntry, event: Event) -> None:
        label = run_label(entry)
        if isinstance(event, StartedEvent):
            self._say(f"Measuring speed: {label} ready (setup {event.setup_seconds:.1f} s)")
        elif isinstance(event, WarmupEvent):
            self._warm.add(entry.run_id)
            self._say(
                f"Measuring speed: {label} warmed up (first step {event.first_step_seconds:.2f}"
                f" s, then {min(event.warm_step_seconds):.2f} s per step)"
            )
        elif isinstance(event, ErrorEvent):
            self.console.print(f"[red]{label} failed:[/red] {error_text(event)}", soft_wrap=True)
            if hint := error_hint(event):
                self.console.print(f"  {hint}", soft_wrap=True)

    def on_round(self, report: ComparisonReport) -> None:
        c = report.comparison
        i = c.interleaved if c is not None else None
        if i is None or i.ratio is None:
            return
        hw = f"±{i.half_width:.1%}" if i.half_width is not None else "interval after 6 pairs"
        if len(i.arms) > 1:
            widest = max((a.half_width or 0.0 for a in i.arms), default=0.0)
            ratios = ", ".join(f"{a.arm} {a.ratio:.3f}" for a in i.arms if a.ratio is not None)
            hw = f"widest ±{widest:.1%}" if all(a.half_width for a in i.arms) else hw
            what = f"step time ÷ baseline: {ratios}"
        else:
            what = f"XLA ÷ baseline step time {i.ratio:.3f}"
        text = (
            f"Measuring speed: {i.pairs} {pairs_noun(i.pairs)} of {block_words(i)}, {what} "
            f"({hw}, goal ±{report.config.target_percent:g}%), "
            f"{i.measuring_seconds or 0:.0f}/{i.rounds_budget_seconds or i.budget_seconds:.0f} s"
        )
        if self.console.is_terminal:
            self.status.update(text)
        elif i.pairs - self._printed_pairs >= 5 or i.pairs <= 1:
            self._printed_pairs = i.pairs
            self.console.print(text, soft_wrap=True)


class SweepProgress(_LiveDisplay, SweepWatcher):
    """A sweep on a terminal: a bar over its cells with the ETA from the cells done, and one
    for the cell in progress (its seconds of measuring against its budget); each finished cell
    is said in a line (on a log, only those lines)."""

    def __init__(self, console: Console, plan: SweepPlan) -> None:
        self.console, self.plan = console, plan
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                                 TimeElapsedColumn(), console=console)
        self.overall = self.progress.add_task("Sweep", total=len(plan.cells), status="")
        self.current: TaskID | None = None

    def _live(self) -> AbstractContextManager[object]:
        return self.progress if self.console.is_terminal else nullcontext()

    def on_plan(self, plan: SweepPlan, kept: list[CellResult]) -> None:
        finished = sum(1 for c in kept if c.status != CellStatus.INTERRUPTED)
        self.progress.update(self.overall, completed=finished)

    def on_cell_started(self, cell: Cell) -> None:
        if self.current is not None:
            self.progress.remove_task(self.current)
        self.current = self.progress.add_task(
            escape(cell_title(cell)), total=cell.config.budget_seconds, status="starting")
        if not self.console.is_terminal:
            self.console.print(f"cell {escape(cell_title(cell))}: measuring…", soft_wrap=True)

    def on_cell_event(self, cell: Cell, report: ComparisonReport) -> None:
        i = report.comparison.interleaved if report.comparison is not None else None
        if self.current is not None and i is not None:
            self.progress.update(self.current, completed=i.measuring_seconds or 0,
                                 status=f"{i.pairs} {pairs_noun(i.pairs)}")

    def on_cell_done(self, result: CellResult, done: int, total: int,
                     eta_seconds: float | None) -> None:
        self.progress.update(self.overall, completed=done,
                             status=eta_words(done, total, eta_seconds))
        cell = self.plan.cell(result.key)
        title = escape(cell_title(cell)) if cell is not None else result.key
        if result.status == CellStatus.DONE:
            figures = ", ".join(f"{a.arm} {arm_figure(result, a.arm)}" for a in result.arms)
            self.console.print(f"[green]✓[/green] {title}: {escape(figures)}", soft_wrap=True)
        elif result.status == CellStatus.FAILED:
            self.console.print(f"[red]✗[/red] {title}: {escape(reason_words(result))}",
                               soft_wrap=True)
        else:
            self.console.print(f"[yellow]■[/yellow] {title}: stopped, runs again on resume",
                               soft_wrap=True)
        if not self.console.is_terminal:
            self.console.print(eta_words(done, total, eta_seconds))


def print_run_failure(console: Console, entry: RunEntry) -> None:
    """A failed run in plain words: what happened and what to do about it."""
    err = entry.error
    if isinstance(err, ErrorEvent):
        console.print(f"[red]{run_label(entry)} failed:[/red] {err.message}", soft_wrap=True)
        if hint := error_hint(err):
            console.print(f"  {hint}", soft_wrap=True)


def _f(v: Any, fmt: str, suffix: str = "") -> str:
    return "—" if v is None else format(v, fmt) + suffix


def print_summary(console: Console, report: ComparisonReport) -> None:
    runs = Table(title="Runs", title_justify="left")
    for name, left in RUN_COLUMNS:
        runs.add_column(name, justify="left" if left else "right")
    for row in run_rows(report):
        runs.add_row(*row)
    if report.runs:
        console.print(runs)
    c = report.comparison
    if c is None:
        return
    if c.interleaved is not None:
        console.print(measure_table(c.interleaved))
    t = Table(title="Comparison (baseline vs XLA)", title_justify="left", show_header=False)
    t.add_column("what")
    t.add_column("value")
    for name, value in comparison_rows(c):
        t.add_row(name, value)
    console.print(t)
    arms = arm_table(c)
    if len(arms) > 1:
        a = Table(title="Arms against the baseline, fastest first", title_justify="left")
        for col in ARM_COLUMNS:
            a.add_column(col, justify="right" if col == "rank" else "left")
        for row in arms:
            a.add_row(*row)
        console.print(a)
    colour = "green" if c.valid else "red"
    console.print(f"[bold {colour}]{verdict_sentence(c)}[/bold {colour}]")
    busy = "bold yellow" if is_busy(c) else "dim"
    for line in load_lines(c):
        console.print(f"[{busy}]{escape(line)}[/{busy}]")
    stopped = stopped_words(report)
    if stopped:
        console.print(f"[bold yellow]{escape(stopped)}[/bold yellow]")
    recommendation = recommendation_sentence(c.recommendation)
    if recommendation:
        console.print(f"[bold]{escape(recommendation)}[/bold]")
    for note in comparison_notes(c):
        console.print(f"[yellow]Note: {escape(note)}[/yellow]")
    print_limits(console, c)


def print_limits(console: Console, c: Any) -> None:
    """How far from the limit: achieved FLOP/s per arm and run, % of the measured peak."""
    rows = efficiency_rows(c)
    if not rows:
        return
    t = Table(title="How far from the limit", title_justify="left", show_header=False)
    t.add_column("what")
    t.add_column("value")
    for name, value in rows:
        t.add_row(name, value)
    console.print(t)
    console.print(limit_verdict(c))


def measure_table(i: Any) -> Table:
    """The interleaved measurement: each side's step times and how the measurement ended."""
    t = Table(title="Speed, measured interleaved", title_justify="left")
    for col in ("side", "first step", "steady step", "compile + warm-up", "blocks"):
        t.add_column(col, justify="left" if col == "side" else "right")
    for side in (i.baseline, i.xla):
        if side is None:
            continue
        t.add_row(
            "baseline" if side.arm == Role.BASELINE else f"XLA ({side.xla_mode})",
            _f(side.first_step_seconds, ".2f", " s"),
            _f(side.steady_step_seconds, ".3f", " s"),
            "not measurable" if side.compile_seconds is None else f"{side.compile_seconds:.2f} s",
            str(side.blocks),
        )
    for a in i.arms[1:]:  # the arms beyond the XLA side
        t.add_row(
            a.arm,
            _f(a.first_step_seconds, ".2f", " s"),
            _f(a.steady_step_seconds, ".3f", " s"),
            "not measurable" if a.compile_seconds is None else f"{a.compile_seconds:.2f} s",
            str(a.pairs),
        )
    return t


def print_xla_did(console: Console, runs: list[tuple[str, Any]], top: int = 10) -> None:
    """`xlagui inspect`: what XLA did in each run, the same figures the window's panel shows."""
    from xlagui.core.xla.hlo import diff
    from xlagui.present import xla_did as did

    if not runs:
        console.print(
            "No XLA run with an HLO dump here: XLA compiled nothing, or the runs "
            "were all without XLA."
        )
        return
    for run_id, report in runs:
        console.print(f"[bold]{run_id}[/bold] — {did.one_line(report)}", soft_wrap=True)
        modules = Table(title="Modules", title_justify="left")
        for col in did.MODULE_COLUMNS:
            modules.add_column(col, justify="left" if col in ("name", "by kind") else "right")
        for row in did.module_rows(report):
            modules.add_row(*row)
        console.print(modules)
        heavy = Table(title="Convolutions and dots", title_justify="left")
        for col in did.HEAVY_COLUMNS:
            heavy.add_column(col)
        for row in did.heavy_rows(report):
            heavy.add_row(*row)
        console.print(heavy)
        fusions = Table(title=f"Largest fusions (top {top} by output bytes)", title_justify="left")
        for col in did.FUSION_COLUMNS:
            fusions.add_column(col, justify="right" if col in ("bytes", "ops") else "left")
        for _m, _f, row in did.fusion_rows(report, top):
            fusions.add_row(*row)
        console.print(fusions)
    if len(runs) >= 2:
        (a_id, a), (b_id, b) = runs[0], runs[1]
        t = Table(title=f"Difference: A = {a_id}, B = {b_id}", title_justify="left")
        for col in did.DIFF_COLUMNS:
            t.add_column(col, justify="left" if col == "figure" else "right")
        for row in did.diff_rows(diff(a, b)):
            t.add_row(*row)
        console.print(t)
