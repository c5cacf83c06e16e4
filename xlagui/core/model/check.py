"""The model check: build the chosen model once, in a short worker process of its own, before any
measuring starts, and answer with a `ModelEvent` (parameters, input size, summary, the FLOPs of a
training step and an estimate of its memory) or an `ErrorEvent` that names the model file and
line. A user's Python file is imported there, never in the window's or the command line's
process; so is TensorFlow.

This module is the worker side (`check_main`, run by `python -m xlagui.core.worker.child
--check-model SPEC.json`), the spec both sides share, and the memory guard. The parent side, which
starts that process and reads its one event back, is `xlagui.core.measure.model_check`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import traceback
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Any, TextIO

from xlagui.core.model.build import load
from xlagui.core.model.cnn import compile_model, default_loss, head_units
from xlagui.core.model.files import ModelFileError
from xlagui.core.model.flops import article_cnn_shapes, hlo_flops
from xlagui.core.model.sources import source_of
from xlagui.core.protocol.arms import BACKEND_NAMES
from xlagui.core.protocol.config import ConfigError, ModelChoice
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    ErrorEvent,
    ModelEvent,
    ProtocolError,
    write_event,
)
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.jsoncodec import decode, plain
from xlagui.core.protocol.precision import Precision

# What a TensorFlow worker holds before any model (a worker training the article's CNN at
# 48 px peaked at 694 MB of RSS; the model's share of that was a few MB).
TENSORFLOW_BYTES = 600 * 2**20
SUMMARY_LINES = 40


class ModelRefused(ConfigError):
    """The chosen model cannot be trained here (a bad file, a wrong output size...): the
    message says which file, which line and what to do; `event`, the check's `ErrorEvent`
    when it answered with one (a model file's problem is its kind and facts there:
    `xlagui.present.model_files.refusal_text` words it). The command line exits with 2."""

    def __init__(self, message: str, event: ErrorEvent | None = None) -> None:
        super().__init__(message)
        self.event = event


@dataclass(frozen=True)
class ModelCheckSpec:
    """What the check worker builds: the model, for this image size, class count and batch."""

    model: ModelChoice = field(default_factory=ModelChoice)
    image_size: int = 150
    num_classes: int = 2
    batch_size: int = 64
    seed: int = 0
    # Train one step on a batch of 1 first (building the optimizer and metrics), then count a
    # step's FLOPs and estimate its memory; False: build and count the parameters only.
    count_flops: bool = True

    def to_json(self) -> str:
        return json.dumps(plain(self))

    @classmethod
    def from_json(cls, text: str) -> ModelCheckSpec:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"model check spec: not JSON ({exc})") from None
        return decode(cls, data, "model check spec")


# --- In the worker process --------------------------------------------------------------------


def _leaf_layers(model: Any) -> list[Any]:
    """Every layer, through nested models (a keras.applications body is one layer outside)."""
    out = []
    for layer in model.layers:
        inner = getattr(layer, "layers", None)
        out.extend(_leaf_layers(layer) if inner else [layer])
    return out


def _output_elements(layer: Any) -> int:
    try:
        outputs = layer.output
    except (AttributeError, ValueError, RuntimeError):  # a layer used twice has no one output
        return 0
    tensors = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    return sum(prod(int(d or 1) for d in t.shape[1:]) for t in tensors)


def memory_estimate(model: Any, batch_size: int) -> dict[str, int]:
    """A training step's memory, estimated in bytes per part: the weights, their gradients, the
    optimizer's state (its variables, once built), and the activations at `batch_size` (every
    layer's output kept for the backward pass plus its gradient: 2 × outputs × 4 bytes), and
    TensorFlow's own (`TENSORFLOW_BYTES`). An estimate: XLA and TensorFlow free and fuse
    differently, and the input pipeline's buffers are not in it."""
    import numpy as np  # lazy: worker side only; the window starts without NumPy

    def nbytes(variables: Any) -> int:
        return sum(int(prod(v.shape)) * np.dtype(str(v.dtype)).itemsize for v in variables)

    optimizer = getattr(model, "optimizer", None)
    activations = 2 * 4 * batch_size * sum(_output_elements(layer) for layer in _leaf_layers(model))
    return {
        "weights": nbytes(model.weights),
        "gradients": nbytes(model.trainable_weights),
        "optimizer": nbytes(getattr(optimizer, "variables", None) or []),
        "activations": activations,
        "tensorflow": TENSORFLOW_BYTES,
    }


