"""What a run's column says in each state: the chip (its state, which picks its colour, and its
words), the line under the progress bar and the ETA, and the notes shown where the plots will
be. Pure functions of a run's trace and what the comparison planned, so a watcher without Qt
can say the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xlagui.core.protocol.events import CancelledEvent, ErrorEvent, FinishedEvent
from xlagui.core.protocol.identity import RunStatus, StrEnum
from xlagui.present import format as fmt
from xlagui.present.chips import LIVE_STATES as LIVE_STATES
from xlagui.present.chips import ChipState as ChipState
from xlagui.present.errors import error_hint
from xlagui.present.model_files import error_text
from xlagui.present.traces import RunTrace

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport

# Shown from the moment a speed-only comparison is planned: true before its warm-up too.
SPEED_ONLY_NOTE = (
    "Speed only: this side is timed in blocks of steps and is not trained, so there are no "
    "loss or wall-time curves. Its blocks go to the speed-up plot below."
)


def training_estimate(report: ComparisonReport, train_images: int) -> str:
    """Before a full comparison's training runs start, how long they will take: each run's
    epochs × full batches × its arm's steady step, as just measured ("" when a run's arm has
    no measured step). Evaluation, compiles and the workers' start are not in it, and it says
    so: the training runs take longer, never less."""
    c = report.comparison
    summary = c.interleaved if c is not None else None
    runs = [r for r in report.runs if r.status == RunStatus.QUEUED]
    steps = train_images // report.config.batch_size  # full batches only (drop_remainder)
    if summary is None or summary.baseline is None or not runs or steps < 1:
        return ""
    step_of = {summary.baseline.arm: summary.baseline.steady_step_seconds,
               **{a.variant: a.steady_step_seconds for a in summary.arms}}
    if any(not step_of.get(r.variant) for r in runs):
        return ""
    epochs = report.config.epochs
    total = sum(epochs * steps * (step_of[r.variant] or 0.0) for r in runs)
    n = len(runs)

    def many(count: int, noun: str) -> str:
        return f"{count} {noun}{'' if count == 1 else 's'}"

    return (f"The {many(n, 'training run')} ({many(epochs, 'epoch')} of {many(steps, 'step')} "
            f"each) should take about {fmt.duration(total)} by the step times just measured, "
            "plus each epoch's evaluation and each run's start and compiles.")





class Waiting(StrEnum):
    """Why a column has no plots yet: the keys of `WAITING_NOTES`."""

    IDLE = "idle"  # no comparison runs
    FIRST = "first"  # the speed measurement comes first
    AFTER = "after"  # the baseline's training comes first
    NOT_RUN = RunStatus.NOT_RUN.value  # this side was not asked for
    UNSTARTED = "unstarted"  # the comparison ended before this side's training started


# What a column shows where its plots will be, until its first training run starts: empty
# axes (which pyqtgraph labels 1e-10 … 5e-10) would say nothing true.
WAITING_NOTES = {
    Waiting.IDLE: "The loss and wall-time curves appear here when a comparison runs.",
    Waiting.FIRST: "Training starts after the speed measurement.",
    Waiting.AFTER: "Training starts after the baseline's.",
    Waiting.NOT_RUN: "Not part of this run: only the other side was asked for.",
    Waiting.UNSTARTED: "This side's training did not start.",
}
# In a plot's place while its run has nothing for it yet (compiling, the first epoch).
LOSS_WAITING = "The loss appears with the first batch."
TIME_WAITING = "The wall time appears after the first epoch."


@dataclass(frozen=True)
class StatusWords:
    """What a column's head says: `state` (the chip's, which picks its colour), `chip` (its
    words), the `detail` line, its `detail_tip` and the `eta`; a field left None leaves what is
    shown as it is."""

    state: ChipState
    chip: str
    detail: str | None = None
    detail_tip: str | None = None
    eta: str | None = None


STOPPING = StatusWords(ChipState.STOPPING, "Stopping…")


def waiting_note(*, epochs: int, included: bool, runs_planned: int, baseline: bool) -> str:
    """The note in the plots' place before any training run starts ("" for a speed-only
    comparison: `SPEED_ONLY_NOTE` says why instead)."""
    if epochs > 0 and included and runs_planned == 0:
        return ""
    if epochs == 0:
        return WAITING_NOTES[Waiting.IDLE]
    if not included:
        return WAITING_NOTES[Waiting.NOT_RUN]
    return WAITING_NOTES[Waiting.FIRST if baseline else Waiting.AFTER]


def planned_words(*, epochs: int, runs_planned: int, included: bool) -> StatusWords:
    """Before a comparison's runs start: none planned, queued, or this side not asked for."""
    if epochs == 0:
        return StatusWords(ChipState.IDLE, "No run yet", detail="")
    if included and runs_planned == 0:
        return StatusWords(ChipState.QUEUED, "Queued", detail="Speed only: no training planned")
    if included:
        return StatusWords(ChipState.QUEUED, "Queued", detail=f"{epochs_words(epochs)} planned"
                           + (f", {runs_planned} runs" if runs_planned > 1 else ""))
    return StatusWords(ChipState.NOT_RUN, "Not part of this run",
                       detail="Only the other side was asked for")


