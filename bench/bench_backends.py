"""The same Keras model on TensorFlow without XLA, TensorFlow with XLA and JAX (issue 39): is a
cost XLA's own, or TensorFlow's path into XLA?

    python bench/bench_backends.py --model mobilenetv2 --image-size 64 --runs 2 --why --write

Runs `xlagui compare --demo --quick --arms jax --model M --image-size S` `--runs` times in a row
(with the why when `--why`: the per-layer attribution of the three arms and the sentence that
says where TF+XLA and JAX agree) and tabulates, per run and arm, the step time against the
baseline's with its interval (interleaved pairs), the steady step, the compile cost and each
measuring worker's peak memory (what it includes: the worker's whole process, TensorFlow's
runtime loaded in the JAX worker too, since Keras and the tf.data pipeline import it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, repeat, section_text
from _memory import run_sampled

from xlagui.present.explain import agreement_sentence, backend_agreement
from xlagui.present.units import size_bytes, speed_range, speed_words
from xlagui.present.why_data import Explain

ARMS = "jax"


def _compare(model: str, size: int, why: bool, budget: int | None, out: Path,
             arms_asked: str = ARMS) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "xlagui", "compare", "--demo", "--quick", "--arms", arms_asked,
           "--model", model, "--image-size", str(size), "--out", str(out)]
    cmd += [] if why else ["--no-explain"]
    cmd += ["--budget", str(budget)] if budget else []
    t0 = time.perf_counter()
    _code, memory = run_sampled(cmd, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    data = json.loads((out / "comparison.json").read_text(encoding="utf-8"))
    i = data["comparison"]["interleaved"]
    arms = {"baseline": {"ratio": 1.0, "low": None, "high": None, "pairs": i["pairs"],
                         "steady_step_seconds": i["baseline"]["steady_step_seconds"],
                         "compile_seconds": i["baseline"]["compile_seconds"]}}
    for a in i["arms"]:
        arms[a["arm"]] = a
    peaks: dict[str, int | None] = {}
    for run in data["measure_runs"]:
        finished = next((e for e in run.get("events", []) if e.get("type") == "finished"), None)
        summary = (finished or {}).get("summary") or {}
        name = "baseline" if run["variant"] == "baseline" else (
            "jit" if run["variant"] == "xla" else run["variant"])
        peaks[name] = summary.get("peak_rss_bytes")
    explain = Explain.read(data.get("explain"))
    agreement = backend_agreement(explain) if explain is not None else None
    return {"wall": wall, "arms": arms, "peaks": peaks, "memory": memory,
            "agreement": agreement_sentence(agreement) if agreement is not None else "",
            "busy": data["comparison"].get("disturbed_epochs"),
            "stopped_by": i["stopped_by"]}


def _speed(a: dict[str, Any]) -> str:
    if a["ratio"] == 1.0 and a["low"] is None:
        return "the baseline"
    if a["ratio"] is None:
        return "—"
    words = speed_words(1 / a["ratio"])
    if a["low"] is not None and a["high"] is not None:
        words += f" ({speed_range(1 / a['high'], 1 / a['low'])})"
    return words


def _who(process: str) -> str:
    """A sampled process in words: its worker's folder (`m3-jax`) or the command."""
    folder = process.split("/runs/")[1].split("/")[0] if "/runs/" in process else ""
    return f"worker {folder}" if folder else "the command"