def _summary(model: Any) -> tuple[list[str], int]:
    """The model's layers as "name (Class) output-shape params" lines, at most `SUMMARY_LINES`
    with the line that counts the rest (`present.models.layer_lines`), and how many are left
    out."""
    lines = []
    for layer in model.layers:
        try:
            shape = tuple(layer.output.shape[1:])
        except (AttributeError, ValueError, RuntimeError):
            shape = ()
        lines.append(f"{layer.name} ({type(layer).__name__}) {shape} {layer.count_params():,}")
    if len(lines) > SUMMARY_LINES:
        return lines[: SUMMARY_LINES - 1], len(lines) - SUMMARY_LINES + 1
    return lines, 0


def _step_flops(tf: Any, model: Any, x: Any, y: Any) -> tuple[float, float]:
    """FLOPs of one training step on (x, y) and of the forward pass per image, counted from the
    HLO XLA would compile (`xlagui.core.model.flops.hlo_flops`). Keras' own `train_step`, the very
    function `fit` runs, is wrapped so that its HLO can be asked for; nothing is compiled."""
    train = tf.function(lambda a, b: model.train_step((a, b)), jit_compile=True)
    forward = tf.function(lambda a: model(a, training=False), jit_compile=True)
    step = hlo_flops(train.experimental_get_compiler_ir(x, y)(stage="hlo"))
    infer = hlo_flops(forward.experimental_get_compiler_ir(x)(stage="hlo"))
    return float(step), float(infer) / int(x.shape[0])


def _check(spec: ModelCheckSpec) -> ModelEvent:
    # lazy: worker side only; the window imports this module and must start without TensorFlow
    import keras
    import numpy as np
    import tensorflow as tf

    # The value, not the enum: Keras reads an enum's `.name` as the dtype's name (FLOAT32).
    keras.mixed_precision.set_global_policy(Precision.FLOAT32.value)
    on_tensorflow = keras.backend.backend() == "tensorflow"
    tf.config.optimizer.set_jit(False)
    keras.utils.set_random_seed(spec.seed)
    choice = spec.model
    loaded = load(choice, spec.image_size, spec.num_classes, spec.seed)
    model = loaded.model
    fixed = source_of(choice).input_size(model, choice)
    size = fixed or spec.image_size
    compile_model(model, spec.num_classes, False, optimizer=loaded.optimizer, loss=loaded.loss)
    words = loaded.compile_words
    if loaded.optimizer is None and loaded.loss is None:
        words = f"Adam + {default_loss(spec.num_classes)}"
    dtype = "float32" if spec.num_classes == 2 else "int32"
    flops: tuple[float, float] | None = None
    note = ""
    parts: dict[str, int] = {}
    if not on_tensorflow:
        # Another backend (an arm's, issue 39): one training step on it, where a model that
        # uses TensorFlow's own ops fails; FLOPs are counted from TensorFlow's HLO, not here.
        x = np.zeros((1, size, size, 3), "float32")
        model.train_on_batch(x, np.zeros((1,), dtype))
    elif spec.count_flops:
        x = np.zeros((spec.batch_size, size, size, 3), "float32")
        y = np.zeros((spec.batch_size,), dtype)
        model.train_on_batch(x[:1], y[:1])  # builds the optimizer's and the metrics' variables
        try:
            flops = _step_flops(tf, model, tf.constant(x), tf.constant(y))
        except Exception as exc:  # any model: no count is better than a wrong one
            note = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        parts = memory_estimate(model, spec.batch_size)
    summary, more_layers = _summary(model)
    return ModelEvent(
        protocol=PROTOCOL_VERSION,
        model=dataclasses.replace(choice, params=int(model.count_params())),
        image_size=size,
        fixed_input_size=fixed is not None,
        outputs=head_units(spec.num_classes),
        layers=len(_leaf_layers(model)),
        summary=summary,
        more_layers=more_layers,
        compile_words=words,
        batch_size=spec.batch_size,
        flops_per_step=flops[0] if flops else None,
        flops_forward_per_sample=flops[1] if flops else None,
        flops_note=note,
        memory_bytes=sum(parts.values()) if parts else None,
        memory_parts=parts,
    )