def epochs_words(count: int) -> str:
    """"1 epoch", "3 epochs"."""
    return f"{count} epoch{'' if count == 1 else 's'}"


def stopped_when(trace: RunTrace, epochs_done: int) -> str:
    """When a training run was cut short: "while starting: no epoch ran" (no step yet),
    "during its first epoch" or "after 2 epochs"."""
    if epochs_done == 0 and trace.first_batch_t is None:
        return "while starting: no epoch ran"
    if epochs_done == 0:
        return "during its first epoch: no epoch finished"
    return f"after {epochs_words(epochs_done)}"


def run_words(repeat: int, runs_planned: int) -> str:
    """"Run 2 of 3 · " before a run's detail when a side runs more than once."""
    return f"Run {repeat} of {runs_planned} · " if runs_planned > 1 else ""


def starting_words(repeat: int, runs_planned: int) -> StatusWords:
    """A run's worker was started."""
    return StatusWords(ChipState.STARTING, "Starting…", detail=run_words(repeat, runs_planned)
                       + "starting the worker and TensorFlow…", eta="")


def ended_words(status: RunStatus) -> StatusWords:
    """A run ended with `status` and no terminal event of its own said how."""
    if status == RunStatus.INTERRUPTED:
        return StatusWords(ChipState.INTERRUPTED, "Interrupted")
    if status == RunStatus.CANCELLED:
        return StatusWords(ChipState.CANCELLED, "Cancelled")
    return StatusWords(ChipState.ERROR, "Failed")


def unstarted_words(status: RunStatus, *, measured: bool) -> StatusWords:
    """None of a side's training runs started: the app closed first (`not run`) or Stop was
    pressed; `measured`: its speed was measured before."""
    first = "Speed measured; " if measured else ""
    if status == RunStatus.NOT_RUN:
        return StatusWords(ChipState.NOT_RUN, "Not run", eta="",
                           detail=f"{first}xlagui closed before this side's training started"
                           if first else "xlagui closed before this side started")
    return StatusWords(ChipState.CANCELLED, "Cancelled", eta="",
                       detail=f"{first}stopped before this side's training started"
                       if first else "Stopped before this side started")


