"""The host's side of the preflight: what this machine has for a comparison (run on the host by
`preflight.PREFLIGHT_SCRIPT`, only once the host's xlagui is known to be this app's version).

One JSON object on stdout: versions, the devices TensorFlow sees (GPUs with their memory, from
`nvidia-smi` where there is one), the CPU, the free disk where the host keeps its cache; or, on a
host whose TensorFlow cannot be imported, why not (`NO_TENSORFLOW`: the import's own words).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from xlagui import __version__
from xlagui.core.files import paths
from xlagui.core.machine.cpu import cpu_name
from xlagui.core.machine.devices import gpu_memory, probe_devices, with_memory
from xlagui.core.protocol.events import PROTOCOL_VERSION
from xlagui.core.protocol.jsoncodec import plain

# The field of the answer that says TensorFlow cannot be imported, with the import's words
# (`xlagui.present.hosts` says the rest): only this very version reads it.
NO_TENSORFLOW = "no_tensorflow"


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


def describe() -> dict[str, Any]:
    cache = remote_cache()
    info: dict[str, Any] = {
        "hostname": platform.node(),
        "xlagui": __version__,
        "protocol": PROTOCOL_VERSION,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu_name(),
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
    except ImportError as exc:
        info[NO_TENSORFLOW] = str(exc)
        return info
    info["tensorflow"] = tf.__version__
    info["devices"] = plain(with_memory(probe_devices(), gpu_memory(), info["cpu"]))
    return info


def main() -> None:
    sys.stdout.write(json.dumps(describe()) + "\n")
    sys.stdout.flush()
