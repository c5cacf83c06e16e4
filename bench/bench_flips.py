"""Where XLA's verdict flips on this machine: `xlagui sweep` over issue 30's grids, run as a user
runs it (the demo set), timed, and put in BENCHMARKS.md with its command, wall time, table and
sentences.

    PYTHONPATH=$PWD python bench/bench_flips.py run grid DIR [--budget 1800]
    PYTHONPATH=$PWD python bench/bench_flips.py run runtime DIR [--budget 600]
    PYTHONPATH=$PWD python bench/bench_flips.py show DIR [DIR ...] [--write]

`grid`: the CNN and the Mixer, batch 16, 64 and 256 × image size 64 and 150, arms jit and bf16.
`runtime`: the CNN at 64 px, batch 64, jit, under oneDNN on/off × 1 or 2 intra-op threads (a
setting of every worker of the cell, the baseline too: XLA's verdict under each setting).
`run` writes `bench.json` beside the sweep (the command, its wall time, the load before it);
a rerun of the same folder resumes the sweep, and its wall time is added. `show` prints (and
with `--write` puts in BENCHMARKS.md) every folder given, in order, one section for them all.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, section_text, today

from xlagui.core.sweep.store import open_sweep
from xlagui.present.format import duration
from xlagui.present.sweep import sentences, table

GRIDS = {
    "grid": ["--model", "cnn,mixer", "--batch", "16,64,256", "--image-size", "64,150",
             "--arms", "jit,bf16"],
    "runtime": ["--model", "cnn", "--batch", "64", "--image-size", "64", "--arms", "jit",
                "--set", "onednn=on,off", "--set", "threads=1,2"],
}
BUDGETS = {"grid": 1800, "runtime": 600}
FACTS = "bench.json"


def command_of(grid: str, folder: Path, budget: int) -> list[str]:
    return ["xlagui", "sweep", "--demo", *GRIDS[grid], "--budget", str(budget),
            "--out", str(folder)]


def run(grid: str, folder: Path, budget: int) -> dict[str, Any]:
    """Run (or resume) one grid's sweep in `folder`; its facts, kept in `folder/bench.json`."""
    command = command_of(grid, folder, budget)
    facts_path = folder / FACTS
    facts: dict[str, Any] = json.loads(facts_path.read_text()) if facts_path.exists() else {}
    load = load_average()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "xlagui", *command[1:]], check=False)
    wall = time.perf_counter() - t0
    facts.update(grid=grid, command=" ".join(command), date=today())
    facts["wall_seconds"] = float(facts.get("wall_seconds", 0.0)) + wall
    facts.setdefault("load_before", load)
    facts["invocations"] = int(facts.get("invocations", 0)) + 1
    facts["exit_status"] = proc.returncode
    folder.mkdir(parents=True, exist_ok=True)
    facts_path.write_text(json.dumps(facts, indent=2) + "\n")
    return facts


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def folder_lines(folder: Path, title: str) -> list[str]:
    """One sweep folder in BENCHMARKS.md: the command, its wall time, where each arm wins,
    loses or ties, and the table."""
    result = open_sweep(folder)
    if result is None:
        raise SystemExit(f"{folder}: no sweep.json")
    facts_path = folder / FACTS
    facts = json.loads(facts_path.read_text()) if facts_path.exists() else {}
    plan = result.plan
    header, rows = table(plan, result.cells)
    measured = sum(1 for c in result.cells if c.arms)
    wall = facts.get("wall_seconds")
    lines = [f"#### {title}", ""]
    if facts.get("command"):
        lines += [f"`{facts['command']}`", ""]
    lines += [
        f"{len(plan.cells)} cells, {plan.cell_budget_seconds} s of measuring each; "
        f"{measured} measured; wall time "
        f"{duration(wall) if wall is not None else 'not recorded'}"
        f"{', load average before ' + facts['load_before'] if facts.get('load_before') else ''}"
        f"{', ' + facts['date'] if facts.get('date') else ''}.",
        "",
        *[f"- {s}" for s in sentences(plan, result.cells)],
        "",
        *markdown_table(header, rows),
        "",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="run (or resume) one grid's sweep")
    r.add_argument("grid", choices=sorted(GRIDS))
    r.add_argument("folder", type=Path)
    r.add_argument("--budget", type=int)
    s = sub.add_parser("show", help="the section for sweep folders already run")
    s.add_argument("folders", type=Path, nargs="+")
    add_write(s)
    args = ap.parse_args()
    if args.what == "run":
        facts = run(args.grid, args.folder, args.budget or BUDGETS[args.grid])
        print(json.dumps(facts, indent=2))
        return
    lines = [
        "### Where XLA flips on this machine",
        "",
        "Each cell is an interleaved `--quick` comparison in fresh workers (no why, no "
        "inspection compile); the speed-up is the baseline's step time ÷ the arm's with its "
        "95% interval, and \"ties\" when the interval contains 1.",
        "",
    ]
    for i, folder in enumerate(args.folders, 1):
        facts_path = folder / FACTS
        grid = json.loads(facts_path.read_text()).get("grid", "") if facts_path.exists() else ""
        lines += folder_lines(folder, f"Run {i}: {grid or folder.name}")
    publish("flips", section_text(lines, "see each run"), args.write)


if __name__ == "__main__":
    main()
