"""The CPU's facts: its model name and its feature flags (Linux `/proc/cpuinfo`).

Callers that word hardware advice (`protocol/arms.py`'s notes, the window's default arms) are
given these facts; they do not read the machine themselves.
"""

from __future__ import annotations

import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")


def cpu_model(cpuinfo: Path = CPUINFO) -> str:
    """The CPU's model name ("" where `/proc/cpuinfo` does not say)."""
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def cpu_flags(cpuinfo: Path = CPUINFO) -> frozenset[str]:
    """The CPU's feature flags (Linux `/proc/cpuinfo`; empty where the file does not exist)."""
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith(("flags", "Features")):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def cpu_name() -> str:
    """The CPU in words: its model name, else what the platform says."""
    return cpu_model() or platform.processor() or platform.machine()
