"""How long does scanning a dataset folder take? Goal: 10,000 files in at most 3 s (2 cores).

    python bench/bench_scan.py [--files 10000] [--repeats 3] [--write]

Writes small real JPEG and PNG files (a few sizes, 2 classes, train/ and test/) to a temporary
folder (not timed), scans it `--repeats` times and prints the median as a Markdown snippet.
With `--write` the snippet replaces the section between `<!-- bench:scan -->` and
`<!-- /bench:scan -->` in BENCHMARKS.md at the repository root (created if missing).

The page cache is warm after the files are written, so this measures the scan's own work (header
parsing, stat, listing), not the disk; a first scan of a cold network share will be slower.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _common import add_write, load_average, publish, section_text
from PIL import Image

from xlagui.core.data.scan import scan_dataset
from xlagui.present.scan import summary_text

GOAL_SECONDS = 3.0
GOAL_FILES = 10_000
SIZES = ((64, 64), (48, 48), (96, 72), (128, 96))


def make_dataset(root: Path, n_files: int) -> None:
    """`n_files` distinct small images: 80% in train/, 20% in test/, two classes, 3 JPEG : 1 PNG."""
    for i in range(n_files):
        split = "test" if i % 5 == 0 else "train"
        label = ("cats", "dogs")[i % 2]
        size = SIZES[i % len(SIZES)]
        folder = root / split / label
        folder.mkdir(parents=True, exist_ok=True)
        # Noise makes every file's bytes (and mostly its size) unique, as in a real dataset.
        image = Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3))
        buf = io.BytesIO()
        if i % 4 == 3:
            image.save(buf, "PNG")
            name = f"{i:06d}.png"
        else:
            image.save(buf, "JPEG", quality=85)
            name = f"{i:06d}.jpg"
        (folder / name).write_bytes(buf.getvalue())


def snippet(
    n_files: int, times: list[float], cpu_times: list[float], scanned: int, load: str
) -> str:
    median = statistics.median(times)
    verdict = "met" if median <= GOAL_SECONDS * n_files / GOAL_FILES else "MISSED"
    runs = ", ".join(f"{t:.2f}" for t in times)
    # The scan is single-threaded: CPU time (in the table) is what it costs on an idle machine,
    # and wall time above it means other programs were competing for the cores.
    lines = [
        "## Dataset scan",
        "",
        f"`python bench/bench_scan.py --files {n_files}`: {n_files:,} small JPEG and PNG "
        "files (3 JPEG to 1 PNG, 48 to 128 px, 2 classes, train/ and test/), page cache warm, "
        f"median of {len(times)} scans.",
        "",
        "| files | median wall | median CPU | files/s | runs, wall (s) | goal |",
        "|---|---|---|---|---|---|",
        f"| {scanned:,} | {median:.2f} s | {statistics.median(cpu_times):.2f} s | "
        f"{scanned / median:,.0f} | {runs} | "
        f"10,000 files in at most {GOAL_SECONDS:.0f} s: {verdict} |",
    ]
    return section_text(lines, load, f"Pillow {Image.__version__}", before="the scans")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=GOAL_FILES, help="how many images")
    parser.add_argument("--repeats", type=int, default=3, help="how many timed scans")
    add_write(parser)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="xlagui-bench-scan-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        make_dataset(root, args.files)
        print(
            f"wrote {args.files:,} files in {time.perf_counter() - started:.1f} s (not timed)",
            file=sys.stderr,
        )
        times: list[float] = []
        cpu_times: list[float] = []
        scanned = 0
        load = load_average()
        for _ in range(args.repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            scan = scan_dataset(root)
            times.append(time.perf_counter() - started)
            cpu_times.append(time.process_time() - cpu_started)
            scanned = len(scan.files)
            if scanned != args.files or not scan.ok:
                print(summary_text(scan), file=sys.stderr)
                raise SystemExit("the scan did not find every file; the timing would mislead")

    publish("scan", snippet(args.files, times, cpu_times, scanned, load), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
