"""A measuring worker's work once set up: answer the parent's commands (`measure`) — warm up
(`warm_up`), time blocks of steps (`timed_block`), catch up and evaluate (`finish_measuring`) —
waiting after each answer until its own threads have gone quiet (`wait_until_quiet`).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from xlagui.core.machine.interference import busiest_processes, interference_between, read_cpu
from xlagui.core.protocol.compiles import StepFunction
from xlagui.core.protocol.events import (
    BlockEvent,
    CancelledEvent,
    FinishedEvent,
    RunSummary,
    WarmupEvent,
    WorkerCommand,
)
from xlagui.core.protocol.identity import Command, WorkerMode
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.worker.io import EventSink
from xlagui.core.worker.setup import Setup, finish_summary

# A worker is quiet when its threads used less than this share of one core over a poll.
QUIET_CPU_SHARE = 0.1
QUIET_POLL_SECONDS = 0.02
QUIET_MAX_SECONDS = 3.0


class Stopped(Exception):
    """The parent asked a measuring worker to stop in the middle of its work."""


def measure(
    spec: RunSpec,
    setup: Setup,
    sink: EventSink,
    cancel: threading.Event,
    commands: queue.Queue[WorkerCommand],
) -> None:
    """Answer the parent's commands until `finish` or `cancel`.

    A step is Keras' own compiled train function on the next batch of the real tf.data
    pipeline (the very function `fit` calls), so what is timed is what training runs; reading
    the loss at the end of a timed stretch waits for the device to finish.
    """
    stepper = Stepper(setup, cancel)
    try:
        while True:
            command = commands.get()
            if command.cmd is Command.CANCEL:
                raise Stopped()
            if command.cmd is Command.WARMUP:
                sink.emit(warm_up(stepper, command.steps))
            elif command.cmd is Command.BLOCK:
                sink.emit(timed_block(stepper, command, spec.config.busy_percent))
            elif command.cmd is Command.FINISH:
                summary = finish_measuring(stepper, setup, cancel, command.steps)
                setup.compiles.flush()
                sink.emit(FinishedEvent(summary=finish_summary(spec, setup, summary)))
                return
    except Stopped:
        setup.compiles.flush()
        reason = f"stopped after {stepper.steps_done} steps"
        sink.emit(CancelledEvent(epochs_done=0, reason=reason))


class Stepper:
    """A measuring worker's training steps on the pipeline's endless stream, with the counts
    its summary reports.

    A step here is a batch, whatever the arm: with Keras' `steps_per_execution` of N (the `spe`
    lever), one call of the train function trains N batches, so `calls` turns the parent's
    batches into calls and every count (`steps_done`, a block's `steps`) is in batches. The
    parent then compares seconds per batch of every arm alike."""

    def __init__(self, setup: Setup, cancel: threading.Event) -> None:
        self.model = setup.model
        self.compiles = setup.compiles
        self._train = setup.steps  # Keras' compiled train function, on this backend
        self._batches = iter(setup.datasets.stream)
        self._cancel = cancel
        # Batches one call trains (Keras keeps it on the compiled model; 1 unless asked).
        self.per_call = max(1, int(getattr(self.model, "steps_per_execution", 1) or 1))
        self.steps_done = 0
        self.nonfinite = 0

    def calls(self, batches: int) -> int:
        """Calls that train at least `batches` batches (a block of 10 at 8 per call is 2
        calls, 16 batches: its event says 16)."""
        return -(-max(0, batches) // self.per_call)

    def step(self) -> Any:
        """One call of the train function (`per_call` batches), queued on the device; its logs,
        not yet waited for."""
        if self._cancel.is_set():
            raise Stopped()
        logs = self._train(self._batches)
        self.steps_done += self.per_call
        return logs

    def synced(self, logs: Any) -> float | None:
        """The step's loss, once the device has finished it; None (and counted) if not finite."""
        loss = float(logs["loss"])  # waits for the step's result
        if loss == loss and abs(loss) != float("inf"):
            return loss
        self.nonfinite += 1
        return None


def warm_up(stepper: Stepper, steps: int) -> WarmupEvent:
    """The first step (the compile) and at least one more, each timed on its own (and watched
    for compiles: the timed blocks after them are not).

    Times are per batch: a call of N batches (`Stepper.per_call`) counts as N steady batches
    of a Nth of its time each, and the first call's other N - 1 batches are taken out of the
    first step at that steady time (the compile and one batch stay, as with one per call)."""
    watch = stepper.compiles
    watch.begin(StepFunction.TRAIN)
    t0 = time.perf_counter()
    stepper.synced(stepper.step())
    first = time.perf_counter() - t0
    watch.end(StepFunction.TRAIN, 0)
    warm = []
    for _ in range(max(1, stepper.calls(steps))):
        watch.begin(StepFunction.TRAIN)
        t0 = time.perf_counter()
        stepper.synced(stepper.step())
        warm.append((time.perf_counter() - t0) / stepper.per_call)
        watch.end(StepFunction.TRAIN, 0)
    watch.settle()  # after the warm steps: outside every timed block
    wait_until_quiet()
    steady = sorted(warm)[len(warm) // 2]
    first = max(first - (stepper.per_call - 1) * steady, min(warm))
    return WarmupEvent(first_step_seconds=first, warm_step_seconds=warm)


def timed_block(stepper: Stepper, command: WorkerCommand, busy_percent: float) -> BlockEvent:
    """`command.steps` batches (rounded up to whole calls) timed as one stretch, synced once
    at its end; the event says the batches trained, and what else used the machine meanwhile
    (disturbed above `busy_percent`: then the busiest processes are named, untimed)."""
    calls = max(1, stepper.calls(command.steps))
    before = read_cpu()
    t0 = time.perf_counter()
    logs = None
    for _ in range(calls):
        logs = stepper.step()
    loss = stepper.synced(logs)
    seconds = time.perf_counter() - t0
    interference = interference_between(before, read_cpu(), busy_percent, busiest_processes)
    quiet = wait_until_quiet()
    return BlockEvent(
        seq=command.seq,
        steps=calls * stepper.per_call,
        seconds=seconds,
        loss=loss,
        quiet_seconds=quiet,
        interference=interference,
    )


def finish_measuring(
    stepper: Stepper, setup: Setup, cancel: threading.Event, catch_up_steps: int
) -> RunSummary:
    """Catch up, then evaluate: the measuring worker's summary."""
    # An arm that sat out rounds first catches up, untimed, with the baseline's steps: every
    # arm has then trained the same steps on the same batches, and its validation accuracy now
    # is the quick accuracy-parity check (see `xlagui.core.analysis.ranking`).
    logs = None
    for _ in range(stepper.calls(catch_up_steps)):
        logs = stepper.step()
    if catch_up_steps:
        stepper.synced(logs)
    setup.steps_synced()
    val_accuracy, val_loss = evaluate(stepper.model, setup.datasets.val, cancel,
                                      [setup.compiles.callback()])
    if cancel.is_set():
        raise Stopped()
    return RunSummary(
        mode=WorkerMode.MEASURE,
        steps_done=stepper.steps_done,
        nonfinite_losses=stepper.nonfinite,
        final_val_accuracy=val_accuracy,
        final_val_loss=val_loss,
    )


def wait_until_quiet(
    max_seconds: float = QUIET_MAX_SECONDS,
    poll: float = QUIET_POLL_SECONDS,
    share: float = QUIET_CPU_SHARE,
    cpu_seconds: Callable[[], float] = time.process_time,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Wait until this process's own threads have gone idle; return the seconds waited.

    After a timed block the work does not stop with the last step: tf.data refills its prefetch
    buffer (decoding and augmenting the next batches) and TensorFlow's thread pools wind down.
    If the worker replied at once, that leftover work would run inside the next arm's timed
    block, on the same cores, and which arm it lands on changes with the rotating order: noise
    in every ratio, worst for the fastest arm. So a worker answers only once its process CPU
    time (all threads, `time.process_time`) grows by less than `share` of a core over a poll,
    or after `max_seconds` at most. The wait is outside the timed stretch.
    """
    if os.environ.get("XLAGUI_QUIET_WAIT", "1") == "0":
        return 0.0
    start = clock()
    last = cpu_seconds()
    while clock() - start < max_seconds:
        sleep(poll)
        now = cpu_seconds()
        if now - last < poll * share:
            break
        last = now
    return clock() - start


def evaluate(
    model: Any, val: Any, cancel: threading.Event, callbacks: list[Any] | None = None
) -> tuple[float | None, float | None]:
    """Validation accuracy and loss of the model as it is now (None where there is no
    validation set or the loss is not finite); `callbacks`: more of `evaluate`'s (the compile
    watch's)."""
    import keras  # lazy: see `setup.set_up`

    if val is None:
        return None, None

    def stop_if_cancelled(batch: int, logs: Any = None) -> None:
        if cancel.is_set():
            model.stop_evaluating = True

    logs = model.evaluate(
        val,
        verbose=0,
        return_dict=True,
        callbacks=[keras.callbacks.LambdaCallback(on_test_batch_end=stop_if_cancelled),
                   *(callbacks or [])],
    )

    def finite(key: str) -> float | None:
        v = logs.get(key)
        return float(v) if v is not None and float(v) == float(v) else None

    return finite("accuracy"), finite("loss")
