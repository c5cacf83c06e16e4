"""What the why costs, and when the answer comes: `xlagui compare DIR --quick` run as a user runs
it, each output line stamped with its time, `--runs` times with the why and once with
`--no-explain`. "Answer": when the speed answer was printed (the comparison table); "why": when
"Where the time goes" was; "total": the command's end.

    PYTHONPATH=$PWD python bench/bench_why_cost.py DIR [--image-size 150] [--runs 2] [--write]

The goal (issue 29, 2 cores, 150 px): the answer in at most 180 s, the whole with its why in
at most 240 s.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import add_write, load_average, publish, section_text

ANSWER_GOAL, WHOLE_GOAL = 180.0, 240.0


def timed(data: Path, image_size: int, out: Path, explain: bool) -> tuple[float | None, ...]:
    """(answer, why, total) seconds of one `compare --quick`."""
    command = [sys.executable, "-m", "xlagui", "compare", str(data), "--quick",
               "--image-size", str(image_size), "--out", str(out)]
    if not explain:
        command.append("--no-explain")
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    answer = why = None
    assert proc.stdout is not None
    for line in proc.stdout:
        now = time.perf_counter() - t0
        if answer is None and "Comparison (baseline vs XLA)" in line:
            answer = now
        if why is None and line.startswith("Where the time goes"):
            why = now
    proc.wait()
    return answer, why, time.perf_counter() - t0


def seconds(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--image-size", type=int, default=150)
    ap.add_argument("--runs", type=int, default=2)
    add_write(ap)
    args = ap.parse_args()
    load = load_average()
    out = Path(tempfile.mkdtemp(prefix="xlagui-why-cost-"))
    rows = []
    for run in range(1, args.runs + 1):
        answer, why, total = timed(args.data, args.image_size, out / f"why-{run}", True)
        met = ("met" if answer is not None and answer <= ANSWER_GOAL and total <= WHOLE_GOAL
               else "not met")
        rows.append(f"| with the why, run {run} | {seconds(answer)} | {seconds(why)} | "
                    f"{seconds(total)} | {seconds(total - answer if answer else None)} | {met} |")
        print(rows[-1], flush=True)
    answer, _, total = timed(args.data, args.image_size, out / "no-explain", False)
    rows.append(f"| `--no-explain` | {seconds(answer)} | — | {seconds(total)} | "
                f"{seconds(total - answer if answer else None)} | — |")
    lines = [
        f"## The answer first, the why after: when each comes, at {args.image_size} px "
        "(issue 29)",
        "",
        f"`xlagui compare {args.data.name} --quick --image-size {args.image_size}` (the CNN, "
        "batch 64), by `bench/bench_why_cost.py`: when the answer was printed, when the why "
        "began to be, the whole command, and what came after the answer (the why's workers, "
        f"the files). Goal: the answer in ≤ {ANSWER_GOAL:.0f} s, the whole in ≤ "
        f"{WHOLE_GOAL:.0f} s.",
        "",
        "| run | answer | why printed | total | after the answer | goal |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    publish(f"why-cost-{args.image_size}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
