"""What every benchmark shares: a description of the machine and BENCHMARKS.md sections."""

from __future__ import annotations

import datetime
import os
import platform
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from xlagui.core.atomic import atomic_open  # noqa: E402


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine(*extra: str) -> str:
    parts = [
        cpu_name(),
        f"{usable_cores()} usable cores ({os.cpu_count()} in the machine)",
        f"{platform.system()} {platform.release()}",
        f"Python {platform.python_version()}",
        *extra,
    ]
    return ", ".join(parts)


def load_average() -> str:
    try:
        return ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return "unknown"


def today() -> str:
    return datetime.date.today().isoformat()


def write_section(name: str, text: str, path: Path = BENCHMARKS) -> None:
    """Replace (or append) the section between `<!-- bench:NAME -->` markers of `path`."""
    begin, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    body = f"{begin}\n{text.strip()}\n{end}"
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    start, stop = old.find(begin), old.find(end)
    if start != -1 and stop > start:
        new = old[:start] + body + old[stop + len(end) :]
    else:
        new = old.rstrip("\n") + "\n\n" + body + "\n"
    with atomic_open(path, "w", encoding="utf-8") as fh:
        fh.write(new)
