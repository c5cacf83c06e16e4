"""What "What XLA did" costs after a speed-only comparison: the inspection compile that follows
the measurement (`compare.inspect_after_measurement`), timed on the demo set.

    python bench/bench_inspect.py [--image-size 150] [--runs 2] [--arms bf16] [--write]

Each run: a short `--quick` measurement (30 s budget, its figures are not what is measured
here), then the inspection, timed from the parent: one worker process per XLA arm that starts
TensorFlow, builds the model, compiles one step with XLA's dump on and exits. Prints the
seconds and the HLO modules dumped; `--write` puts the section in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, repeat, section_text

from xlagui.core.compare import inspect_after_measurement, new_report, run_measurement
from xlagui.core.data.demo import ensure_demo_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState


def once(folder: Path, size: int, arms: tuple[str, ...]) -> dict[str, Any]:
    scan = scan_dataset(ensure_demo_dataset(seed=0))
    report = new_report(scan, RunConfig(image_size=size, quick=True, budget_seconds=30,
                                        arms=arms), demo=True)
    run_measurement(report, scan, folder, TaskState())
    t0 = time.perf_counter()
    inspect_after_measurement(report, scan, folder, TaskState())
    seconds = time.perf_counter() - t0
    modules = {e.run_id: len(list((folder / "runs" / e.run_id / "xla").glob("*.txt")))
               for e in report.inspect_runs}
    return {"seconds": seconds, "modules": modules,
            "status": {e.run_id: e.status for e in report.inspect_runs}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image-size", type=int, default=150)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--arms", default="", help="extra arms, comma-separated (e.g. bf16)")
    add_write(parser)
    args = parser.parse_args()
    os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")
    arms = tuple(a for a in args.arms.split(",") if a)
    load = load_average()
    results = repeat(args.runs, "inspect", lambda f: once(f, args.image_size, arms),
                     lambda r: f"{r['seconds']:.1f} s, {r['status']}, {r['modules']} files")
    lines = [
        f"## What XLA did after a speed-only comparison: demo, {args.image_size} px",
        "",
        f"`python bench/bench_inspect.py --image-size {args.image_size} --runs {args.runs}"
        + (f" --arms {args.arms}" if arms else "") + "`: after a `--quick` measurement, the "
        "inspection compile that gives \"What XLA did\" (one worker per XLA arm, XLA's dump "
        "on), timed from the parent.",
        "",
        "| run | inspection | runs | dumped files |",
        "|---|---|---|---|",
    ]
    for n, r in enumerate(results, start=1):
        runs = ", ".join(f"{k} {v}" for k, v in r["status"].items())
        files = ", ".join(f"{k}: {v}" for k, v in r["modules"].items())
        lines.append(f"| {n} | {r['seconds']:.1f} s | {runs} | {files} |")
    publish(f"inspect-{args.image_size}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
