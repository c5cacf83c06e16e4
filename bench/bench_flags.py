"""Which of XLA's CPU flags change speed here: one interleaved `xlagui compare --quick` with an
arm per named flag (each `jit+<flag>`), then each flag's arm against the jit arm (the XLA side),
pair by pair from the same rounds, with the app's own estimator (Hodges-Lehmann on log ratios,
95%). Below 1: faster than jit.

    PYTHONPATH=$PWD python bench/bench_flags.py run DIR [--budget 480] [--image-size 64]
    PYTHONPATH=$PWD python bench/bench_flags.py show DIR [--write]

`run` writes the comparison into DIR (and `bench.json`: the command, its wall time, the load
before it); `show` reads it back. The window offers by name the flags whose interval excludes 1.
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

from xlagui.core.analysis.pairs import estimate_ratio
from xlagui.core.protocol.xla_flags import NAMED
from xlagui.core.results.export import read_json
from xlagui.present.format import duration

FACTS = "bench.json"


def flag_arms() -> list[str]:
    """`jit+<part>` for every named flag; oneDNN's custom call only with oneDNN itself on."""
    return [f"jit+{n.part}" + ("+xladnn" if n.part == "dnncall" else "") for n in NAMED]


def run(folder: Path, budget: int, image_size: int) -> dict[str, Any]:
    command = ["xlagui", "compare", "--demo", "--quick", "--no-explain", "--image-size",
               str(image_size), "--budget", str(budget), "--arms", ",".join(flag_arms()),
               "--out", str(folder)]
    load = load_average()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "xlagui", *command[1:]], check=False)
    facts = {"command": " ".join(command), "wall_seconds": time.perf_counter() - t0,
             "load_before": load, "date": today(), "exit_status": proc.returncode}
    (folder / FACTS).write_text(json.dumps(facts, indent=2) + "\n")
    return facts


def step_times(events: list[Any]) -> dict[int, float]:
    """Seconds per batch of each timed block, by round."""
    return {e.seq: e.seconds / e.steps for e in events
            if getattr(e, "type", "") == "block" and e.steps}


def rows(folder: Path) -> list[list[str]]:
    report = read_json(folder / "comparison.json")
    by_variant = {str(r.variant): r for r in report.measure_runs}
    jit = step_times(by_variant["xla"].events)
    out = []
    for name, entry in by_variant.items():
        if name in ("baseline", "xla", "check"):
            continue
        mine = step_times(entry.events)
        ratios = [mine[seq] / jit[seq] for seq in sorted(mine) if seq in jit]
        est = estimate_ratio(ratios) if ratios else None
        env = entry.arm.environment()
        flags = " ".join(f"`{f}`" for f in (env.get("XLA_FLAGS", "") + " "
                                             + env.get("TF_XLA_FLAGS", "")).split()
                         if "xla_cpu" in f)
        if est is None or est.low is None or est.high is None:
            out.append([name, flags, str(len(ratios)), "—", "—", "not measured"])
            continue
        verdict = ("slower" if est.low > 1 else "faster" if est.high < 1 else "no difference")
        out.append([name, flags or "—", str(len(ratios)), f"{est.ratio:.3f}",
                    f"{est.low:.3f}–{est.high:.3f}", verdict])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run")
    r.add_argument("folder", type=Path)
    r.add_argument("--budget", type=int, default=480)
    r.add_argument("--image-size", type=int, default=64)
    s = sub.add_parser("show")
    s.add_argument("folders", type=Path, nargs="+")
    add_write(s)
    args = ap.parse_args()
    if args.what == "run":
        print(json.dumps(run(args.folder, args.budget, args.image_size), indent=2))
        return
    lines = ["### Which XLA flags change speed here", "",
             "Each flag's arm against the jit arm of the same interleaved comparison (the "
             "article's CNN, batch 64, float32), round by round: its step time ÷ jit's, 95% "
             "interval. Below 1: faster than jit.", ""]
    loads = []
    for i, folder in enumerate(args.folders, 1):
        facts_path = folder / FACTS
        facts = json.loads(facts_path.read_text()) if facts_path.exists() else {}
        loads.append(str(facts.get("load_before", "unknown")))
        lines += [f"#### Run {i}", ""]
        if facts.get("command"):
            lines += [f"`{facts['command']}`", "",
                      f"Wall time {duration(facts.get('wall_seconds'))}; load average before "
                      f"{facts.get('load_before', 'unknown')}; {facts.get('date', '')}.", ""]
        lines += ["| arm | flags (XLA_FLAGS) | pairs | ÷ jit | 95% CI | verdict |",
                  "|---|---|---:|---:|---|---|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows(folder)]
        lines.append("")
    publish("flags", section_text(lines, "; ".join(loads)), args.write)


if __name__ == "__main__":
    main()
