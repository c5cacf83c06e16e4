# Over 500 lines on purpose: one worker process's whole life (spec, set-up, fit, measure, inspect,
# events), read top to bottom; what it calls (pipeline, model, hlo, tensorboard) lives elsewhere.
"""One training run in a fresh process: `python -m xlagui.core.worker.child SPEC.json`.

XLA settings are process-global and TensorFlow never gives memory back, so every run gets its
own process. The parent sets the environment before this process imports TensorFlow (which
device is visible, XLA flags, the HLO dump folder); see `worker_process.worker_env`.

Events go to the original stdout, one JSON object per line. Anything else that would be printed
(Python or TensorFlow's C++ logging) goes to stderr, which the parent points at the run's log.
Stdin carries commands (`events.WorkerCommand`, one JSON object a line): `cancel` asks the run
to stop at the next batch; end-of-file means the parent is gone, and the worker exits at once
rather than live on as an orphan. A spec with
`"mode": "measure"` makes a measuring worker instead: it builds the same pipeline and model, then
runs warm-up and blocks of training steps as the parent asks (see `events.WorkerCommand`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import queue
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from xlagui.core.analysis import accuracy
from xlagui.core.analysis.stats import summarize_epochs
from xlagui.core.data.pipeline import build_datasets, warm_cache
from xlagui.core.model.build import build_compiled
from xlagui.core.model.check import check_main
from xlagui.core.protocol.arms import cpu_model
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    BatchEvent,
    BlockEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    ProtocolError,
    RunSummary,
    StartedEvent,
    WarmupEvent,
    WorkerCommand,
    write_event,
)
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.worker import tensorboard as tboard
from xlagui.core.xla import evidence as xla_evidence
from xlagui.core.xla import hlo

# Batch events are throttled: the loss plot needs a few points a second, not every step.
BATCH_EVENT_INTERVAL = 0.05
EXIT_PARENT_GONE = 3
# Set once the run's last event (finished, cancelled or error) is out: the parent may close our
# stdin as soon as it reads it, and that end of file is then no reason to exit with
# EXIT_PARENT_GONE ahead of the main thread's own exit status.
_TERMINAL_SENT = threading.Event()
_TERMINAL_TYPES = frozenset({"finished", "cancelled", "error"})


class EventSink:
    def __init__(self, stream: TextIO, t0: float) -> None:
        self._stream = stream
        self._t0 = t0
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.perf_counter() - self._t0

    def emit(self, event: Event) -> None:
        event.t = round(self.now(), 6)
        with self._lock:
            if event.type in _TERMINAL_TYPES:
                _TERMINAL_SENT.set()
            write_event(self._stream, event)


def _redirect_stdout() -> TextIO:
    """Keep the real stdout for events; send everything else printed to fd 1 to stderr."""
    sys.stdout.flush()
    events_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    return os.fdopen(events_fd, "w", buffering=1, encoding="utf-8")


def _watch_stdin(cancel: threading.Event, commands: queue.Queue[WorkerCommand]) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            command = WorkerCommand.from_json(line)
        except ProtocolError as exc:
            print(f"ignored a bad command: {exc}", file=sys.stderr)
            continue
        if command.cmd == "cancel":
            cancel.set()
        commands.put(command)
    if _TERMINAL_SENT.is_set():
        return  # the parent read our last event and let go; main() exits with its own status
    # End of file: the parent died or closed the pipe. Nobody is listening any more.
    os._exit(EXIT_PARENT_GONE)


def peak_rss_bytes() -> int | None:
    try:
        import resource  # lazy: Unix only; the ImportError picks Windows' way

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except ImportError:  # Windows
        import psutil  # lazy: Windows only

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))


def error_hint(exc: BaseException, config: RunConfig) -> str:
    name = type(exc).__name__
    text = str(exc)
    if (
        name == "ResourceExhaustedError"
        or isinstance(exc, MemoryError)
        or "OOM" in text
        or "bad_alloc" in text
    ):
        return (
            f"The run ran out of memory training {config.model.label} with batch size "
            f"{config.batch_size} and image size {config.image_size}. Try a smaller batch size "
            "or image size."
        )
    if "XLA" in text or "xla" in name.lower() or "jit" in text.lower():
        return (
            "XLA failed to compile this model on this device. Compare with the other XLA mode "
            "(jit or autocluster) or report the TensorFlow version and the run's log."
        )
    if "GPU" in text or "CUDA" in text:
        return (
            "The GPU could not be used. Check that a CUDA build of TensorFlow is installed "
            "(pip install 'tensorflow[and-cuda]') and that the driver works (nvidia-smi)."
        )
    if isinstance(exc, (FileNotFoundError, PermissionError)):
        return "An image could not be read: check that the dataset folder is still there."
    return "See the run's log for details."


def probe_devices() -> list[dict[str, str]]:
    """The devices TensorFlow can see here, for the GUI's device list."""
    import tensorflow as tf  # lazy: see `_setup`

    out = [{"id": "cpu", "name": platform.processor() or "CPU", "kind": "CPU"}]
    gpus = tf.config.list_physical_devices("GPU")
    for i, gpu in enumerate(gpus):
        details = tf.config.experimental.get_device_details(gpu)
        out.append({"id": f"gpu:{i}", "name": details.get("device_name", gpu.name), "kind": "GPU"})
    if len(gpus) > 1:
        out.append({"id": "all", "name": f"all {len(gpus)} GPUs (MirroredStrategy)", "kind": "GPU"})
    return out


