"""What every benchmark shares: a description of the machine, BENCHMARKS.md sections and the
`--write` option that puts them there, `--image-size` and `--batch`, repeated runs in a temporary
folder, and waiting for a Qt signal."""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from xlagui.core.files.atomic import atomic_open  # noqa: E402
from xlagui.core.machine.cpu import cpu_name as cpu_name  # noqa: E402  # bench scripts' import
from xlagui.core.protocol.config import DEFAULTS  # noqa: E402

R = TypeVar("R")


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


def cpu_ticks() -> tuple[int, int] | None:
    """(steal, all) CPU ticks since boot (/proc/stat), None where there is none: steal is the
    time a virtual machine's CPUs were ready but its hypervisor ran something else."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    return (fields[7] if len(fields) > 7 else 0), sum(fields[:8])


def steal_words(before: tuple[int, int] | None, after: tuple[int, int] | None) -> str:
    """The share of CPU time the hypervisor took between two `cpu_ticks`: a VM's own load
    average does not see it, and it slows every figure measured meanwhile."""
    if before is None or after is None or after[1] <= before[1]:
        return "steal not measured"
    return f"CPU steal {(after[0] - before[0]) / (after[1] - before[1]):.1%}"


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


def add_write(parser: argparse.ArgumentParser) -> None:
    """The option every bench has: put its section in BENCHMARKS.md (see `publish`)."""
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")


def add_image_size_and_batch(parser: argparse.ArgumentParser) -> None:
    """`--image-size` and `--batch`, by default xlagui's own (the article's 150 px, batch 64)."""
    parser.add_argument("--image-size", type=int, default=DEFAULTS["image_size"])
    parser.add_argument("--batch", type=int, default=DEFAULTS["batch_size"])


def command_line() -> str:
    """How this benchmark was run, as a user types it: `python bench/NAME.py ARGS`."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(Path.cwd())
    except ValueError:
        script = Path("bench") / script.name
    return " ".join(["python", str(script), *(shlex.quote(a) for a in sys.argv[1:])])


def section_text(lines: Iterable[str], load: str, *extra: str, before: str = "") -> str:
    """A section's text: `lines`, a blank line, and its stamp (`STAMP_PARTS`, checked by
    tests/test_benchmarks_stamps.py): the machine it was measured on (`extra`: more to name,
    such as library versions), the load average `before` the measurement and now, after it,
    the date, and the command that wrote it."""
    when = f"{before} " if before else ""
    return "\n".join(
        [
            *lines,
            "",
            f"Machine: {machine(*extra)}; load average before {when}{load}, after "
            f"{load_average()}. Measured {today()}. Command: `{command_line()}`.",
        ]
    )


def publish(name: str, text: str, write: bool) -> None:
    """Print a section; with `--write` also put it in BENCHMARKS.md as section `name`."""
    print(text)
    if write:
        write_section(name, text)


def repeat(
    times: int, label: str, once: Callable[[Path], R], describe: Callable[[R], str]
) -> list[R]:
    """`once(folder)` `times` times in a row, each in a fresh folder of one temporary directory
    (removed at the end); after each, print `LABEL N: describe(result)`."""
    results: list[R] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(times):
            result = once(Path(tmp) / f"{label}{n}")
            results.append(result)
            print(f"{label} {n + 1}: {describe(result)}", flush=True)
    return results


def wait_for(signal: Any, timeout_ms: int) -> None:
    """Run a Qt event loop until `signal` fires or `timeout_ms` have passed."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()
    signal.disconnect(loop.quit)
