"""What differs in a worker by Keras backend (`levers.BACKEND`: TensorFlow, JAX): how a training
step is called outside `fit` (`train_steps`), how a profile is recorded (`profiler`), and the
starting weights every backend shares (`share_initial_weights`).

Everything else a worker does is Keras 3's own API, the same on every backend: the model is
built, compiled, evaluated and saved alike, and the input pipeline is the same tf.data
pipeline (Keras reads it on every backend). A PyTorch arm would add its `TrainSteps` here and a
`profiler` branch (`torch.profiler` writes no XSpace: its attribution would be new work).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from xlagui.core.protocol.levers import JAX_BACKEND, TF_BACKEND

# The baseline's weights as built from the seed, in the comparison's folder: an arm on another
# backend starts from them (Keras' initializers draw other numbers on JAX, whatever the seed).
INITIAL_WEIGHTS = "initial.weights.h5"
# How long a worker on another backend waits for the baseline to write them: the baseline's
# worker starts beside it and builds the same model.
INITIAL_WEIGHTS_WAIT_SECONDS = 600.0


def current_backend() -> str:
    """This process's Keras backend, as the backend lever names it ("tf", "jax")."""
    import keras  # lazy: the worker's, after the parent's environment is in place

    name = str(keras.backend.backend())
    return TF_BACKEND if name == "tensorflow" else name


def framework_version() -> str:
    """The version of this process's backend's framework where it is not TensorFlow ("" for
    TensorFlow's, which every worker reports anyway)."""
    if current_backend() == JAX_BACKEND:
        import jax  # lazy: only a JAX worker has it

        return str(jax.__version__)
    return ""


class TrainSteps:
    """Keras' compiled train function of `model`, called one call at a time on an iterator of
    batches, as `fit` calls it (TensorFlow: `model.train_function(iterator)`, the model's
    variables updated in place); `sync` puts what the steps trained back on the model before
    anything else reads it (a no-op here)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        model.make_train_function()

    def __call__(self, iterator: Any) -> Any:
        return self.model.train_function(iterator)

    def sync(self) -> None:
        pass


class JaxTrainSteps(TrainSteps):
    """The same on JAX: Keras' jitted `train_step` is a pure function of the model's state
    (trainable, non-trainable, optimizer and metrics variables) and a batch, returning the new
    state, which Keras' own `fit` carries from call to call and puts back on the model at an
    epoch's end (`jax_state_sync`): done the same way here. The state's buffers are donated to
    each call, so the model's variables are stale between a call and `sync`. Batches reach JAX
    as NumPy arrays, as Keras' own iterator over a tf.data pipeline hands them."""

    def __init__(self, model: Any, sample: Any) -> None:
        # The optimizer's and the metrics' variables exist before the first call (`fit` builds
        # them from a batch the same way).
        model._symbolic_build(data_batch=_numpy(sample))
        super().__init__(model)
        self._state: tuple[Any, ...] | None = None

    def __call__(self, iterator: Any) -> Any:
        if self._state is None:
            self._state = self.model._get_jax_state(
                trainable_variables=True, non_trainable_variables=True,
                optimizer_variables=True, metrics_variables=True, purge_model_variables=True)
        logs, self._state = self.model.train_function(self._state, _numpy_batches(iterator))
        return logs

    def sync(self) -> None:
        if self._state is None:
            return
        trainable, non_trainable, optimizer, metrics = self._state
        self.model._jax_state = {
            "trainable_variables": trainable, "non_trainable_variables": non_trainable,
            "optimizer_variables": optimizer, "metrics_variables": metrics,
        }
        self.model._jax_state_synced = False
        self.model.jax_state_sync()
        self.model._jax_state = None
        self._state = None


def _numpy(batch: Any) -> Any:
    import numpy as np  # lazy: the worker's

    if isinstance(batch, (tuple, list)):
        return tuple(_numpy(part) for part in batch)
    return np.asarray(batch)


def _numpy_batches(iterator: Any) -> Iterator[Any]:
    """`iterator`'s batches as NumPy arrays, read one at a time as the step asks."""
    for batch in iterator:
        yield _numpy(batch)


def train_steps(model: Any, sample: Any = None) -> TrainSteps:
    """The train steps of `model` on this process's backend (`sample`: one batch of what the
    steps will read, which JAX builds its optimizer's state from)."""
    if current_backend() == JAX_BACKEND:
        if sample is None:
            raise ValueError("a JAX train step needs a sample batch to build its state from")
        return JaxTrainSteps(model, sample)
    return TrainSteps(model)


@contextmanager
def profiler(tf: Any, folder: Path) -> Iterator[None]:
    """This backend's profiler recording into `folder` (both write the XSpace that
    `xlagui.core.explain.trace` reads, under `plugins/profile/<run>/`)."""
    if current_backend() == JAX_BACKEND:
        import jax  # lazy: only a JAX worker has it

        jax.profiler.start_trace(str(folder))
        try:
            yield
        finally:
            jax.profiler.stop_trace()  # type: ignore[no-untyped-call]
        return
    tf.profiler.experimental.start(str(folder))
    try:
        yield
    finally:
        tf.profiler.experimental.stop()


def step_window(tf: Any, name: str, step: int) -> AbstractContextManager[Any]:
    """A profiled step's window (an event named `name` on the host's plane)."""
    if current_backend() == JAX_BACKEND:
        import jax  # lazy: only a JAX worker has it

        return jax.profiler.StepTraceAnnotation(name, step_num=step)
    return tf.profiler.experimental.Trace(name, step_num=step, _r=1)  # type: ignore[no-any-return]


def watch_jax_compiles() -> None:
    """JAX logs each compile with its time ("Finished XLA compilation of jit(train_step) in
    1.39 sec", `xlagui.core.xla.hlo.compile_times`) and why its cache missed: the worker's log
    keeps them as the evidence that XLA compiled."""
    import jax  # lazy: only a JAX worker has it

    jax.config.update("jax_log_compiles", True)  # type: ignore[no-untyped-call]
    jax.config.update("jax_explain_cache_misses", True)  # type: ignore[no-untyped-call]


def share_initial_weights(model: Any, comparison_dir: Path, backend: str,
                          cancel: threading.Event | None = None,
                          wait_seconds: float = INITIAL_WEIGHTS_WAIT_SECONDS) -> bool:
    """Every backend starts from the same weights: a TensorFlow worker writes the model's
    weights as the seed built them (once, atomically, the first to get there); a worker on
    another backend waits for them and loads them. True when the model now holds the shared
    weights (False: a TensorFlow worker found them written already, which are its own)."""
    target = comparison_dir / INITIAL_WEIGHTS
    if backend == TF_BACKEND:
        if target.is_file():
            return False
        comparison_dir.mkdir(parents=True, exist_ok=True)
        partial = comparison_dir / f"initial.{os.getpid()}.partial.weights.h5"
        model.save_weights(str(partial))
        os.replace(partial, target)
        return True
    deadline = time.monotonic() + wait_seconds
    while not target.is_file():
        if (cancel is not None and cancel.is_set()) or time.monotonic() > deadline:
            raise RuntimeError(
                f"the baseline's initial weights ({target}) were not written within "
                f"{wait_seconds:.0f} s; an arm on {backend} starts from them")
        time.sleep(0.2)
    model.load_weights(str(target))
    return True