class _Callback:
    """Builds the Keras callback lazily: keras is only imported inside the run."""

    @staticmethod
    def make(sink: EventSink, cancel: threading.Event, state: dict[str, Any]) -> Any:
        import keras  # lazy: see `_setup`

        class EventCallback(keras.callbacks.Callback):  # type: ignore[misc]  # Keras is untyped
            def on_epoch_begin(self, epoch: int, logs: Any = None) -> None:
                state["epoch"] = epoch + 1
                state["epoch_t0"] = time.perf_counter()
                state["last_batch_emit"] = 0.0

            def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
                if cancel.is_set():
                    self.model.stop_training = True
                    return
                now = time.perf_counter()
                last_step = batch + 1 == state["steps"]
                # Reading the loss waits for the step to finish; do it only when it is shown.
                if last_step or now - state["last_batch_emit"] >= BATCH_EVENT_INTERVAL:
                    state["last_batch_emit"] = now
                    loss = float(logs["loss"]) if logs and "loss" in logs else float("nan")
                    sink.emit(BatchEvent(epoch=state["epoch"], step=batch + 1, loss=loss))

            def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
                if cancel.is_set():
                    self.model.stop_evaluating = True
                    self.model.stop_training = True

            def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
                if cancel.is_set():
                    return
                secs = time.perf_counter() - state["epoch_t0"]
                state["cumulative"] += secs
                logs = logs or {}

                def metric(key: str) -> float | None:
                    return float(logs[key]) if key in logs else None

                ev = EpochEvent(
                    epoch=epoch + 1,
                    loss=metric("loss") or 0.0,
                    accuracy=metric("accuracy") or 0.0,
                    val_loss=metric("val_loss"),
                    val_accuracy=metric("val_accuracy"),
                    epoch_seconds=secs,
                    cumulative_seconds=state["cumulative"],
                )
                state["epochs"].append(ev)
                state["epochs_done"] = epoch + 1
                sink.emit(ev)
                writer = state.get("tensorboard")
                if writer is not None:  # after the epoch's time was taken: never inside it
                    writer.write_epoch(ev, state["steps"])

        return EventCallback()


class Setup:
    """What both kinds of worker build before the first step: the pipeline and the model,
    with XLA switched as asked and read back."""

    def __init__(self, tf: Any, model: Any, datasets: Any, in_effect: bool) -> None:
        self.tf = tf
        self.model = model
        self.datasets = datasets
        self.in_effect = in_effect


