"""The machine's limits, measured once per device: attainable FLOP/s, memory bandwidth, and the
FLOP/s the model's largest layers reach when run alone.

A short probe in a child process of its own (`python -m xlagui.core.worker.child --peak …`,
`core/machine/peak_probe.py`; TensorFlow is imported only there), started through the transport of
the machine the comparison runs on, times on the run's device:
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
new TensorFlow measures again; the file is rewritten atomically. `ensure` reads the cache and
calls the probe it is given (`xlagui.core.measure.children.peak_probe` on a transport).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from xlagui.core.files.atomic import atomic_write_text
from xlagui.core.files.paths import cache_dir
from xlagui.core.machine import host
from xlagui.core.machine.cpu import cpu_name
from xlagui.core.protocol.events import LimitsEvent
from xlagui.core.protocol.precision import FLOAT32_DTYPE
from xlagui.core.protocol.probes import LayerCeiling as LayerCeiling  # saved in the limits

PROBE_VERSION = 2  # 2: a matmul peak per compute dtype
CACHE_NAME = "machine_limits.json"
PROBE_TIMEOUT_SECONDS = 180.0
# XLAGUI_PEAK_PROBE=off: never run the probe (use what the cache has, else no limits).
PROBE_ENV = "XLAGUI_PEAK_PROBE"

# (device, image size, batch size, peak=whether to measure the peaks too) → what it measured.
Probe = Callable[..., LimitsEvent]


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

    def peak(self, dtype: str = FLOAT32_DTYPE) -> float | None:
        """The matmul peak of `dtype` (None: not measured on this device)."""
        if dtype in self.matmul_peaks:
            return self.matmul_peaks[dtype]
        return self.matmul_flops_per_second if dtype == FLOAT32_DTYPE else None

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
    """This computer in words: host, CPU model, logical CPUs (a host's: `HostInfo.machine_id`)."""
    return host.machine_id(platform.node(), cpu_name(), os.cpu_count())


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


def ensure(device: str, image_size: int, batch_size: int, *, probe: Probe,
           path: Path | None = None, machine: str | None = None,
           tf: str | None = None, keep: bool = True) -> MachineLimits | None:
    """The limits of `device` on `machine` (this computer when None) with TensorFlow `tf` (this
    one's when None), with the ceiling at `image_size` and `batch_size`: from the cache, else
    measured by `probe` (and cached, unless `keep` is False: a probe beside another program
    measures what that program left, and would stand for the machine in every comparison
    after this one).

    With XLAGUI_PEAK_PROBE=off nothing is measured: the cache's entry or None."""
    machine = machine if machine is not None else machine_id()
    tf = tf if tf is not None else tf_version()
    key = cache_key(device, machine=machine, tf=tf)
    cached = load(key, path)
    if cached is not None and cached.ceiling(image_size, batch_size) is not None:
        return cached
    if os.environ.get(PROBE_ENV, "").lower() == "off":
        return cached
    out = probe(device, image_size, batch_size, peak=cached is None)
    if out.ceiling is None:
        raise ValueError("the peak probe measured no layer ceiling")
    ceilings = {ceiling_key(image_size, batch_size): out.ceiling}
    if cached is None:
        limits = MachineLimits(
            key=key,
            device=device,
            device_name=out.device_name or device,
            tf_version=tf,
            machine=machine,
            matmul_size=out.matmul_size,
            matmul_flops_per_second=out.matmul_flops_per_second,
            bandwidth_bytes=out.bandwidth_bytes,
            bandwidth_bytes_per_second=out.bandwidth_bytes_per_second,
            measured=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            probe_seconds=out.probe_seconds,
            ceilings=ceilings,
            matmul_peaks=dict(out.matmul_peaks),
        )
    else:
        limits = MachineLimits.from_dict(
            {**cached.to_dict(), "ceilings": {
                **{k: asdict(v) for k, v in cached.ceilings.items()},
                **{k: asdict(v) for k, v in ceilings.items()},
            }}
        )
    if keep:
        store(limits, path)
    return limits
