"""One training run in a fresh process: `python -m xlagui.core.worker SPEC.json`.

XLA settings are process-global and TensorFlow never gives memory back, so every run gets its
own process. The parent sets the environment before this process imports TensorFlow (which
device is visible, XLA flags, the HLO dump folder); see `runner.worker_env`.

Events go to the original stdout, one JSON object per line. Anything else that would be printed
(Python or TensorFlow's C++ logging) goes to stderr, which the parent points at the run's log.
Stdin carries commands: a line "cancel" asks the run to stop at the next batch; end-of-file means
the parent is gone, and the worker exits at once rather than live on as an orphan.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

from xlagui.core import evidence as xla_evidence
from xlagui.core.events import (
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    ErrorEvent,
    Event,
    FinishedEvent,
    StartedEvent,
    write_event,
)

# Batch events are throttled: the loss plot needs a few points a second, not every step.
BATCH_EVENT_INTERVAL = 0.05
EXIT_PARENT_GONE = 3


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
            write_event(self._stream, event)


def _redirect_stdout() -> TextIO:
    """Keep the real stdout for events; send everything else printed to fd 1 to stderr."""
    sys.stdout.flush()
    events_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, closefd=False)
    return os.fdopen(events_fd, "w", buffering=1, encoding="utf-8")


def _watch_stdin(cancel: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "cancel":
            cancel.set()
    # End of file: the parent died or closed the pipe. Nobody is listening any more.
    os._exit(EXIT_PARENT_GONE)


def peak_rss_bytes() -> int | None:
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak if sys.platform == "darwin" else peak * 1024)
    except ImportError:  # Windows
        import psutil

        info = psutil.Process().memory_info()
        return int(getattr(info, "peak_wset", info.rss))


def error_hint(exc: BaseException, config: dict[str, Any]) -> str:
    name = type(exc).__name__
    text = str(exc)
    if (
        name == "ResourceExhaustedError"
        or isinstance(exc, MemoryError)
        or "OOM" in text
        or "bad_alloc" in text
    ):
        return (
            f"The run ran out of memory with batch size {config.get('batch_size')} and image size "
            f"{config.get('image_size')}. Try a smaller batch size or image size."
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
    import tensorflow as tf

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
        import keras

        class EventCallback(keras.callbacks.Callback):
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

        return EventCallback()


def run(spec: dict[str, Any], sink: EventSink, cancel: threading.Event) -> None:
    from xlagui.core.stats import summarize_epochs

    config = spec["config"]
    run_dir = Path(spec["run_dir"])
    xla_mode = spec["xla_mode"]
    state: dict[str, Any] = {"epochs": [], "epochs_done": 0, "cumulative": 0.0, "steps": 0}
    try:
        import keras
        import tensorflow as tf

        from xlagui.core.model import build_model, compile_model
        from xlagui.core.pipeline import Sample, build_datasets, warm_cache

        if xla_mode == "autocluster":
            # The article's switch. On CPU it only engages with
            # TF_XLA_FLAGS=--tf_xla_cpu_global_jit, which the parent has set.
            tf.config.optimizer.set_jit("autoclustering")
        else:
            tf.config.optimizer.set_jit(False)
        keras.utils.set_random_seed(int(config["seed"]))

        device = config["device"]
        gpus = tf.config.list_physical_devices("GPU")
        if device != "cpu" and not gpus:
            raise RuntimeError(
                f"device {device} was asked for but TensorFlow sees no GPU on this machine"
            )
        strategy = tf.distribute.MirroredStrategy() if device == "all" else None

        class_names = spec["class_names"]
        num_classes = len(class_names)
        train = [Sample(*s) for s in spec["train"]]
        val = [Sample(*s) for s in spec["val"]]
        datasets = build_datasets(
            train,
            val,
            num_classes=num_classes,
            image_size=int(config["image_size"]),
            batch_size=int(config["batch_size"]),
            seed=int(config["seed"]),
            augment=bool(config["augment"]),
            cache_dir=run_dir / "cache",
        )
        state["steps"] = datasets.steps_per_epoch
        warm_cache(datasets)
        if cancel.is_set():
            sink.emit(CancelledEvent(epochs_done=0))
            return

        def build() -> Any:
            model = build_model(int(config["image_size"]), num_classes, seed=int(config["seed"]))
            compile_model(model, num_classes, jit_compile=(xla_mode == "jit"))
            return model

        if strategy is not None:
            with strategy.scope():
                model = build()
        else:
            model = build()

        if xla_mode == "jit":
            in_effect = bool(model.jit_compile)
        elif xla_mode == "autocluster":
            in_effect = bool(tf.config.optimizer.get_jit())
        else:
            in_effect = bool(model.jit_compile) or bool(tf.config.optimizer.get_jit())
        if xla_mode == "off" and in_effect:
            raise RuntimeError("the baseline has XLA switched on; refusing to call it a baseline")

        logical = tf.config.list_logical_devices("GPU" if device != "cpu" else "CPU")
        device_kind = "GPU" if device != "cpu" else "CPU"
        if device_kind == "GPU" and gpus:
            idx = 0 if device == "all" else int(device.split(":")[1])
            details = tf.config.experimental.get_device_details(gpus[min(idx, len(gpus) - 1)])
            device_name = details.get("device_name", logical[0].name if logical else "GPU")
            if device == "all":
                device_name = f"{len(gpus)} × {device_name}"
        else:
            device_name = platform.processor() or platform.machine() or "CPU"
            device_name = _cpu_name() or device_name
        state["setup_seconds"] = sink.now()
        sink.emit(
            StartedEvent(
                run_id=spec["run_id"],
                variant=spec["variant"],
                xla_mode=xla_mode,
                xla_in_effect=in_effect,
                device_name=device_name,
                device_kind=device_kind,
                versions={
                    "python": platform.python_version(),
                    "tensorflow": tf.__version__,
                    "keras": keras.__version__,
                    "platform": platform.platform(),
                },
                config=config,
                seed=int(config["seed"]),
                class_names=class_names,
                train_count=datasets.train_count,
                val_count=datasets.val_count,
                steps_per_epoch=datasets.steps_per_epoch,
                pid=os.getpid(),
                setup_seconds=state["setup_seconds"],
            )
        )
        callback = _Callback.make(sink, cancel, state)
        model.fit(
            datasets.train,
            validation_data=datasets.val,
            epochs=int(config["epochs"]),
            verbose=0,
            callbacks=[callback],
        )
        if cancel.is_set():
            sink.emit(CancelledEvent(epochs_done=state["epochs_done"]))
            return
        summary = summarize_epochs(state["epochs"])
        summary["peak_rss_bytes"] = peak_rss_bytes()
        summary["peak_device_bytes"] = _peak_device_bytes(tf, device)
        summary["setup_seconds"] = state.get("setup_seconds")
        summary["cache"] = datasets.cache
        summary["xla_mode"] = xla_mode
        summary["xla_in_effect"] = in_effect
        sys.stderr.flush()
        ev = xla_evidence.collect(run_dir / "xla", run_dir / "worker.log")
        summary["xla_evidence"] = ev.to_dict()
        sink.emit(FinishedEvent(summary=summary))
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


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


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
    if len(argv) != 1:
        print("usage: python -m xlagui.core.worker SPEC.json | --probe", file=sys.stderr)
        return 2
    sink = EventSink(events, t0)
    cancel = threading.Event()
    threading.Thread(target=_watch_stdin, args=(cancel,), daemon=True, name="stdin").start()
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    try:
        run(spec, sink, cancel)
    except BaseException:
        traceback.print_exc()
        events.flush()
        return 1
    events.flush()
    return 0


def entry(argv: list[str] | None = None) -> None:
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: TensorFlow's can take seconds and the results are out.
    os._exit(code)


if __name__ == "__main__":
    entry()