def _setup(spec: RunSpec, sink: EventSink, mode: str) -> Setup:
    # lazy: TensorFlow must load after the parent's environment is in place (XLA flags, the
    # dump folder, the visible devices), and `--probe` or `--tensorboard-text` need none of it
    import keras
    import tensorflow as tf

    config = spec.config
    facts = spec.xla_mode.facts
    # The dtype policy applies to layers built after it is set: set it before the model.
    # The value, not the enum: Keras reads a `.name` attribute as the dtype's name (FLOAT32).
    keras.mixed_precision.set_global_policy(spec.precision.value)
    # The article's switch. On CPU it only engages with TF_XLA_FLAGS=--tf_xla_cpu_global_jit,
    # which the parent has set (`ModeFacts.tf_xla_flags`).
    tf.config.optimizer.set_jit("autoclustering" if facts.autoclusters else False)
    keras.utils.set_random_seed(config.seed)

    gpus = tf.config.list_physical_devices("GPU")
    if config.device != "cpu" and not gpus:
        raise RuntimeError(
            f"device {config.device} was asked for but TensorFlow sees no GPU on this machine"
        )
    if mode == "measure":
        # Two measuring workers share the GPU: each takes only what it uses.
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
    datasets = build_datasets(
        spec.train,
        spec.val,
        num_classes=len(spec.class_names),
        image_size=config.image_size,
        batch_size=config.batch_size,
        seed=config.seed,
        augment=config.augment,
        cache_dir=spec.run_dir / "cache",
    )
    warm_cache(datasets)
    model = _build_model(tf, spec)
    in_effect = _xla_in_effect(tf, model, spec.xla_mode)
    read_back = read_back_policy(model)
    if spec.precision == "float32" and read_back["policy"] != "float32":
        raise RuntimeError(
            f"the run asked for float32 but the {read_back['policy']} policy is in effect; "
            "refusing to call it a baseline"
        )
    sink.emit(
        StartedEvent(
            protocol=PROTOCOL_VERSION,
            mode=mode,
            run_id=spec.run_id,
            variant=spec.variant,
            xla_mode=spec.xla_mode.value,
            xla_in_effect=in_effect,
            device_name=_device_name(tf, config.device, gpus),
            device_kind="GPU" if config.device != "cpu" else "CPU",
            versions={
                "python": platform.python_version(),
                "tensorflow": tf.__version__,
                "keras": keras.__version__,
                "platform": platform.platform(),
            },
            config=config,
            seed=config.seed,
            class_names=spec.class_names,
            train_count=datasets.train_count,
            val_count=datasets.val_count,
            steps_per_epoch=datasets.steps_per_epoch,
            pid=os.getpid(),
            setup_seconds=sink.now(),
            precision=spec.precision,
            **read_back,
        )
    )
    return Setup(tf, model, datasets, in_effect)


def _build_model(tf: Any, spec: RunSpec) -> Any:
    """The model the comparison chose (`config.model`: a built-in, a .keras or a .py file),
    compiled with the mode's `jit_compile`; on every GPU at once for device "all"."""
    config = spec.config

    def build() -> Any:
        return build_compiled(config.model, config.image_size, len(spec.class_names),
                              config.seed, spec.xla_mode.facts.jit_compile).model

    if config.device != "all":
        return build()
    with tf.distribute.MirroredStrategy().scope():
        return build()


def _xla_in_effect(tf: Any, model: Any, xla_mode: XlaMode) -> bool:
    """Whether XLA is on, read back from what Keras and TensorFlow say (for "auto": what
    Keras resolved it to). A baseline with XLA on is refused: it would be no baseline."""
    facts = xla_mode.facts
    if facts.jit_compile:
        return bool(model.jit_compile)
    if facts.autoclusters:
        return bool(tf.config.optimizer.get_jit())
    in_effect = bool(model.jit_compile) or bool(tf.config.optimizer.get_jit())
    if xla_mode is XlaMode.OFF and in_effect:
        raise RuntimeError("the baseline has XLA switched on; refusing to call it a baseline")
    return in_effect


def _device_name(tf: Any, device: str, gpus: list[Any]) -> str:
    """The device the run trains on, in words: the GPU's name ("2 × NVIDIA H200" for every
    GPU at once), or the CPU's model."""
    if device != "cpu" and gpus:
        idx = 0 if device == "all" else int(device.split(":")[1])
        details = tf.config.experimental.get_device_details(gpus[min(idx, len(gpus) - 1)])
        logical = tf.config.list_logical_devices("GPU")
        name = str(details.get("device_name", logical[0].name if logical else "GPU"))
        return f"{len(gpus)} × {name}" if device == "all" else name
    return cpu_model() or platform.processor() or platform.machine() or "CPU"