def training_words(trace: RunTrace, *, runs_planned: int, epochs_planned: int,
                   uses_xla: bool, stopping: bool) -> StatusWords | None:
    """A training run's state, from its trace (None: nothing new to say; while `stopping`,
    until the run ends)."""
    run = run_words(trace.repeat, runs_planned)
    term = trace.terminal
    if isinstance(term, FinishedEvent):
        total = trace.summary.total_seconds if trace.summary is not None else None
        return StatusWords(ChipState.FINISHED, "Finished", eta="",
                           detail=run + f"{len(trace.epochs)} epochs in {fmt.seconds(total)}")
    if isinstance(term, CancelledEvent):
        interrupted = trace.status == RunStatus.INTERRUPTED
        done = len(trace.epochs) if interrupted else term.epochs_done
        when = stopped_when(trace, done)
        # A worker still starting (TensorFlow loading) cannot listen: its forced end is usual.
        starting = done == 0 and trace.first_batch_t is None
        forced = " (the worker was stopped by force)" if term.forced and not starting else ""
        kept = ("; it is kept" if done == 1 else "; they are kept") if done else ""
        if interrupted:
            return StatusWords(ChipState.INTERRUPTED, "Interrupted", eta="",
                               detail=run + f"xlagui closed {when}{forced}{kept}")
        return StatusWords(ChipState.CANCELLED, "Cancelled", eta="",
                           detail=run + f"stopped {when}{forced}")
    if isinstance(term, ErrorEvent):
        return StatusWords(ChipState.ERROR, "Failed", detail=run + error_text(term),
                           detail_tip=f"{error_text(term)}\n{error_hint(term)}".strip(), eta="")
    if stopping or trace.started is None:
        return None
    if trace.first_batch_t is None:
        what = "tracing the model" + (" and compiling it with XLA" if uses_xla else "")
        return StatusWords(ChipState.COMPILING, "Compiling…",
                           detail=run + f"{what}; the first batch is on its way")
    epoch = max(trace.current_epoch, 1)
    eta = trace.eta_seconds()
    return StatusWords(ChipState.RUNNING, f"Epoch {epoch} of {epochs_planned}",
                       detail=run + f"step {trace.steps_done:,} of {trace.total_steps:,}",
                       eta="" if eta is None else f"ETA {fmt.duration(eta)}")


def measuring_words(trace: RunTrace, *, uses_xla: bool, others: str,
                    stopping: bool) -> StatusWords | None:
    """The speed phase: warm-up, then blocks of steps taken in turns with the `others` ("side"
    or "sides"); None: nothing new to say (while `stopping`, until the worker ends)."""
    term = trace.terminal
    step = trace.median_step_seconds()
    per_step = f"{fmt.seconds(step)} per step (median)" if step is not None else ""
    blocks = len(trace.blocks)
    block_words = f"{blocks} block{'' if blocks == 1 else 's'}"
    if isinstance(term, FinishedEvent):
        return StatusWords(ChipState.FINISHED, "Speed measured",
                           detail=f"{block_words} · {per_step}")
    if isinstance(term, CancelledEvent):
        interrupted = trace.status == RunStatus.INTERRUPTED
        forced = " (the worker was stopped by force)" if term.forced else ""
        why = "xlagui closed" if interrupted else "stopped"
        return StatusWords(ChipState.INTERRUPTED if interrupted else ChipState.CANCELLED,
                           "Interrupted" if interrupted else "Stopped",
                           detail=f"{why} after {block_words}{forced}; "
                                  f"{'it is' if blocks == 1 else 'they are'} kept")
    if isinstance(term, ErrorEvent):
        return StatusWords(ChipState.ERROR, "Failed", detail=error_text(term),
                           detail_tip=f"{error_text(term)}\n{error_hint(term)}".strip())
    if stopping:
        return None
    if trace.warmup is None:
        what = "tracing" + (" and compiling with XLA" if uses_xla else "")
        return StatusWords(ChipState.COMPILING, "Warming up…",
                           detail=f"measuring speed: first step ({what}), then a few steady ones")
    first = f"first step {fmt.seconds(trace.warmup.first_step_seconds)}"
    return StatusWords(ChipState.RUNNING, "Measuring speed",
                       detail=f"{block_words} in turns with the other {others} · "
                       f"{per_step or first}")


def running_status(what: str, *, host: str | None = None, quick: bool = False) -> str:
    """The status bar while a comparison runs (`what`: "comparison" or "Baseline run", on
    `host` if not this computer): a speed-only one has no training run to save as it
    finishes, and is saved when its measurement ends."""
    where = f" on {host}" if host else ""
    if quick:
        return f"Measuring the speed only{where}… saved in the history when it ends"
    return f"Running the {what}{where}… each run is saved as it finishes"
