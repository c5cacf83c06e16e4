"""The machine's limits, measured once per device: attainable FLOP/s, memory bandwidth, and the
FLOP/s the model's largest layers reach when run alone.

A short probe in its own process (`python -m xlagui.core.machine.peak`, TensorFlow is imported only
there) times on the run's device:
- a large matmul in each compute dtype an arm can ask for (the attainable peak of each: what
  TensorFlow's best kernel reaches here): float32 (on a recent NVIDIA GPU TensorFlow runs it in
  TF32 by default, as the model's do), bfloat16 and float16. A 16-bit arm is compared with its
  own dtype's peak: against float32's, AMX or tensor cores let bf16 pass 100%;
- a large element-wise multiply, bytes read plus bytes written (the attainable bandwidth);
- the article CNN's two largest layers (by training FLOPs) at the comparison's image size and
  batch, forward plus the gradients a training step needs, each alone (the compute-bound
  ceiling this model could reach with no overhead between its ops).
Each figure is the best of a few repetitions: the attainable limit, not a typical value.

The result is cached in the cache folder under a key naming the machine (host, CPU model,
logical CPUs), the device, the TensorFlow version and the probe's version, so a new machine or a
new TensorFlow measures again; the file is rewritten atomically.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.files.paths import cache_dir
from xlagui.core.machine.cpu import cpu_name
from xlagui.core.machine.device import Device
from xlagui.core.model import flops

PROBE_VERSION = 2  # 2: a matmul peak per compute dtype
CACHE_NAME = "machine_limits.json"
PROBE_TIMEOUT_SECONDS = 180.0
# XLAGUI_PEAK_PROBE=off: never run the probe (use what the cache has, else no limits).
PROBE_ENV = "XLAGUI_PEAK_PROBE"


@dataclass(frozen=True)
class LayerCeiling:
    """The model's largest layers alone, at one image size and batch."""

    layers: list[str]
    image_size: int
    batch_size: int
    flops: float  # per step, the layers together
    seconds: float  # best step time, the layers together
    flops_per_second: float


@dataclass(frozen=True)
class MachineLimits:
    key: str
    device: str
    device_name: str
    tf_version: str
    machine: str
    matmul_size: int
    matmul_flops_per_second: float
    bandwidth_bytes: int  # bytes moved per timed element-wise op
    bandwidth_bytes_per_second: float
    measured: str
    probe_seconds: float
    ceilings: dict[str, LayerCeiling] = field(default_factory=dict)
    # The matmul peak per compute dtype ("float32", "bfloat16", "float16"); older caches only
    # have float32's, as `matmul_flops_per_second`.
    matmul_peaks: dict[str, float] = field(default_factory=dict)

    def peak(self, dtype: str = "float32") -> float | None:
        """The matmul peak of `dtype` (None: not measured on this device)."""
        if dtype in self.matmul_peaks:
            return self.matmul_peaks[dtype]
        return self.matmul_flops_per_second if dtype == "float32" else None

    def ceiling(self, image_size: int, batch_size: int) -> LayerCeiling | None:
        return self.ceilings.get(ceiling_key(image_size, batch_size))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MachineLimits:
        d = dict(d)
        d["ceilings"] = {k: LayerCeiling(**v) for k, v in (d.get("ceilings") or {}).items()}
        return cls(**d)


def ceiling_key(image_size: int, batch_size: int) -> str:
    return f"{image_size}px-b{batch_size}"


def machine_id() -> str:
    """The machine in words: host, CPU model, logical CPUs."""
    return f"{platform.node()} · {cpu_name()} · {os.cpu_count()} CPUs"


def tf_version() -> str:
    """The installed TensorFlow's version, read from its metadata (TensorFlow is not loaded)."""
    from importlib import metadata  # lazy: loads the email package; off the start-up

    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-macos"):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return "unknown"


def cache_key(device: str, *, machine: str | None = None, tf: str | None = None) -> str:
    return (
        f"{machine if machine is not None else machine_id()} | {device} | "
        f"TensorFlow {tf if tf is not None else tf_version()} | probe {PROBE_VERSION}"
    )


def cache_path() -> Path:
    return cache_dir() / CACHE_NAME


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def load(key: str, path: Path | None = None) -> MachineLimits | None:
    """The cached limits under `key`, or None (absent, or written by another probe version)."""
    entry = _read_cache(path or cache_path()).get(key)
    if not isinstance(entry, dict):
        return None
    try:
        return MachineLimits.from_dict(entry)
    except (TypeError, ValueError):
        return None


def store(limits: MachineLimits, path: Path | None = None) -> None:
    """Add or replace `limits` in the cache, keeping the other machines' entries."""
    target = path or cache_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    entries = _read_cache(target)
    entries[limits.key] = limits.to_dict()
    text = json.dumps({"format": "xlagui-machine-limits", "entries": entries}, indent=1)
    atomic_write_text(target, text + "\n")


def probe_command(device: str, image_size: int, batch_size: int, *, peak: bool,
                  quick: bool = False) -> list[str]:
    cmd = [sys.executable, "-m", "xlagui.core.machine.peak", "--device", device,
           "--image-size", str(image_size), "--batch", str(batch_size)]
    if not peak:
        cmd.append("--ceiling-only")
    if quick:
        cmd.append("--quick")
    return cmd