def read_back_policy(model: Any) -> dict[str, Any]:
    """What the compiled model really computes in: its policy, the first convolution's compute
    and variable dtypes, the output layer's dtype, and whether the optimizer scales the loss."""
    import keras  # lazy: see `_setup`

    first = next((layer for layer in model.layers if layer.weights), model.layers[0])
    return {
        "policy": str(model.dtype_policy.name),
        "compute_dtype": str(first.compute_dtype),
        "variable_dtype": str(first.variable_dtype),
        "output_dtype": str(model.layers[-1].compute_dtype),
        "loss_scale": isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer),
    }


def _finish_summary(spec: RunSpec, setup: Setup, summary: RunSummary) -> RunSummary:
    run_dir = spec.run_dir
    sys.stderr.flush()
    return dataclasses.replace(
        summary,
        peak_rss_bytes=peak_rss_bytes(),
        peak_device_bytes=_peak_device_bytes(setup.tf, spec.config.device),
        cache=setup.datasets.cache,
        xla_mode=spec.xla_mode.value,
        xla_in_effect=setup.in_effect,
        xla_evidence=xla_evidence.collect(run_dir / "xla", run_dir / "worker.log"),
        # What XLA did, read from the dump (about 20 ms for this CNN), kept in the summary so a
        # reopened comparison has it when the dump folder is gone.
        xla_did=hlo.read_dump(run_dir / "xla", run_dir / "worker.log")
        if spec.xla_mode.asks_for_xla
        else None,
    )


def run(
    spec: RunSpec,
    sink: EventSink,
    cancel: threading.Event,
    commands: queue.Queue[WorkerCommand] | None = None,
) -> None:
    config = spec.config
    mode = spec.mode
    state: dict[str, Any] = {"epochs": [], "epochs_done": 0, "cumulative": 0.0, "steps": 0}
    try:
        setup = _setup(spec, sink, mode)
        if cancel.is_set():
            sink.emit(CancelledEvent(epochs_done=0))
            return
        if mode == "measure":
            measure(spec, setup, sink, cancel, commands or queue.Queue())
            return
        if mode == "inspect":
            # One training step, compiled with XLA's dump on, outside every timed run: what
            # "What XLA did" reads, without the dump's cost in any figure (BENCHMARKS.md).
            setup.model.make_train_function()
            logs = setup.model.train_function(iter(setup.datasets.stream))
            float(logs["loss"])  # waits for the step
            summary = RunSummary(mode="inspect", steps_done=1)
            sink.emit(FinishedEvent(summary=_finish_summary(spec, setup, summary)))
            return
        state["steps"] = setup.datasets.steps_per_epoch
        writer = (
            tboard.ScalarWriter(spec.tensorboard_dir, setup.tf.summary)
            if spec.tensorboard_dir
            else None
        )
        state["tensorboard"] = writer
        state["setup_seconds"] = sink.now()
        callback = _Callback.make(sink, cancel, state)
        setup.model.fit(
            setup.datasets.train,
            validation_data=setup.datasets.val,
            epochs=config.epochs,
            verbose=0,
            callbacks=[callback],
        )
        if cancel.is_set():
            sink.emit(CancelledEvent(epochs_done=state["epochs_done"]))
            return
        if writer is not None:
            writer.close()
        correct, correct_note = _val_correct(setup.model, setup.datasets.val)
        summary = dataclasses.replace(
            summarize_epochs(state["epochs"]),
            setup_seconds=state.get("setup_seconds"),
            val_correct=correct,
            notes=(writer.notes() if writer is not None else ()) + correct_note,
        )
        sink.emit(FinishedEvent(summary=_finish_summary(spec, setup, summary)))
    except BaseException as exc:  # everything becomes an error event, then a non-zero exit
        if cancel.is_set() and not isinstance(exc, MemoryError):
            sink.emit(CancelledEvent(epochs_done=state["epochs_done"]))
            return
        sink.emit(
            ErrorEvent(
                error_type=type(exc).__name__,
                message=error_message(exc),
                hint=error_hint(exc, config),
                details=traceback.format_exc(),
            )
        )
        raise


class _Stopped(Exception):
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
    stepper = _Stepper(setup, cancel)
    try:
        while True:
            command = commands.get()
            if command.cmd == "cancel":
                raise _Stopped()
            if command.cmd == "warmup":
                sink.emit(_warm_up(stepper, command.steps))
            elif command.cmd == "block":
                sink.emit(_timed_block(stepper, command))
            elif command.cmd == "finish":
                summary = _finish_measuring(stepper, setup, cancel, command.steps)
                sink.emit(FinishedEvent(summary=_finish_summary(spec, setup, summary)))
                return
    except _Stopped:
        reason = f"stopped after {stepper.steps_done} steps"
        sink.emit(CancelledEvent(epochs_done=0, reason=reason))


