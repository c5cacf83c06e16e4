"""A training worker's work once set up: `fit` the epochs with a callback that streams batch and
epoch events and stops at a cancel (`train`), or the one inspecting step (`inspect`).

After the timed epochs, which validation images the model gets right (`val_correct`), for
McNemar's paired test between two runs.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from xlagui.core.analysis import accuracy
from xlagui.core.analysis.stats import summarize_epochs
from xlagui.core.machine.interference import (
    CpuReading,
    busiest_processes,
    interference_between,
    read_cpu,
)
from xlagui.core.protocol.compiles import StepFunction
from xlagui.core.protocol.events import (
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    FinishedEvent,
    RunSummary,
)
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.omissions import Omission, OmissionKind
from xlagui.core.protocol.settings import DEFAULTS
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.worker import tensorboard as tboard
from xlagui.core.worker.errors import error_message
from xlagui.core.worker.io import EventSink
from xlagui.core.worker.setup import Setup, finish_summary

# Batch events are throttled: the loss plot needs a few points a second, not every step.
BATCH_EVENT_INTERVAL = 0.05


class TrainState:
    """What the callback keeps between Keras' calls, and what the run's summary reads."""

    def __init__(self, steps: int = 0, writer: tboard.ScalarWriter | None = None) -> None:
        self.steps = steps  # per epoch
        self.writer = writer
        self.epochs: list[EpochEvent] = []
        self.epochs_done = 0
        self.epoch = 0
        self.epoch_t0 = 0.0
        self.cumulative = 0.0
        self.last_batch_emit = 0.0
        # What else used the machine: read when each epoch begins and ends (see
        # `xlagui.core.protocol.interference`); the run's `RunConfig.busy_percent`.
        self.busy_percent: float = DEFAULTS["busy_percent"]
        self.epoch_cpu: CpuReading | None = None


def make_callback(sink: EventSink, cancel: threading.Event, state: TrainState) -> Any:
    """The Keras callback of a training run, built here: keras is only imported inside the run."""
    import keras  # lazy: see `setup.set_up`

    class EventCallback(keras.callbacks.Callback):  # type: ignore[misc]  # Keras is untyped
        def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
            state.epoch = epoch + 1
            state.epoch_cpu = read_cpu()
            state.epoch_t0 = time.perf_counter()
            state.last_batch_emit = 0.0

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            if cancel.is_set():
                self.model.stop_training = True
                return
            now = time.perf_counter()
            last_step = batch + 1 == state.steps
            # Reading the loss waits for the step to finish; do it only when it is shown.
            if last_step or now - state.last_batch_emit >= BATCH_EVENT_INTERVAL:
                state.last_batch_emit = now
                loss = float(logs["loss"]) if logs and "loss" in logs else float("nan")
                sink.emit(BatchEvent(epoch=state.epoch, step=batch + 1, loss=loss))

        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            if cancel.is_set():
                self.model.stop_evaluating = True
                self.model.stop_training = True

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            if not cancel.is_set():
                _epoch_done(sink, state, epoch, logs or {})

    return EventCallback()


def _epoch_done(sink: EventSink, state: TrainState, epoch: int, logs: dict[str, Any]) -> None:
    secs = time.perf_counter() - state.epoch_t0
    state.cumulative += secs
    interference = (
        interference_between(state.epoch_cpu, read_cpu(), state.busy_percent, busiest_processes)
        if state.epoch_cpu is not None else None
    )

    def metric(key: str) -> float | None:
        return float(logs[key]) if key in logs else None

    ev = EpochEvent(
        epoch=epoch + 1,
        loss=metric("loss") or 0.0,
        accuracy=metric("accuracy") or 0.0,
        val_loss=metric("val_loss"),
        val_accuracy=metric("val_accuracy"),
        epoch_seconds=secs,
        cumulative_seconds=state.cumulative,
        interference=interference,
    )
    state.epochs.append(ev)
    state.epochs_done = epoch + 1
    sink.emit(ev)
    if state.writer is not None:  # after the epoch's time was taken: never inside it
        state.writer.write_epoch(ev, state.steps)


def train(
    spec: RunSpec, setup: Setup, sink: EventSink, cancel: threading.Event, state: TrainState
) -> None:
    """Fit the configured epochs, streaming events; end with `finished` or `cancelled`."""
    state.steps = setup.datasets.steps_per_epoch
    state.busy_percent = spec.config.busy_percent
    state.writer = (
        tboard.ScalarWriter(spec.tensorboard_dir, setup.tf.summary)
        if spec.tensorboard_dir
        else None
    )
    setup_seconds = sink.now()
    setup.model.fit(
        setup.datasets.train,
        validation_data=setup.datasets.val,
        epochs=spec.config.epochs,
        verbose=0,
        callbacks=[make_callback(sink, cancel, state), setup.compiles.callback()],
    )
    if cancel.is_set():
        setup.compiles.flush()
        sink.emit(CancelledEvent(epochs_done=state.epochs_done))
        return
    writer = state.writer
    if writer is not None:
        writer.close()
    correct, not_kept = val_correct(setup.model, setup.datasets.val,
                                    [setup.compiles.callback()])
    setup.compiles.flush()
    summary = dataclasses.replace(
        summarize_epochs(state.epochs),
        setup_seconds=setup_seconds,
        val_correct=correct,
        omissions=(writer.omissions() if writer is not None else ()) + not_kept,
    )
    sink.emit(FinishedEvent(summary=finish_summary(spec, setup, summary)))


def inspect(spec: RunSpec, setup: Setup, sink: EventSink) -> None:
    """One training step, compiled with XLA's dump on, outside every timed run: what "What XLA
    did" reads, without the dump's cost in any figure (BENCHMARKS.md)."""
    setup.compiles.begin(StepFunction.TRAIN)
    logs = setup.steps(iter(setup.datasets.stream))
    float(logs["loss"])  # waits for the step
    setup.compiles.end(StepFunction.TRAIN, 0)
    setup.compiles.flush()  # its cost: the whole step (no steady one to take away)
    summary = RunSummary(mode=WorkerMode.INSPECT, steps_done=1)
    sink.emit(FinishedEvent(summary=finish_summary(spec, setup, summary)))


def val_correct(model: Any, val: Any, callbacks: list[Any] | None = None
                ) -> tuple[str, tuple[Omission, ...]]:
    """Which validation images the trained model gets right, in the pipeline's fixed order
    (`accuracy.correct_bits`), for McNemar's paired test between two runs; after the timed
    epochs. ("", (its omission,)) when it could not be had: it is evidence, not the run.
    `callbacks`: `predict`'s (the compile watch's)."""
    import numpy as np  # lazy: with TensorFlow, see `setup.set_up`

    if val is None:
        return "", ()
    try:
        probs = np.asarray(model.predict(val, verbose=0, callbacks=callbacks))
        labels = np.concatenate([np.asarray(y).reshape(-1) for _, y in val])
        if probs.ndim == 2 and probs.shape[1] > 1:
            guess = probs.argmax(axis=1)
        else:
            guess = (probs.reshape(-1) > 0.5).astype(labels.dtype)
        return accuracy.correct_bits([bool(ok) for ok in guess == labels]), ()
    except Exception as exc:  # an optional figure never fails the run
        return "", (Omission(OmissionKind.VAL_CORRECT, error_message(exc)),)
