"""The peak probe itself, in the child process that may load TensorFlow (`python -m
xlagui.core.worker.child --peak …`): the matmul peaks, the bandwidth and the model's layer
ceiling on one device, as a `LimitsEvent` (`core/machine/peak.py` caches it)."""

from __future__ import annotations

import time
from typing import Any

from xlagui.core.machine import peak
from xlagui.core.machine.cpu import cpu_name
from xlagui.core.machine.device import Device
from xlagui.core.model import flops
from xlagui.core.protocol.events import PROTOCOL_VERSION, LimitsEvent
from xlagui.core.protocol.precision import COMPUTE_DTYPES, FLOAT32_DTYPE
from xlagui.core.protocol.probes import LayerCeiling


def _best_seconds(fn: Any, *, budget: float, min_reps: int = 3, max_reps: int = 50) -> float:
    """The fastest of several calls of `fn` (which returns once its work is done), after one
    call that warms up (tracing, allocation)."""
    fn()
    best = float("inf")
    start = time.perf_counter()
    reps = 0
    while reps < max_reps and (reps < min_reps or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        reps += 1
    return best


def probe_matmul(tf: Any, size: int, budget: float, dtype: str = FLOAT32_DTYPE) -> float:
    """FLOP/s of a size×size matmul in `dtype` (2·n³ FLOPs), the best of a few."""
    a = tf.cast(tf.random.uniform((size, size), dtype=tf.float32, seed=1), dtype)
    b = tf.cast(tf.random.uniform((size, size), dtype=tf.float32, seed=2), dtype)
    # Reading back one element waits for the device without copying the whole product.
    f = tf.function(lambda a, b: tf.matmul(a, b)[0, 0])
    seconds = _best_seconds(lambda: float(f(a, b)), budget=budget)
    return 2.0 * size**3 / seconds


def probe_bandwidth(tf: Any, floats: int, budget: float) -> tuple[int, float]:
    """Bytes moved and bytes/s of an element-wise multiply: read `floats`, write `floats`."""
    x = tf.random.uniform((floats,), dtype=tf.float32, seed=3)
    holder: list[Any] = []

    def step() -> None:
        y = x * 1.0001
        float(y[0])  # waits for the device
        holder[:] = [y]  # the product stays alive while the next one is timed: no reuse

    seconds = _best_seconds(step, budget=budget)
    moved = 2 * floats * 4
    return moved, moved / seconds


def probe_layers(tf: Any, image_size: int, batch_size: int, budget: float) -> LayerCeiling:
    """The model's two largest layers alone, forward and the gradients training needs."""
    shapes = {s.name: s for s in flops.article_cnn_shapes(image_size, 2)}
    count = flops.article_cnn_count(image_size, 2)
    first = count.layers[0].name
    chosen = count.largest(2)
    total_flops = 0.0
    total_seconds = 0.0
    for layer in chosen:
        shape = shapes[layer.name]
        if shape.kind != "conv2d":
            raise RuntimeError(f"the probe times convolutions; {layer.name} is a {shape.kind}")
        kh, kw = shape.window
        cin, cout = shape.input_shape[-1], shape.output_shape[-1]
        x = tf.random.uniform((batch_size, *shape.input_shape), seed=4)
        w = tf.Variable(tf.random.uniform((kh, kw, cin, cout), seed=5) * 0.01)
        bias = tf.Variable(tf.zeros((cout,)))
        g = tf.random.uniform((batch_size, *shape.output_shape), seed=6)
        need_input_grad = layer.name != first

        @tf.function  # type: ignore[untyped-decorator]  # TensorFlow ships no type hints
        def step(x: Any, g: Any, need_input_grad: bool = need_input_grad,
                 w: Any = w, bias: Any = bias) -> Any:
            with tf.GradientTape() as tape:
                if need_input_grad:
                    tape.watch(x)
                y = tf.nn.relu(tf.nn.conv2d(x, w, 1, "VALID") + bias)
                loss = tf.reduce_sum(y * g)  # the output gradient is g
            targets = [w, bias, x] if need_input_grad else [w, bias]
            grads = tape.gradient(loss, targets)
            return tf.add_n([tf.reduce_sum(t[..., :1]) for t in grads])

        seconds = _best_seconds(lambda step=step, x=x, g=g: float(step(x, g)), budget=budget)
        total_flops += layer.train * batch_size
        total_seconds += seconds
    return LayerCeiling(
        layers=[layer.name for layer in chosen],
        image_size=image_size,
        batch_size=batch_size,
        flops=total_flops,
        seconds=total_seconds,
        flops_per_second=total_flops / total_seconds,
    )


# Every compute dtype an arm can ask for. Where the device has no native support TensorFlow
# converts, and the probe shows what that gets (on this project's AMX CPU a 1024² matmul ran at
# 112 GFLOP/s in float32 and float16, 681 in bfloat16: fp16 arms are slow for other ops).
PROBED_DTYPES = COMPUTE_DTYPES


def probe(device: str, image_size: int, batch_size: int, *, peak_too: bool = True,
          quick: bool = False) -> LimitsEvent:
    """Time `device` (the process sees only it: its GPU is GPU:0) and say what it measured."""
    import tensorflow as tf  # lazy: only in the probe's own process

    t0 = time.perf_counter()
    gpu = Device.parse(device).is_gpu
    name = "/GPU:0" if gpu else "/CPU:0"
    budget = 0.3 if quick else 1.5
    out = LimitsEvent(protocol=PROTOCOL_VERSION, device=device, machine=peak.machine_id(),
                      tf_version=str(tf.__version__))
    with tf.device(name):
        if peak_too:
            size = 256 if quick else (8192 if gpu else 2048)
            out.matmul_size = size
            out.matmul_peaks = {
                dtype: probe_matmul(tf, size, budget, dtype) for dtype in PROBED_DTYPES
            }
            out.matmul_flops_per_second = out.matmul_peaks[FLOAT32_DTYPE]
            floats = (1 << 20) if quick else ((1 << 28) if gpu else (1 << 25))
            out.bandwidth_bytes, out.bandwidth_bytes_per_second = probe_bandwidth(
                tf, floats, budget)
        out.ceiling = probe_layers(tf, image_size, batch_size, budget)
    devices = tf.config.list_logical_devices("GPU" if gpu else "CPU")
    out.device_name = devices[0].name if devices else name
    if not gpu:
        out.device_name = cpu_name()
    out.probe_seconds = time.perf_counter() - t0
    return out