class _Stepper:
    """A measuring worker's training steps on the pipeline's endless stream, with the counts
    its summary reports."""

    def __init__(self, setup: Setup, cancel: threading.Event) -> None:
        self.model = setup.model
        self.model.make_train_function()
        self._batches = iter(setup.datasets.stream)
        self._cancel = cancel
        self.steps_done = 0
        self.nonfinite = 0

    def step(self) -> Any:
        """One step, queued on the device; its logs, not yet waited for."""
        if self._cancel.is_set():
            raise _Stopped()
        logs = self.model.train_function(self._batches)
        self.steps_done += 1
        return logs

    def synced(self, logs: Any) -> float | None:
        """The step's loss, once the device has finished it; None (and counted) if not finite."""
        loss = float(logs["loss"])  # waits for the step's result
        if loss == loss and abs(loss) != float("inf"):
            return loss
        self.nonfinite += 1
        return None


def _warm_up(stepper: _Stepper, steps: int) -> WarmupEvent:
    """The first step (the compile) and at least one more, each timed on its own."""
    t0 = time.perf_counter()
    stepper.synced(stepper.step())
    first = time.perf_counter() - t0
    warm = []
    for _ in range(max(1, steps)):
        t0 = time.perf_counter()
        stepper.synced(stepper.step())
        warm.append(time.perf_counter() - t0)
    wait_until_quiet()
    return WarmupEvent(first_step_seconds=first, warm_step_seconds=warm)


def _timed_block(stepper: _Stepper, command: WorkerCommand) -> BlockEvent:
    """`command.steps` steps timed as one stretch, synced once at its end."""
    t0 = time.perf_counter()
    logs = None
    for _ in range(command.steps):
        logs = stepper.step()
    loss = stepper.synced(logs)
    seconds = time.perf_counter() - t0
    quiet = wait_until_quiet()
    return BlockEvent(
        seq=command.seq,
        steps=command.steps,
        seconds=seconds,
        loss=loss,
        quiet_seconds=quiet,
    )


def _finish_measuring(
    stepper: _Stepper, setup: Setup, cancel: threading.Event, catch_up_steps: int
) -> RunSummary:
    """Catch up, then evaluate: the measuring worker's summary."""
    # An arm that sat out rounds first catches up, untimed, with the baseline's steps: every
    # arm has then trained the same steps on the same batches, and its validation accuracy now
    # is the quick accuracy-parity check (see `xlagui.core.analysis.ranking`).
    logs = None
    for _ in range(catch_up_steps):
        logs = stepper.step()
    if catch_up_steps:
        stepper.synced(logs)
    val_accuracy, val_loss = _evaluate(stepper.model, setup.datasets.val, cancel)
    if cancel.is_set():
        raise _Stopped()
    return RunSummary(
        mode="measure",
        steps_done=stepper.steps_done,
        nonfinite_losses=stepper.nonfinite,
        final_val_accuracy=val_accuracy,
        final_val_loss=val_loss,
    )


# A worker is quiet when its threads used less than this share of one core over a poll.
QUIET_CPU_SHARE = 0.1
QUIET_POLL_SECONDS = 0.02
QUIET_MAX_SECONDS = 3.0


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


def _val_correct(model: Any, val: Any) -> tuple[str, tuple[str, ...]]:
    """Which validation images the trained model gets right, in the pipeline's fixed order
    (`accuracy.correct_bits`), for McNemar's paired test between two runs; after the timed
    epochs. ("", (note,)) when it could not be had: it is evidence, not the run."""
    import numpy as np  # lazy: with TensorFlow, see `_setup`

    if val is None:
        return "", ()
    try:
        probs = np.asarray(model.predict(val, verbose=0))
        labels = np.concatenate([np.asarray(y).reshape(-1) for _, y in val])
        if probs.ndim == 2 and probs.shape[1] > 1:
            guess = probs.argmax(axis=1)
        else:
            guess = (probs.reshape(-1) > 0.5).astype(labels.dtype)
        return accuracy.correct_bits([bool(ok) for ok in guess == labels]), ()
    except Exception as exc:  # an optional figure never fails the run
        return "", (f"per-image validation results not kept: {error_message(exc)}",)


