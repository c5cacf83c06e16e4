"""What a run's column says in each state, without a window: planned, starting, compiling,
running, finished, stopped, interrupted, failed, never started; and the speed phase's."""

from __future__ import annotations

from tests.helpers.streams import run_events
from xlagui.core.protocol.events import (
    BatchEvent,
    BlockEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    StartedEvent,
    WarmupEvent,
)
from xlagui.core.protocol.identity import RunStatus
from xlagui.present.run_status import (
    STOPPING,
    WAITING_NOTES,
    StatusWords,
    Waiting,
    ended_words,
    measuring_words,
    planned_words,
    starting_words,
    training_words,
    unstarted_words,
    waiting_note,
)
from xlagui.present.traces import RunTrace, trace_of


def words(trace: RunTrace, *, runs_planned: int = 1, stopping: bool = False,
          uses_xla: bool = False) -> StatusWords | None:
    return training_words(trace, runs_planned=runs_planned, epochs_planned=3,
                          uses_xla=uses_xla, stopping=stopping)


def test_before_the_runs_start() -> None:
    assert planned_words(epochs=0, runs_planned=0, included=True) == StatusWords(
        "idle", "No run yet", detail="")
    assert planned_words(epochs=3, runs_planned=1, included=True) == StatusWords(
        "queued", "Queued", detail="3 epochs planned")
    assert planned_words(epochs=3, runs_planned=2, included=True).detail == (
        "3 epochs planned, 2 runs")
    # Speed only: the epochs setting is not used (issue 31: "50 epochs planned").
    assert planned_words(epochs=50, runs_planned=0, included=True) == StatusWords(
        "queued", "Queued", detail="Speed only: no training planned")
    assert planned_words(epochs=1, runs_planned=1, included=True).detail == "1 epoch planned"
    assert planned_words(epochs=3, runs_planned=1, included=False) == StatusWords(
        "not run", "Not part of this run", detail="Only the other side was asked for")
    assert starting_words(2, 3) == StatusWords(
        "starting", "Starting…", detail="Run 2 of 3 · starting the worker and TensorFlow…",
        eta="")
    assert starting_words(1, 1).detail == "starting the worker and TensorFlow…"


def test_what_is_shown_where_the_plots_will_be() -> None:
    def note(epochs: int = 3, included: bool = True, runs: int = 1, base: bool = True) -> str:
        return waiting_note(epochs=epochs, included=included, runs_planned=runs, baseline=base)

    assert note(epochs=0) == WAITING_NOTES[Waiting.IDLE]
    assert note(runs=0) == ""  # speed only: its own note says why
    assert note(included=False) == "Not part of this run: only the other side was asked for."
    assert note() == "Training starts after the speed measurement."
    assert note(base=False) == "Training starts after the baseline's."


def test_a_training_run_from_start_to_end() -> None:
    events = run_events(epoch_seconds=(3.0, 1.0, 1.0), steps=4)
    trace = trace_of(events[:1], epochs_planned=3)
    assert words(trace, uses_xla=True) == StatusWords(
        "compiling", "Compiling…",
        detail="tracing the model and compiling it with XLA; the first batch is on its way")
    trace.add(BatchEvent(t=2.0, epoch=1, step=1, loss=1.0))
    trace.add(BatchEvent(t=3.0, epoch=1, step=3, loss=0.9))
    assert words(trace, runs_planned=2) == StatusWords(
        "running", "Epoch 1 of 3", detail="Run 1 of 2 · step 3 of 12", eta="ETA 4 s")
    assert words(trace, stopping=True) is None  # "Stopping…" stays until the run ends
    finished = trace_of(events, epochs_planned=3)
    assert words(finished) == StatusWords("finished", "Finished", detail="3 epochs in 5.00 s",
                                          eta="")
    assert words(trace_of([], epochs_planned=3)) is None  # no worker answered yet


