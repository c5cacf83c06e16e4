"""Every compilation of a worker's step functions (`CompileWatch`): which function, its inputs,
what it cost and why, each sent as a `compiled` event once its cost is known.

How a compile is found, without reading any log:
- A *trace*: Keras builds `train_function`, `test_function` and `predict_function` as
  `tf.function`s around the model's `train_step`, `test_step` and `predict_step`, which Python
  runs only while TensorFlow traces. The watch wraps the three on the model (before Keras builds
  the functions) and counts their calls: a step during which the count moved traced, and a
  trace is a compile on every arm (the baseline's graph is optimised then).
- A *new concrete shape under XLA*: a traced function may be shape-relaxed (Keras' iterator
  functions see the validation set's batch dimension as unknown, and `reduce_retracing=True`
  relaxes a second shape), yet XLA compiles its cluster once per concrete input shape. So with
  XLA in effect, the first step of each function with an input signature it has not met is a
  compile too: the last partial validation batch recompiles under XLA, not on the baseline.
  Auto-clustering compiles lazily (`XlaCompiling.LAZY`): a cluster compiles at its first
  execution, but a later new signature only when it is requested the second time
  (`kDefaultCompilationThreshold = 2`, tensorflow/compiler/jit/device_compilation_profiler.cc);
  the step before runs TensorFlow's own kernels and is neither a compile nor a steady step.
A step's input signature comes from the pipeline, which is ours: the dataset's element spec
(dtypes, the inner dimensions) and the size of the step's batch (`Datasets.*_batch_sizes`: full
batches, then the validation set's partial rest).

A compile's cost is its step's time less a steady step of the same signature (one that did not
compile), or, when there is none yet, the function's steady time per image times the batch's
size; with no steady step at all, the whole step's. Timing is the host's, per step: on a GPU the
steady step, queued, may read short (the compile itself runs on the host, in the step).

This was checked against XLA's own log (`hlo.compile_times`, the `device_compilation_profiler`
lines the environment turns on): `tests/core/worker/test_compiles_tf.py`.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from xlagui.core.protocol.compiles import (
    CompileReason,
    CompileReasonKind,
    StepFunction,
    shape_text,
)
from xlagui.core.protocol.events import CompiledEvent
from xlagui.core.protocol.identity import StrEnum
from xlagui.core.worker.io import EventSink

# The model's method that each step function traces (`keras/src/backend/tensorflow/trainer.py`).
STEP_METHODS = {
    StepFunction.TRAIN: "train_step",
    StepFunction.EVAL: "test_step",
    StepFunction.PREDICT: "predict_step",
}

class XlaCompiling(StrEnum):
    """How XLA compiles a worker's step functions, which decides when a new input signature
    compiles."""

    NONE = "none"  # XLA off: only a trace compiles
    STRICT = "strict"  # `jit_compile=True`: every new concrete signature, at its first step
    LAZY = "lazy"  # auto-clustering: the first at once, any later one at its second step


# Steady steps kept per signature (and per image) for the median a compile's cost is taken
# against: enough for a median, and a long training's watch stays small.
STEADY_KEPT = 64

# An input: its dtype's name and its inner dimensions (after the batch's).
InputSpec = tuple[str, tuple[int | None, ...]]
Signature = tuple[str, ...]


@dataclass
class _Pending:
    """A compile found, its cost not yet known."""

    function: StepFunction
    signature: Signature
    batch: int
    step_seconds: float
    reason: CompileReason
    ended: float  # the watch's clock at the step's end
    traced: bool


@dataclass
class _Function:
    """What the watch knows of one step function."""

    inputs: tuple[InputSpec, ...] = ()
    batch_sizes: tuple[int, ...] = ()
    traces: int = 0
    compiled: list[Signature] = field(default_factory=list)  # in order
    seen: dict[Signature, int] = field(default_factory=dict)  # steps run with each
    steady: dict[Signature, list[float]] = field(default_factory=dict)  # seconds per step
    per_image: list[float] = field(default_factory=list)


class CompileWatch:
    """Finds every compilation of a model's three step functions in a worker and sends each as
    a `compiled` event (`settle`, `flush`).

    Steps are timed around the function's call: by `callback()`'s Keras hooks inside `fit`,
    `evaluate` and `predict`, or by `begin` and `end` around a direct call (the measuring and
    inspecting workers call `model.train_function` themselves).
    """

    def __init__(self, model: Any, sink: EventSink | None, xla: XlaCompiling,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._sink = sink
        self._xla = XlaCompiling(xla)
        self._clock = clock
        self._functions = {fn: _Function() for fn in StepFunction}
        self._pending: list[_Pending] = []
        self._open: dict[StepFunction, tuple[int, float]] = {}
        if model is not None:
            self._count_traces(model)

    # -- what the worker sets up -------------------------------------------------------------

    def _count_traces(self, model: Any) -> None:
        """Wrap the model's step methods so each trace is counted (they run only then); before
        Keras builds its functions from them."""
        for fn, name in STEP_METHODS.items():
            method = getattr(model, name)
            state = self._functions[fn]

            # `(data)` on TensorFlow, `(state, data)` on JAX: either traces only. Named as the
            # method: JAX names its compiled module after it (`jit_train_step`).
            @functools.wraps(method)
            def traced(*args: Any, _method: Any = method, _state: _Function = state) -> Any:
                _state.traces += 1
                return _method(*args)

            # Past Keras' attribute tracking: a function is nothing it should track.
            object.__setattr__(model, name, traced)

    def feed(self, function: StepFunction, inputs: tuple[InputSpec, ...],
             batch_sizes: tuple[int, ...]) -> None:
        """What `function` is fed: its inputs' dtypes and inner dimensions, and the size of
        each batch of a pass, in order (a step's index picks its size)."""
        state = self._functions[function]
        state.inputs, state.batch_sizes = inputs, batch_sizes

    # -- steps ---------------------------------------------------------------------------------

    def begin(self, function: StepFunction) -> None:
        self._open[function] = (self._functions[function].traces, self._clock())

    def end(self, function: StepFunction, index: int) -> None:
        """The step `index` (0-based, in its pass) of `function` has returned. A call that ran
        several batches (`steps_per_execution`) is given its last one's index: a last partial
        batch is then the index of the call that ran it."""
        opened = self._open.pop(function, None)
        if opened is None:
            return
        traces_before, t0 = opened
        seconds = self._clock() - t0
        state = self._functions[function]
        batch = self._batch(state, index)
        signature = self._signature(state, batch)
        runs = state.seen.get(signature, 0) + 1
        state.seen[signature] = runs
        traced = state.traces != traces_before
        lazy_wait = self._xla is XlaCompiling.LAZY and bool(state.compiled) and runs == 1
        if traced or self._xla_compiles(state, signature, runs):
            reason = self._reason(state, signature, index)
            state.compiled.append(signature)
            self._pending.append(_Pending(function, signature, batch, seconds, reason,
                                          self._clock(), traced))
        elif not lazy_wait:  # a lazy cluster's first step at a new signature ran uncompiled
            same = state.steady.setdefault(signature, [])
            if len(same) < STEADY_KEPT:
                same.append(seconds)
            if batch > 0 and len(state.per_image) < STEADY_KEPT:
                state.per_image.append(seconds / batch)

    def _xla_compiles(self, state: _Function, signature: Signature, runs: int) -> bool:
        """Whether XLA compiles at this step (the `runs`-th with `signature`)."""
        if self._xla is XlaCompiling.NONE or signature in state.compiled:
            return False
        if self._xla is XlaCompiling.LAZY and state.compiled:
            return runs == 2
        return True

    @staticmethod
    def _batch(state: _Function, index: int) -> int:
        sizes = state.batch_sizes
        if not sizes:
            return 0
        return sizes[index % len(sizes)]

    @staticmethod
    def _signature(state: _Function, batch: int) -> Signature:
        return tuple(shape_text(dtype, (batch or None, *inner)) for dtype, inner in state.inputs)

    def _reason(self, state: _Function, signature: Signature, index: int) -> CompileReason:
        if not state.compiled:
            return CompileReason(CompileReasonKind.FIRST_CALL)
        sizes = state.batch_sizes
        last = sizes and index % len(sizes) == len(sizes) - 1 and sizes[-1] < max(sizes)
        return reason_between(state.compiled[-1], signature, partial_last=bool(last))

    # -- events --------------------------------------------------------------------------------

    def settle(self, final: bool = False) -> None:
        """Send each compile whose cost is known: a steady step of its signature has run (or,
        `final`, at the end of the work, with the best estimate there is)."""
        keep = []
        for p in self._pending:
            state = self._functions[p.function]
            if p.signature in state.steady or final:
                if self._sink is not None:
                    started = self._sink.now() - (self._clock() - p.ended) - p.step_seconds
                    self._sink.emit(self._event(p, state, started))
            else:
                keep.append(p)
        self._pending = keep

    def flush(self) -> None:
        """Send every compile still waiting (the work is over)."""
        self.settle(final=True)

    @staticmethod
    def _event(p: _Pending, state: _Function, started: float) -> CompiledEvent:
        same = state.steady.get(p.signature)
        steady: float | None = None
        if same:
            steady = statistics.median(same)
        elif state.per_image and p.batch > 0:
            steady = statistics.median(state.per_image) * p.batch
        cost = max(0.0, p.step_seconds - steady) if steady is not None else p.step_seconds
        return CompiledEvent(function=p.function, shapes=list(p.signature), seconds=cost,
                             reason=p.reason, step_seconds=p.step_seconds,
                             steady_seconds=steady, started=round(started, 6),
                             traced=p.traced)

    def callback(self) -> Any:
        """A Keras callback that times every step of `fit`, `evaluate` and `predict` and settles
        at each epoch's end (keras is only imported inside a run)."""
        return make_callback(self)


def reason_between(was: Signature, now: Signature, partial_last: bool) -> CompileReason:
    """Why a function compiled for `now` after `was`: the dtype, or the one dimension that
    moved (`partial_last`: `now` is the pass's last, smaller batch), or other."""
    if len(was) != len(now):
        return CompileReason(CompileReasonKind.OTHER)
    moved: list[tuple[int, int | None, int | None]] = []
    for a, b in zip(was, now, strict=True):
        dtype_a, dims_a = _split(a)
        dtype_b, dims_b = _split(b)
        if dtype_a != dtype_b:
            return CompileReason(CompileReasonKind.NEW_DTYPE)
        if len(dims_a) != len(dims_b):
            return CompileReason(CompileReasonKind.NEW_SHAPE)
        moved += [(i, x, y) for i, (x, y) in enumerate(zip(dims_a, dims_b, strict=True)) if x != y]
    dims = {i for i, _, _ in moved}
    if len(dims) != 1:
        return CompileReason(CompileReasonKind.OTHER if not moved else CompileReasonKind.NEW_SHAPE)
    dim, old, new = moved[0]
    partial = dim == 0 and partial_last and old is not None and new is not None and new < old
    return CompileReason(CompileReasonKind.NEW_SHAPE, dimension=dim, was=old, now=new,
                         partial_batch=partial)


def _split(text: str) -> tuple[str, tuple[int | None, ...]]:
    """"float32[64,150,150,3]" → ("float32", (64, 150, 150, 3)); "?" is None."""
    dtype, _, rest = text.partition("[")
    inner = rest.rstrip("]")
    dims = tuple(None if d == "?" else int(d) for d in inner.split(",")) if inner else ()
    return dtype, dims


def make_callback(watch: CompileWatch) -> Any:
    import keras  # lazy: see `setup.set_up`

    class CompileCallback(keras.callbacks.Callback):  # type: ignore[misc]  # Keras is untyped
        def on_train_batch_begin(self, batch: int, logs: Any = None) -> None:
            watch.begin(StepFunction.TRAIN)

        def on_train_batch_end(self, batch: int, logs: Any = None) -> None:
            watch.end(StepFunction.TRAIN, batch)

        def on_test_batch_begin(self, batch: int, logs: Any = None) -> None:
            watch.begin(StepFunction.EVAL)

        def on_test_batch_end(self, batch: int, logs: Any = None) -> None:
            watch.end(StepFunction.EVAL, batch)

        def on_predict_batch_begin(self, batch: int, logs: Any = None) -> None:
            watch.begin(StepFunction.PREDICT)

        def on_predict_batch_end(self, batch: int, logs: Any = None) -> None:
            watch.end(StepFunction.PREDICT, batch)

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            watch.settle()

    return CompileCallback()


def dataset_inputs(dataset: Any) -> tuple[InputSpec, ...]:
    """A batched dataset's inputs: each tensor's dtype and inner dimensions."""
    import tensorflow as tf  # lazy: see `setup.set_up`

    if dataset is None:
        return ()
    return tuple(
        (spec.dtype.name, tuple(spec.shape.as_list()[1:]))
        for spec in tf.nest.flatten(dataset.element_spec)
    )


def watch_compiles(model: Any, datasets: Any, sink: EventSink, xla: XlaCompiling
                   ) -> CompileWatch:
    """A watch on `model`'s step functions, fed the pipeline's batches: training on the
    training set, evaluation and prediction on the validation set."""
    watch = CompileWatch(model, sink, xla)
    watch.feed(StepFunction.TRAIN, dataset_inputs(datasets.train), datasets.train_batch_sizes)
    val = dataset_inputs(datasets.val)
    watch.feed(StepFunction.EVAL, val, datasets.val_batch_sizes)
    watch.feed(StepFunction.PREDICT, val, datasets.val_batch_sizes)
    return watch
