"""Why, by model: for each built-in model, `xlagui compare --demo --quick --model M --image-size N`
run as a user runs it, and what its why says: XLA's top difference from the baseline, each
side's step and coverage, XLA's parity kind, the partial batch's recompile, and the wall time of
the whole command (the answer, then the why).

    PYTHONPATH=$PWD python bench/bench_why.py [--models cnn,mobilenetv2,...] [--image-size 64]
        [--out DIR] [--load] [--write]

`--load`: read every comparison already in DIR/<model>-<run> (written by an earlier call with
the same --out, or `xlagui compare` itself) instead of running them again; their wall times
come from DIR/times.json.
`--runs 2` runs each model twice (the top differences of the two runs are both shown).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, section_text

from xlagui.core.model.builtin import BUILTIN_NAMES
from xlagui.core.results.report import ComparisonReport
from xlagui.present.explain import op_kind_words, pass_words, step_time
from xlagui.present.parity import kind_words


def run_one(model: str, image_size: int, out: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "xlagui", "compare", "--demo", "--quick", "--model",
                    model, "--image-size", str(image_size), "--out", str(out)],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def row(name: str, folder: Path, wall: float | None) -> str:
    report = ComparisonReport.from_dict(
        json.loads((folder / "comparison.json").read_text(encoding="utf-8")))
    d = report.to_dict()
    c = report.comparison
    ratio = "—"
    i = c.interleaved if c is not None else None
    if i is not None and None not in (i.ratio, i.low, i.high):
        ratio = f"{i.ratio:.2f} ({i.low:.2f}–{i.high:.2f})"
    explain: dict[str, Any] = d.get("explain") or {}
    arms = explain.get("arms", {})
    sides = " / ".join(
        f"{step_time(arms[a]['step_seconds'])}, {arms[a]['coverage']:.0%}"
        for a in ("baseline", "xla") if a in arms) or "—"
    tops = [t for t in explain.get("top_differences", []) if t["arm"] == "xla"]
    top = "—"
    if tops:
        t = tops[0]
        top = (f"{t['layer']}: {pass_words(t['pass'])}, {op_kind_words(t['op_kind'])}, "
               f"{step_time(t['baseline_seconds'])} → {step_time(t['arm_seconds'])}")
    parity = (d.get("parity") or {}).get("xla")
    same = kind_words(parity["kind"]) if parity else "—"
    partial = [c for r in d["measure_runs"] for c in r.get("compilations", [])
               if c["reason"].get("partial_batch")]
    recompile = (f"{len(partial)} (batch of {partial[0]['reason']['now']})" if partial
                 else "none")
    took = f"{wall:.0f} s" if wall is not None else "—"
    return f"| {name} | {ratio} | {sides} | {top} | {same} | {recompile} | {took} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(BUILTIN_NAMES))
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("/tmp/xlagui-bench-why"))
    ap.add_argument("--load", action="store_true", help="read the comparisons in --out")
    add_write(ap)
    args = ap.parse_args()
    load = load_average()
    args.out.mkdir(parents=True, exist_ok=True)
    times_file = args.out / "times.json"
    times: dict[str, float] = (json.loads(times_file.read_text()) if times_file.exists() else {})
    lines = [
        f"## Why, by model: where XLA's step time goes, at {args.image_size} px (issue 29)",
        "",
        f"`xlagui compare --demo --quick --model M --image-size {args.image_size}` (batch 64, the "
        "why on: one untimed worker per side after the answer), read back from its "
        "`comparison.json` by `bench/bench_why.py`. Step and coverage: the profiled steps' "
        "wall time and the share of it some traced kernel covered (baseline / XLA). Top "
        "difference: XLA's row farthest from the baseline's, in thread-time per step. Wall: "
        "the whole command, measurement (up to its 120 s budget) and why together.",
        "",
        "| model | XLA ÷ baseline step (95% CI) | step, coverage (baseline / XLA) | XLA's top "
        "difference (baseline → XLA) | XLA's parity | partial-batch recompiles | wall |",
        "|---|---|---|---|---|---|---|",
    ]
    for model in args.models.split(","):
        if args.load:  # every run of the model found there
            runs = sorted(int(p.name.rsplit("-", 1)[1]) for p in args.out.glob(f"{model}-*")
                          if (p / "comparison.json").exists())
        else:
            runs = list(range(1, args.runs + 1))
        for run in runs:
            name = f"{model}-{run}"
            folder = args.out / name
            if not args.load:
                times[name] = run_one(model, args.image_size, folder)
                times_file.write_text(json.dumps(times, indent=1))
            if (folder / "comparison.json").exists():
                label = model if len(runs) == 1 else f"{model}, run {run}"
                lines.append(row(label, folder, times.get(name)))
    publish("why-by-model", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