def test_a_training_run_that_did_not_finish() -> None:
    trace = trace_of([StartedEvent(steps_per_epoch=4), EpochEvent(epoch=1),
                      CancelledEvent(epochs_done=1, forced=True)], epochs_planned=3)
    assert words(trace, stopping=True) == StatusWords(
        "cancelled", "Cancelled", eta="",
        detail="stopped after 1 epoch (the worker was stopped by force)")
    trace.status = RunStatus.INTERRUPTED
    assert words(trace) == StatusWords(
        "interrupted", "Interrupted", eta="",
        detail="xlagui closed after 1 epoch (the worker was stopped by force); it is kept")
    # Stopped while its worker was still starting (TensorFlow loading, deaf to the stop): no
    # epoch ran, and the forced end is no news (issue 31: "after 0 epochs (the worker was
    # stopped by force)").
    starting = trace_of([StartedEvent(steps_per_epoch=4), CancelledEvent(forced=True)],
                        epochs_planned=3)
    assert words(starting) == StatusWords(
        "cancelled", "Cancelled", eta="", detail="stopped while starting: no epoch ran")
    starting.status = RunStatus.INTERRUPTED
    assert words(starting) == StatusWords(
        "interrupted", "Interrupted", eta="", detail="xlagui closed while starting: no epoch ran")
    in_first = trace_of([StartedEvent(steps_per_epoch=4), BatchEvent(t=1.0, epoch=1, step=1),
                         CancelledEvent(forced=True)], epochs_planned=3)
    assert words(in_first).detail == (  # type: ignore[union-attr]
        "stopped during its first epoch: no epoch finished (the worker was stopped by force)")
    failed = trace_of([StartedEvent(), ErrorEvent(message="Out of memory", hint="Try less.")],
                      epochs_planned=3)
    assert words(failed, runs_planned=2) == StatusWords(
        "error", "Failed", detail="Run 1 of 2 · Out of memory",
        detail_tip="Out of memory\nTry less.", eta="")


def test_a_run_ended_without_saying_how() -> None:
    assert ended_words(RunStatus.INTERRUPTED) == StatusWords("interrupted", "Interrupted")
    assert ended_words(RunStatus.CANCELLED) == StatusWords("cancelled", "Cancelled")
    assert ended_words(RunStatus.ERROR) == StatusWords("error", "Failed")
    assert STOPPING == StatusWords("stopping", "Stopping…")


def test_a_side_whose_training_never_started() -> None:
    assert unstarted_words(RunStatus.NOT_RUN, measured=True) == StatusWords(
        "not run", "Not run", eta="",
        detail="Speed measured; xlagui closed before this side's training started")
    assert unstarted_words(RunStatus.NOT_RUN, measured=False).detail == (
        "xlagui closed before this side started")
    assert unstarted_words(RunStatus.CANCELLED, measured=True).detail == (
        "Speed measured; stopped before this side's training started")
    assert unstarted_words(RunStatus.CANCELLED, measured=False) == StatusWords(
        "cancelled", "Cancelled", detail="Stopped before this side started", eta="")


def test_the_speed_phase() -> None:
    def said(trace: RunTrace, stopping: bool = False) -> StatusWords | None:
        return measuring_words(trace, uses_xla=True, others="sides", stopping=stopping)

    trace = trace_of([StartedEvent(mode="measure")], epochs_planned=3)
    assert said(trace) == StatusWords(
        "compiling", "Warming up…",
        detail="measuring speed: first step (tracing and compiling with XLA), then a few "
        "steady ones")
    trace.add(WarmupEvent(first_step_seconds=4.0, warm_step_seconds=[0.5, 0.5]))
    assert said(trace) == StatusWords(
        "running", "Measuring speed", detail="0 blocks in turns with the other sides · first "
        "step 4.00 s")
    trace.add(BlockEvent(seq=0, steps=4, seconds=1.0))
    assert said(trace) == StatusWords(
        "running", "Measuring speed",
        detail="1 block in turns with the other sides · 0.25 s per step (median)")
    assert said(trace, stopping=True) is None
    trace.add(CancelledEvent())
    assert said(trace, stopping=True) == StatusWords(
        "cancelled", "Stopped", detail="stopped after 1 block; it is kept")
    trace.status = RunStatus.INTERRUPTED
    assert said(trace) == StatusWords(
        "interrupted", "Interrupted", detail="xlagui closed after 1 block; it is kept")
    failed = trace_of([StartedEvent(mode="measure"), ErrorEvent(message="Boom", hint="")],
                      epochs_planned=3)
    assert said(failed) == StatusWords("error", "Failed", detail="Boom", detail_tip="Boom")