def _why_runs(memory: Any) -> str:
    """The why's runs, which train one at a time after the measuring: each one's own largest
    PSS (empty without the why)."""
    runs = [f"{_who(k)} {size_bytes(v)}" for k, v in memory.own_peak.items() if "/runs/i-" in k]
    return f"; the why's runs, one at a time, each at its own peak (PSS): {', '.join(runs)}" \
        if runs else ""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="cnn")
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--budget", type=int, default=None)
    p.add_argument("--why", action="store_true", help="with the why (the per-layer agreement)")
    p.add_argument("--arms", default=ARMS,
                   help="the arms beside the baseline and jit (jax+memsched: with XLA's "
                        "memory-saving schedule)")
    add_write(p)
    args = p.parse_args()
    load = load_average()
    runs = repeat(
        args.runs, "run",
        lambda out: _compare(args.model, args.image_size, args.why, args.budget, out,
                             args.arms),
        lambda r: f"{r['wall']:.0f} s, " + ", ".join(
            f"{k} {_speed(a)}" for k, a in r["arms"].items() if k != "baseline"),
    )
    why = " --why" if args.why else ""
    budget = f" --budget {args.budget}" if args.budget else ""
    arms = f" --arms {args.arms}" if args.arms != ARMS else ""
    lines = [
        f"## Keras on JAX beside TensorFlow (issue 39): {args.model}, {args.image_size} px"
        + (f", `--arms {args.arms}`" if arms else "") + (", with the why" if args.why else ""),
        "",
        f"`python bench/bench_backends.py --model {args.model} --image-size {args.image_size} "
        f"--runs {args.runs}{why}{budget}{arms}`: `xlagui compare --demo --quick --arms "
        f"{args.arms}` "
        f"{args.runs} times in a row{' with the why' if args.why else ', without the why'}; "
        "the baseline (TensorFlow, XLA off), TF+XLA (jit) and Keras on JAX (its jitted step) "
        "in the same interleaved rounds, from the same initial weights on the same batches. "
        "Peak memory is each measuring worker's whole process (peak RSS): the JAX worker loads "
        "TensorFlow's runtime too (Keras and the tf.data pipeline import it). The workers are "
        "alive together, so the comparison's own peak is \"all at once\": in bold, the "
        "kernel's high-water mark of a memory cgroup the command ran in, where one could be "
        "made (exact for what it counts: every page charged to its processes at once, the "
        "files they wrote included, but not the pages of libraries another process had "
        "loaded first, such as TensorFlow's: so it may read lower than the PSS, or higher "
        "where the samples missed a peak); then the "
        "largest sum over its processes of their PSS (each shared page split among the "
        "processes that map it, libraries included), sampled every 0.25 s, which misses a "
        "peak shorter than that (`bench/_memory.py`). The sum of the workers' own peaks counts "
        "TensorFlow's libraries once per worker and adds peaks that need not coincide.",
        "",
        "| run | arm | speed per step (95% CI) | steady step | compile | peak RSS | pairs | wall |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(runs, start=1):
        for k, a in r["arms"].items():
            steady = a.get("steady_step_seconds")
            comp = a.get("compile_seconds")
            lines.append(
                f"| {n} | {k} | {_speed(a)} | "
                f"{f'{steady:.3f} s' if steady is not None else '—'} | "
                f"{f'{comp:.1f} s' if comp is not None else '—'} | "
                f"{size_bytes(r['peaks'].get(k))} | {a.get('pairs', '—')} | {r['wall']:.0f} s |")
        total = [v for v in r["peaks"].values() if v]
        memory = r["memory"]
        held = ", ".join(f"{_who(k)} {size_bytes(v)}" for k, v in sorted(
            memory.at_peak.items(), key=lambda kv: -kv[1]) if v >= 10**8)
        kernel = ("" if memory.peak_cgroup is None else
                  f"**{size_bytes(memory.peak_cgroup)}** (the kernel's high-water mark); ")
        lines.append(f"| {n} | all at once | | | | {kernel}{size_bytes(memory.peak_pss)} "
                     f"sampled (PSS; {held}); RSS summed {size_bytes(memory.peak_rss)}; the "
                     f"workers' own peaks add to {size_bytes(sum(total))}{_why_runs(memory)} | | |")
    said = [f"- run {n}: {r['agreement']}" for n, r in enumerate(runs, start=1) if r["agreement"]]
    if said:
        lines += ["", "Where TF+XLA and JAX agree, from the why's per-layer table:", "", *said]
    extra = "" if args.arms == ARMS else "-" + args.arms.replace(",", "-").replace("+", "-")
    tag = f"backends-{args.model}-{args.image_size}{'-why' if args.why else ''}{extra}"
    publish(tag, section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
