"""XLA by model on this machine: `xlagui compare --demo --quick --arms jit,bf16 --model M` for
every built-in model, each in a fresh process, as a user would run it.

    python bench/bench_models.py [--models cnn,mixer] [--image-size 150] [--tag "second run"]
                                 [--budget S] [--write]

Tabulates, per model: its parameters, each arm's ratio (arm ÷ baseline step time; above 1:
slower) with its 95% interval and pairs, what ended the measurement, the measuring time and the
whole command's wall time (building the model once, compiling, measuring, the quick accuracy
check). Says which models XLA speeds up on this machine and which it slows down: an arm is
"faster" or "slower" only when its whole interval is on one side of 1.00. `--write` puts the
section in BENCHMARKS.md ("XLA by model on this machine"); run it twice (`--tag`) to see
whether the figures reproduce.
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

from _common import ROOT, add_write, load_average, publish, section_text

from xlagui.core.model.sources import builtin_names

ARMS = "jit,bf16"


def once(model: str, size: int, budget: int | None, out: Path) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "xlagui", "compare", "--demo", "--quick", "--arms", ARMS,
           "--model", model, "--image-size", str(size), "--out", str(out)]
    cmd += ["--budget", str(budget)] if budget else []
    t0 = time.perf_counter()
    done = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    path = out / "comparison.json"
    if not path.is_file():
        tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
        error = " / ".join(tail) or f"exit {done.returncode}"
        return {"model": model, "wall": wall, "error": error}
    data = json.loads(path.read_text(encoding="utf-8"))
    c = data.get("comparison") or {}
    i = c.get("interleaved") or {}
    return {
        "model": model,
        "wall": wall,
        "params": (data["config"].get("model") or {}).get("params"),
        "image_size": data["config"]["image_size"],
        "stopped_by": i.get("stopped_by", ""),
        "measuring": (data.get("measurement") or {}).get("measuring_seconds"),
        "arms": {a["arm"]: a for a in i.get("arms", [])},
        "error": "" if done.returncode in (0, 1) else f"exit {done.returncode}",
    }


def _ratio(a: dict[str, Any] | None) -> str:
    if not a or a.get("ratio") is None:
        return "—"
    low, high = a.get("low"), a.get("high")
    ci = f" ({low:.2f}–{high:.2f})" if low is not None and high is not None else ""
    half = a.get("half_width")
    pm = f", ±{half:.1%}" if half is not None else ""
    return f"{a['ratio']:.2f}{ci}{pm}, {a.get('pairs', 0)} pairs"


def direction(a: dict[str, Any] | None) -> str:
    """"faster" / "slower" when the whole 95% interval is on one side of 1.00, else "same"."""
    if not a or a.get("low") is None or a.get("high") is None:
        return "unknown"
    if a["high"] < 1:
        return "faster"
    if a["low"] > 1:
        return "slower"
    return "no difference shown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(builtin_names()))
    parser.add_argument("--image-size", type=int, default=150)
    parser.add_argument("--budget", type=int, default=None,
                        help="measuring budget per model (xlagui's default when not given)")
    parser.add_argument("--tag", default="", help="a second section for a rerun (run twice)")
    add_write(parser)
    args = parser.parse_args()
    os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")  # the limits are not what is measured
    load = load_average()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            r = once(model, args.image_size, args.budget, Path(tmp) / model)
            results.append(r)
            arms = r.get("arms", {})
            print(f"{model}: jit {_ratio(arms.get('jit'))}; bf16 {_ratio(arms.get('bf16'))}; "
                  f"{r['wall']:.0f} s {r.get('error', '')}", flush=True)
    budget = f" --budget {args.budget}" if args.budget else ""
    lines = [
        f"## XLA by model on this machine, {args.image_size} px"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_models.py --image-size {args.image_size}{budget}`: for each "
        f"built-in model, `xlagui compare --demo --quick --arms {ARMS} --model M --image-size "
        f"{args.image_size}{budget}` in a fresh process. Ratio = arm ÷ baseline step time "
        "(above 1: slower), 95% interval, ± its half-width; \"wall\" is the whole command "
        "(building the model once, compiling each arm, measuring, the quick accuracy check).",
        "",
        "| model | parameters | XLA (jit) | XLA on this CPU | bf16 | ended by | measuring | wall |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        if r.get("error") and not r.get("arms"):
            lines.append(f"| {r['model']} | — | failed: {r['error']} | | | | | {r['wall']:.0f} s |")
            continue
        arms = r["arms"]
        params = f"{r['params']:,}" if r.get("params") else "—"
        measuring = f"{r['measuring']:.0f} s" if r.get("measuring") else "—"
        lines.append(
            f"| {r['model']} | {params} | {_ratio(arms.get('jit'))} | "
            f"{direction(arms.get('jit'))} | {_ratio(arms.get('bf16'))} | {r['stopped_by']} | "
            f"{measuring} | {r['wall']:.0f} s |")
    faster = [r["model"] for r in results if direction(r.get("arms", {}).get("jit")) == "faster"]
    slower = [r["model"] for r in results if direction(r.get("arms", {}).get("jit")) == "slower"]
    lines += ["", f"XLA (jit_compile=True) trains faster here: {', '.join(faster) or 'none'}; "
              f"slower: {', '.join(slower) or 'none'}."]
    tag = f"-{args.tag}" if args.tag else ""
    publish(f"models-{args.image_size}{tag}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
