"""The host's side of the preflight: what this machine has for a comparison (run on the host by
`preflight.PREFLIGHT_SCRIPT`, only once the host's xlagui is known to be this app's version).

One JSON object on stdout: versions, the devices TensorFlow sees (GPUs with their memory, from
`nvidia-smi` where there is one), the CPU, the free disk where the host keeps its cache.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from xlagui import __version__
from xlagui.core.files import paths
from xlagui.core.protocol.arms import cpu_model
from xlagui.core.protocol.events import PROTOCOL_VERSION


def remote_cache() -> Path:
    """Where the host keeps datasets, models and run folders for other machines."""
    return paths.cache_dir() / "remote"


def free_bytes(folder: Path) -> int:
    """Free disk under `folder`, or its nearest existing parent (nothing is created)."""
    here = folder
    while not here.exists() and here != here.parent:
        here = here.parent
    try:
        return int(shutil.disk_usage(here).free)
    except OSError:
        return 0


def gpu_memory() -> dict[int, int]:
    """Total memory of each GPU by index, from `nvidia-smi` ({} where there is none)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {}
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    memory = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            memory[int(parts[0])] = int(parts[1]) * 1024 * 1024  # MiB
    return memory


def describe() -> dict[str, Any]:
    cache = remote_cache()
    info: dict[str, Any] = {
        "hostname": platform.node(),
        "xlagui": __version__,
        "protocol": PROTOCOL_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_model() or platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count() or 0,
        "cache": str(cache),
        "free_disk_bytes": free_bytes(cache),
        "tensorflow": "",
        "devices": [],
    }
    try:
        # A host without TensorFlow (or without this version's worker) is reported as such,
        # not as a crash at import time.
        import tensorflow as tf  # lazy: only on the host, and it may be missing there

        from xlagui.core.worker.child import probe_devices  # lazy: needs TensorFlow, see above
    except ImportError as exc:
        info["error"] = f"TensorFlow cannot be imported: {exc}"
        return info
    info["tensorflow"] = tf.__version__
    memory = gpu_memory()
    devices: list[dict[str, Any]] = []
    for device in probe_devices():
        found: dict[str, Any] = dict(device)
        if device["id"].startswith("gpu:"):
            found["memory_bytes"] = memory.get(int(device["id"].split(":")[1]))
        elif device["id"] == "cpu":
            found["name"] = info["cpu"] or device["name"]
        devices.append(found)
    info["devices"] = devices
    return info


def main() -> None:
    sys.stdout.write(json.dumps(describe()) + "\n")
    sys.stdout.flush()