def check_main(spec_paths: list[str], events: TextIO) -> int:
    """`python -m xlagui.core.worker.child --check-model SPEC.json [SPEC.json ...]`: one event per
    spec on `events`, then exit 0 (a `model` event each) or 2 at the first `error` event (the
    model was refused)."""
    for path in spec_paths:
        code = _check_one(path, events)
        if code:
            return code
    return 0


def _check_one(spec_path: str, events: TextIO) -> int:
    try:
        spec = ModelCheckSpec.from_json(Path(spec_path).read_text(encoding="utf-8"))
    except (OSError, ProtocolError) as exc:
        print(f"cannot read the model check spec {spec_path}: {exc}", file=sys.stderr)
        return 2
    try:
        write_event(events, _check(spec))
        return 0
    except ModelFileError as exc:
        write_event(events, ErrorEvent(error_type=type(exc).__name__, message=str(exc),
                                       kind=Failure.MODEL_FILE.value, facts=exc.event_facts))
        return 2
    except ConfigError as exc:
        write_event(events, ErrorEvent(error_type=type(exc).__name__, message=str(exc)))
        return 2
    except Exception as exc:
        traceback.print_exc()
        write_event(
            events,
            ErrorEvent(
                error_type=type(exc).__name__,
                message=f"{spec.model.label} could not be built{_on_backend()}: "
                f"{type(exc).__name__}: {exc}",
                details=traceback.format_exc(),
            ),
        )
        return 2


def _on_backend() -> str:
    """" on JAX" in a check on another Keras backend than TensorFlow's; "" on TensorFlow."""
    import keras  # lazy: worker side only

    name = str(keras.backend.backend())
    return "" if name == "tensorflow" else f" on {BACKEND_NAMES.get(name, name)}"


# --- Memory guard (parent side) ---------------------------------------------------------------


def article_cnn_memory(image_size: int, num_classes: int, batch_size: int) -> dict[str, int]:
    """`memory_estimate`'s parts for the article's CNN, worked out from its shapes without
    Keras (its parameters and Adam's two moments, every layer's output and its gradient)."""
    shapes = article_cnn_shapes(image_size, num_classes)
    params = sum(s.params for s in shapes)
    outputs = sum(prod(s.output_shape) for s in shapes)
    return {
        "weights": 4 * params,
        "gradients": 4 * params,
        "optimizer": 8 * params,
        "activations": 2 * 4 * batch_size * outputs,
        "tensorflow": TENSORFLOW_BYTES,
    }


@dataclass(frozen=True)
class MemoryGuard:
    """A step's estimated memory against what the machine has free: `workers` processes hold
    a model each at once (one measuring worker per arm)."""

    per_worker_bytes: int
    workers: int
    available_bytes: int

    @property
    def needed_bytes(self) -> int:
        return self.per_worker_bytes * self.workers

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.available_bytes


def memory_guard(per_worker_bytes: int, workers: int, available: int | None = None) -> MemoryGuard:
    """`per_worker_bytes` × `workers` against `psutil.virtual_memory().available` (or
    `available`, for tests)."""
    if available is None:
        import psutil  # lazy: keeps psutil off the window's start-up

        available = int(psutil.virtual_memory().available)
    return MemoryGuard(per_worker_bytes, max(1, workers), available)