def _evaluate(
    model: Any, val: Any, cancel: threading.Event
) -> tuple[float | None, float | None]:
    """Validation accuracy and loss of the model as it is now (None where there is no
    validation set or the loss is not finite)."""
    import keras  # lazy: see `_setup`

    if val is None:
        return None, None

    def stop_if_cancelled(batch: int, logs: Any = None) -> None:
        if cancel.is_set():
            model.stop_evaluating = True

    logs = model.evaluate(
        val,
        verbose=0,
        return_dict=True,
        callbacks=[keras.callbacks.LambdaCallback(on_test_batch_end=stop_if_cancelled)],
    )

    def finite(key: str) -> float | None:
        v = logs.get(key)
        return float(v) if v is not None and float(v) == float(v) else None

    return finite("accuracy"), finite("loss")


def error_message(exc: BaseException) -> str:
    """One line a person can read; TensorFlow's first line is often just "Graph execution
    error:", with the cause further down."""
    text = str(exc)
    for line in text.splitlines():
        if "OOM when allocating" in line:
            return "out of memory: " + line.strip()[:300]
    for line in text.splitlines():
        line = line.strip()
        if line and line.rstrip(":") not in ("Graph execution error", "Detected at node"):
            return line[:500]
    return type(exc).__name__


def _peak_device_bytes(tf: Any, device: str) -> int | None:
    if device == "cpu":
        return None  # TensorFlow reports no device memory for the CPU; peak RSS covers it
    try:
        idx = 0 if device == "all" else int(device.split(":")[1])
        return int(tf.config.experimental.get_memory_info(f"GPU:{idx}")["peak"])
    except Exception:  # older drivers or builds do not report it
        return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    t0 = time.perf_counter()
    events = _redirect_stdout()
    if argv and argv[0] == "--probe":
        try:
            events.write(json.dumps({"devices": probe_devices()}) + "\n")
        except Exception as exc:
            events.write(json.dumps({"devices": [], "error": str(exc)}) + "\n")
        events.flush()
        return 0
    if argv and argv[0] == "--check-model" and len(argv) >= 2:
        return check_main(argv[1:], events)
    if argv and argv[0] == "--tensorboard-text" and len(argv) == 2:
        tboard.write_text_here(Path(argv[1]), sys.stdin.read())
        return 0
    if len(argv) != 1:
        print(
            "usage: python -m xlagui.core.worker.child "
            "SPEC.json | - | --probe | --check-model SPEC.json",
            file=sys.stderr,
        )
        return 2
    sink = EventSink(events, t0)
    cancel = threading.Event()
    commands: queue.Queue[WorkerCommand] = queue.Queue()
    watcher = threading.Thread(
        target=_watch_stdin, args=(cancel, commands), daemon=True, name="stdin"
    )
    # A spec file is read with the watcher already on (a parent gone while it is read ends
    # this process); a spec on stdin (`-`) must be read before the watcher takes stdin over.
    if argv[0] != "-":
        watcher.start()
    try:
        spec = _read_spec(argv[0])
    except (OSError, ProtocolError) as exc:
        print(f"cannot read the run spec {argv[0]}: {exc}", file=sys.stderr)
        return 2
    if argv[0] == "-":
        watcher.start()
    try:
        run(spec, sink, cancel, commands)
    except BaseException:
        traceback.print_exc()
        events.flush()
        return 1
    events.flush()
    return 0


def _read_spec(where: str) -> RunSpec:
    """The run spec from its file, or with `-` from the first line of stdin (a worker on an SSH
    host: the spec comes down the same connection as the commands, and is kept in the run
    folder as `spec.json` like a local one)."""
    if where != "-":
        return RunSpec.from_json(Path(where).read_text(encoding="utf-8"))
    line = sys.stdin.readline()
    if not line:
        raise ProtocolError("run spec: stdin ended before the spec's line")
    spec = RunSpec.from_json(line)
    spec.run_dir.mkdir(parents=True, exist_ok=True)
    (spec.run_dir / "spec.json").write_text(spec.to_json(), encoding="utf-8")
    return spec


def entry(argv: list[str] | None = None) -> None:
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's can take seconds and the results are out.
    os._exit(code)


if __name__ == "__main__":
    entry()
