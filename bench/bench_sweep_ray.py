"""The same sweep here and on a local Ray head: do the cells' ratios agree, and what does Ray cost?

    python bench/bench_sweep_ray.py [--batch 16,128] [--image-size 64] [--arms jit]
                                    [--budget SECONDS] [--address HOST:PORT] [--write]

Runs `xlagui sweep --demo` twice with the same grid, each time into a fresh folder: first here
(one cell at a time), then with `--ray` on a Ray head (a local one this script starts with every
usable core and stops after, as tests/helpers/ray_head.py does, unless `--address` names one).
Prints each cell's ratio with its 95% interval from both, whether the two intervals overlap
(they must: the same measurement on the same machine), and the overhead: the Ray sweep's wall
time ÷ the local one's. `--write` puts the line in BENCHMARKS.md ("A sweep on a local Ray head").
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, section_text, usable_cores

from tests.helpers.ray_head import ray_head


def sweep(args: argparse.Namespace, out: Path, ray: str) -> tuple[dict[str, Any], float]:
    """One `xlagui sweep` (with `--ray` when `ray` is given): sweep.json and the wall time."""
    command = [sys.executable, "-m", "xlagui", "sweep", "--demo", "--batch", args.batch,
               "--image-size", args.image_size, "--arms", args.arms, "--out", str(out)]
    if args.budget:
        command += ["--budget", str(args.budget)]
    if ray:
        command += ["--ray", ray]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.monotonic()
    # From a folder without xlagui: Ray puts the driver's working folder on its workers' path.
    done = subprocess.run(command, cwd=out.parent, env=env, text=True, capture_output=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"the sweep failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return json.loads((out / "sweep.json").read_text(encoding="utf-8")), wall


def cells(saved: dict[str, Any], arm: str) -> dict[str, dict[str, Any]]:
    """Each cell's `arm` entry (ratio, low, high), by cell key."""
    out = {}
    for cell in saved["cells"]:
        entry = next((a for a in cell.get("arms", []) if a["arm"] == arm), None)
        if entry is not None and entry.get("ratio") is not None:
            out[cell["key"]] = {**entry, "node": cell.get("node", "")}
    return out


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(max(a["low"], b["low"]) <= min(a["high"], b["high"]))


def within(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Each ratio inside the other's interval (stricter than overlapping intervals)."""
    return bool(b["low"] <= a["ratio"] <= b["high"] and a["low"] <= b["ratio"] <= a["high"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", default="16,128", help="batch sizes (the sweep's axis)")
    parser.add_argument("--image-size", default="64")
    parser.add_argument("--arms", default="jit", help="one arm: its ratios are compared")
    parser.add_argument("--budget", type=int, default=None, help="the whole sweep's seconds")
    parser.add_argument("--address", default="", help="a running Ray head (default: start one)")
    add_write(parser)
    args = parser.parse_args()
    load = load_average()
    with tempfile.TemporaryDirectory(prefix="xlagui-bench-ray-") as tmp:
        local, local_wall = sweep(args, Path(tmp) / "local", "")
        print(f"local: {local_wall:.0f} s", flush=True)
        if args.address:
            on_ray, ray_wall = sweep(args, Path(tmp) / "ray", args.address)
        else:
            with ray_head(num_cpus=usable_cores()) as head:
                on_ray, ray_wall = sweep(args, Path(tmp) / "ray", head.address)
        print(f"ray: {ray_wall:.0f} s", flush=True)
    here, there = cells(local, args.arms), cells(on_ray, args.arms)
    keys = [k for k in here if k in there]
    agree = all(overlap(here[k], there[k]) for k in keys) and len(keys) == len(here)
    command = (f"`python bench/bench_sweep_ray.py --batch {args.batch} --image-size "
               f"{args.image_size} --arms {args.arms}"
               + (f" --budget {args.budget}" if args.budget else "") + "`")
    lines = [
        "## A sweep on a local Ray head (issue 30)",
        "",
        f"{command}: `xlagui sweep --demo` here, then the same sweep with `--ray` on a local "
        "Ray head (every usable core, one node: its cells one after the other, each on the "
        f"whole node). Ratio = {args.arms} ÷ baseline step time.",
        "",
        "| cell | here | 95% CI | on Ray | 95% CI | intervals overlap | each ratio in the "
        "other's interval |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in keys:
        a, b = here[k], there[k]
        lines.append(f"| {k} | {a['ratio']:.3f} | {a['low']:.3f}–{a['high']:.3f} | "
                     f"{b['ratio']:.3f} | {b['low']:.3f}–{b['high']:.3f} | "
                     f"{'yes' if overlap(a, b) else 'NO'} | {'yes' if within(a, b) else 'no'} |")
    lines += [
        "",
        f"Every cell's intervals overlap: {'yes' if agree else 'NO'}; each ratio inside the "
        f"other's interval in {sum(within(here[k], there[k]) for k in keys)} of {len(keys)} "
        f"cells. Wall time here "
        f"{local_wall:.0f} s, on Ray {ray_wall:.0f} s: overhead ×{ray_wall / local_wall:.2f} "
        "(connecting, sending xlagui and the dataset, each cell's task and its files back).",
    ]
    publish(f"sweep-ray-{args.image_size}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