def probe_env(device: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("TF_XLA_FLAGS", "XLA_FLAGS")}
    visible = Device.parse(device).visible_gpus
    if visible is not None:
        env["CUDA_VISIBLE_DEVICES"] = visible
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    # Keras writes ~/.keras/keras.json on import; keep it in our own cache folder instead.
    env.setdefault("KERAS_HOME", str(cache_dir() / "keras"))
    return env


def run_probe(device: str, image_size: int, batch_size: int, *, peak: bool = True,
              quick: bool = False, timeout: float = PROBE_TIMEOUT_SECONDS) -> dict[str, Any]:
    """Run the probe in a fresh process and return what it printed (its last line, JSON)."""
    proc = subprocess.run(
        probe_command(device, image_size, batch_size, peak=peak, quick=quick),
        capture_output=True, text=True, timeout=timeout, env=probe_env(device), check=False,
    )
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the peak probe failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def ensure(device: str, image_size: int, batch_size: int, *, path: Path | None = None,
           probe: Any = run_probe) -> MachineLimits | None:
    """The limits of `device` on this machine with this TensorFlow, with the ceiling at
    `image_size` and `batch_size`: from the cache, else measured (and cached).

    With XLAGUI_PEAK_PROBE=off nothing is measured: the cache's entry or None."""
    key = cache_key(device)
    cached = load(key, path)
    if cached is not None and cached.ceiling(image_size, batch_size) is not None:
        return cached
    if os.environ.get(PROBE_ENV, "").lower() == "off":
        return cached
    out = probe(device, image_size, batch_size, peak=cached is None)
    ceiling = LayerCeiling(**out["ceiling"])
    if cached is None:
        limits = MachineLimits(
            key=key,
            device=device,
            device_name=str(out.get("device_name", device)),
            tf_version=tf_version(),
            machine=machine_id(),
            matmul_size=int(out["matmul_size"]),
            matmul_flops_per_second=float(out["matmul_flops_per_second"]),
            bandwidth_bytes=int(out["bandwidth_bytes"]),
            bandwidth_bytes_per_second=float(out["bandwidth_bytes_per_second"]),
            measured=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            probe_seconds=float(out.get("probe_seconds", 0.0)),
            ceilings={ceiling_key(image_size, batch_size): ceiling},
            matmul_peaks={str(k): float(v) for k, v in (out.get("matmul_peaks") or {}).items()},
        )
    else:
        limits = MachineLimits.from_dict(
            {**cached.to_dict(), "ceilings": {
                **{k: asdict(v) for k, v in cached.ceilings.items()},
                ceiling_key(image_size, batch_size): asdict(ceiling),
            }}
        )
    store(limits, path)
    return limits


# ---- the probe itself: runs in its own process, the only place here that loads TensorFlow ----


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


def probe_matmul(tf: Any, size: int, budget: float, dtype: str = "float32") -> float:
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


def probe_layers(tf: Any, image_size: int, batch_size: int, budget: float) -> dict[str, Any]:
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
    return {
        "layers": [layer.name for layer in chosen],
        "image_size": image_size,
        "batch_size": batch_size,
        "flops": total_flops,
        "seconds": total_seconds,
        "flops_per_second": total_flops / total_seconds,
    }


# Every compute dtype an arm can ask for. Where the device has no native support TensorFlow
# converts, and the probe shows what that gets (on this project's AMX CPU a 1024² matmul ran at
# 112 GFLOP/s in float32 and float16, 681 in bfloat16: fp16 arms are slow for other ops).
PROBED_DTYPES = ("float32", "bfloat16", "float16")


def probe(device: str, image_size: int, batch_size: int, *, peak: bool = True,
          quick: bool = False) -> dict[str, Any]:
    import tensorflow as tf  # lazy: only in the probe's own process

    t0 = time.perf_counter()
    gpu = Device.parse(device).is_gpu
    name = "/GPU:0" if gpu else "/CPU:0"
    budget = 0.3 if quick else 1.5
    out: dict[str, Any] = {"device": device}
    with tf.device(name):
        if peak:
            size = 256 if quick else (8192 if gpu else 2048)
            out["matmul_size"] = size
            out["matmul_peaks"] = {
                dtype: probe_matmul(tf, size, budget, dtype) for dtype in PROBED_DTYPES
            }
            out["matmul_flops_per_second"] = out["matmul_peaks"]["float32"]
            floats = (1 << 20) if quick else ((1 << 28) if gpu else (1 << 25))
            moved, rate = probe_bandwidth(tf, floats, budget)
            out["bandwidth_bytes"] = moved
            out["bandwidth_bytes_per_second"] = rate
        out["ceiling"] = probe_layers(tf, image_size, batch_size, budget)
    devices = tf.config.list_logical_devices("GPU" if gpu else "CPU")
    out["device_name"] = devices[0].name if devices else name
    if not gpu:
        out["device_name"] = cpu_name()
    out["probe_seconds"] = time.perf_counter() - t0
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m xlagui.core.machine.peak")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--image-size", type=int, default=150)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--ceiling-only", action="store_true")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for tests")
    args = parser.parse_args(argv)
    out = probe(args.device, args.image_size, args.batch, peak=not args.ceiling_only,
                quick=args.quick)
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
