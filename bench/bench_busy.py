"""What a busy machine looks like to the instrument (issue 37): the share of the machine's cores
anything else used during each timed block, on a quiet machine and beside one busy core, and
what the answer and the A/A check did in each.

    python bench/bench_busy.py --runs 2 --image-size 64 --seconds 60 [--tag run1] [--write]

Each run is `xlagui compare --demo --quick --check --no-explain` (the XLA side and the A/A twin
against the baseline, through the same `run_measurement`), first on the machine as it is
("quiet"), then beside a bounded busy process this script starts (`python -c` spinning on one
core, ended with the run). Per scenario: every block's other-programs share (median, 95th
percentile, largest), the rounds set aside, whether the answer was marked busy, who was named,
the XLA ratio with its interval, and the A/A ratio and whether it covers 1.00.

The quiet and busy shares are what `DEFAULTS["busy_percent"]` is set between; the busy answer
must fall within the quiet one's interval (or 5%) or be marked busy.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, repeat, section_text

from xlagui.core.compare import new_report, run_measurement
from xlagui.core.data.demo import ensure_demo_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import BlockEvent
from xlagui.core.protocol.task import TaskState

SPIN = "import time\nend = time.time() + {limit}\nwhile time.time() < end: pass\n"


@contextlib.contextmanager
def busy_core(limit_s: float) -> Iterator[subprocess.Popen[bytes]]:
    """One process spinning on one core, for at most `limit_s` (it ends itself if this script
    is killed), stopped when the block ends."""
    spinner = subprocess.Popen([sys.executable, "-c", SPIN.format(limit=limit_s)])
    try:
        time.sleep(1.0)  # running before the measurement starts, as a user's program would be
        yield spinner
    finally:
        spinner.terminate()
        spinner.wait(10)


def once(folder: Path, size: int, seconds: int, busy: bool) -> dict[str, Any]:
    scan = scan_dataset(ensure_demo_dataset(seed=0))
    config = RunConfig(image_size=size, quick=True, check=True, budget_seconds=seconds,
                       explain=False)
    report = new_report(scan, config, demo=True)
    t0 = time.perf_counter()
    with busy_core(seconds * 4 + 300) if busy else contextlib.nullcontext():
        run_measurement(report, scan, folder, TaskState())
    c = report.comparison
    assert c is not None and c.interleaved is not None and c.interleaved.machine is not None
    shares = sorted(e.interference.other_share for r in report.measure_runs for e in r.events
                    if isinstance(e, BlockEvent) and e.interference is not None)
    return {"summary": c.interleaved, "shares": shares, "wall": time.perf_counter() - t0}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.1%}"


def row(scenario: str, n: int, r: dict[str, Any]) -> str:
    s = r["summary"]
    m = s.machine
    shares = r["shares"]
    p95 = shares[min(len(shares) - 1, int(0.95 * len(shares)))] if shares else None
    xla = s.arms[0] if s.arms else None
    k = s.check
    named = ", ".join(f"{p.name} {p.share:.0%}" for p in m.busiest) or "—"
    return (
        f"| {scenario} {n} | {_pct(statistics.median(shares) if shares else None)} | "
        f"{_pct(p95)} | {_pct(shares[-1] if shares else None)} | {_pct(m.other_share)} | "
        f"{m.disturbed_rounds} of {m.rounds} | {'**busy**' if m.busy else 'quiet'} | {named} | "
        + (f"{xla.ratio:.3f} ({xla.low:.3f}–{xla.high:.3f})" if xla and xla.low else "—")
        + " | "
        + (f"{k.ratio:.3f} ({k.low:.3f}–{k.high:.3f}), "
           f"{'covers' if k.covers_one else 'MISSES'} 1.00" if k and k.low else "—")
        + f" | {r['wall']:.0f} s |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each scenario")
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--seconds", type=int, default=60, help="measuring budget per run")
    parser.add_argument("--tag", default="", help="a second section for a rerun (run twice)")
    add_write(parser)
    args = parser.parse_args()
    os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")  # the limits are not what is tested
    load = load_average()
    results = {}
    for scenario, busy in (("quiet", False), ("busy", True)):
        results[scenario] = repeat(
            args.runs, scenario, lambda f, b=busy: once(f, args.image_size, args.seconds, b),
            lambda r: (f"other share {r['summary'].machine.other_share:.1%}, "
                       f"busy={r['summary'].machine.busy}, {r['wall']:.0f} s"),
        )
    lines = [
        f"## What a busy machine looks like: demo, {args.image_size} px (issue 37)"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_busy.py --runs {args.runs} --image-size {args.image_size} "
        f"--seconds {args.seconds}`: `--quick --check --no-explain` (the XLA side and the A/A "
        f"twin against the baseline), {args.seconds} s of measuring, first with nothing else "
        "started (quiet), then beside one process spinning on one core (busy), started a second "
        "before the run. \"Other\" is the share of the machine's cores anything but the timed "
        "worker used during a block (psutil: busy and steal time less the worker's own CPU "
        f"time); a block above {RunConfig().busy_percent}% is disturbed.",
        "",
        "| run | other, median block | 95th pct | largest | over the run | rounds set aside "
        "| answer | named | XLA ÷ baseline (95% CI) | A/A (95% CI) | wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scenario, runs in results.items():
        lines += [row(scenario, n, r) for n, r in enumerate(runs, start=1)]
    quiet = [r["summary"].arms[0] for r in results["quiet"] if r["summary"].arms]
    busy = [r for r in results["busy"] if r["summary"].arms]
    verdicts = []
    for r in busy:
        a, m = r["summary"].arms[0], r["summary"].machine
        within = any(q.low is not None and q.high is not None and a.ratio is not None and (
            q.low <= a.ratio <= q.high or abs(a.ratio / q.ratio - 1) <= 0.05) for q in quiet)
        verdicts.append("marked busy" if m.busy else
                        "within the quiet interval or 5%" if within else "NEITHER")
    lines += ["", "Beside the busy core, each answer: " + "; ".join(verdicts) + "."]
    tag = f"-{args.tag}" if args.tag else ""
    publish(f"busy-{args.image_size}{tag}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
