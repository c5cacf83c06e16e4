"""The interleaved speed measurement: is its answer reproducible, how fast does it come, and does
xlagui's worker step cost what a plain Keras step costs?

    python bench/bench_interleaved.py repro --runs 5 --image-size 150 [--dataset DIR] --write
    python bench/bench_interleaved.py p1 --image-size 150 --write
    python bench/bench_interleaved.py reference --image-size 150 [--dataset DIR] --write

`repro` runs `xlagui compare --quick` N times in a row and tabulates the estimates, intervals and
wall times. `p1` alternates, in one process, blocks of xlagui's worker step (Keras' compiled train
function on a repeated batch) with blocks of a plain `model.train_on_batch` loop on the same batch,
and reports the per-pair ratio. `reference` is an independent interleaved measurement that shares
none of xlagui's measuring code: two processes load the folder with
`keras.utils.image_dataset_from_directory`, and alternate blocks of 4 `train_on_batch` steps.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, repeat, section_text

from xlagui.core.analysis.pairs import estimate_ratio

# The first line of the answer the command prints (`cli/console.py: print_summary`, called when
# a speed-only comparison has its answer: before "What XLA did" or the why that follow it).
ANSWER_MARK = "Comparison (baseline vs XLA)"


def _quick(dataset: str | None, size: int, out: Path, explain: bool = True,
           data_dir: Path | None = None) -> dict[str, Any]:
    """One `xlagui compare --quick` run: its estimate, the time until its answer appeared on
    its output (`answer`) and the whole command's (`wall`). With `data_dir`, its History: the
    runs of one `repro` share one, new, so each is checked against the ones before it
    (`processes.spread`), as a user's reruns are. `low`/`high` are the interval over its own
    pair of processes; `answer_low`/`answer_high` what the answer said (widened when it
    disagreed with the earlier ones beyond their intervals)."""
    cmd = [sys.executable, "-m", "xlagui", "compare", "--quick", "--image-size", str(size)]
    cmd += [dataset] if dataset else ["--demo"]
    cmd += ["--out", str(out)] + ([] if explain else ["--no-explain"])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # each line as it is printed
    if data_dir is not None:
        env["XLAGUI_DATA_DIR"] = str(data_dir)
    t0 = time.perf_counter()
    answer = None
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True, env=env) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if answer is None and ANSWER_MARK in line:
                answer = time.perf_counter() - t0
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    wall = time.perf_counter() - t0
    data = json.loads((out / "comparison.json").read_text())
    i = data["comparison"]["interleaved"]
    machine = i.get("machine") or {}
    keys = ("ratio", "half_width", "pairs", "stopped_by", "block_steps", "outliers")
    between = i.get("processes") or {}
    measurement = data.get("measurement") or {}
    return {"wall": wall, "answer": answer if answer is not None else wall,
            **{k: i[k] for k in keys},
            "low": between.get("pair_low", i["low"]), "high": between.get("pair_high", i["high"]),
            "answer_low": i["low"], "answer_high": i["high"],
            "earlier": between.get("earlier", 0), "widened": bool(between.get("widened")),
            "p": between.get("p"),
            "setup": measurement.get("setup_seconds"),
            "cut": (float(data["config"]["budget_seconds"]) - measurement["budget_seconds"])
            if measurement.get("budget_seconds") else None,
            "other_share": machine.get("other_share"), "busy": bool(machine.get("busy")),
            "set_aside": i.get("disturbed_pairs", 0)}


def _between_words(r: dict[str, Any]) -> str:
    """A run against the ones before it in the table, as its answer said."""
    if not r["earlier"]:
        return "—"
    if r["widened"]:
        return (f"**widened** to {r['answer_low']:.3f}–{r['answer_high']:.3f} "
                f"(p {r['p']:.3f}, {r['earlier']} earlier)")
    return f"agrees (p {r['p']:.2f}, {r['earlier']} earlier)"


def _setup_words(r: dict[str, Any]) -> str:
    if r["setup"] is None:
        return "—"
    return f"{r['setup']:.0f} s" + (f" (budget −{r['cut']:.0f} s)" if r["cut"] else "")


def heterogeneity(rows: list[dict[str, Any]]) -> tuple[float, int, float]:
    """Whether the runs' estimates (each from a fresh pair of worker processes) spread more
    than their own intervals admit: Cochran's Q over the log ratios, each weighed by its
    interval (its standard error taken as the log interval's width ÷ 2 × 1.96), its degrees of
    freedom and its p-value (chi-square). A small p: the spread between processes is larger
    than the intervals, which cover the rounds within one pair, admit."""
    import math

    from scipy.stats import chi2

    logs = [math.log(r["ratio"]) for r in rows]
    weights = [(2 * 1.96 / (math.log(r["high"]) - math.log(r["low"]))) ** 2 for r in rows]
    mean = sum(w * y for w, y in zip(weights, logs, strict=True)) / sum(weights)
    q = sum(w * (y - mean) ** 2 for w, y in zip(weights, logs, strict=True))
    df = len(rows) - 1
    return q, df, float(chi2.sf(q, df))


def _overlaps(rows: list[dict[str, Any]]) -> list[bool]:
    """Whether each run's interval overlaps the one before it."""
    return [a["low"] <= b["high"] and b["low"] <= a["high"] for a, b in itertools.pairwise(rows)]


def repro(args: argparse.Namespace) -> None:
    load = load_average()
    data_dir = Path(tempfile.mkdtemp(prefix="xlagui-bench-history-"))
    rows = repeat(
        args.runs,
        "run",
        lambda out: _quick(args.dataset, args.image_size, out, explain=args.explain,
                           data_dir=data_dir),
        lambda r: (
            f"ratio {r['ratio']:.3f} ({r['low']:.3f}–{r['high']:.3f}, "
            f"±{r['half_width']:.1%}), {r['pairs']} pairs of {r['block_steps']}, "
            f"{r['stopped_by']}, the answer after {r['answer']:.0f} s, {r['wall']:.0f} s in all"
        ),
    )
    ratios = [r["ratio"] for r in rows]
    spread = (max(ratios) - min(ratios)) / statistics.median(ratios)
    walls = [r["wall"] for r in rows]
    answers = [r["answer"] for r in rows]
    q, df, p = heterogeneity(rows)
    name = (args.dataset and Path(args.dataset).name) or "demo"
    table = [
        "| run | XLA ÷ baseline step time | 95% CI, this pair | half-width | against the runs "
        "before | pairs × steps | stopped by | set-up and warm-up | other programs "
        "| rounds set aside | time to the answer | whole command |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(rows, 1):
        other = "—" if r["other_share"] is None else f"{r['other_share']:.1%}"
        table.append(
            f"| {n} | {r['ratio']:.3f} | {r['low']:.3f}–{r['high']:.3f} | ±{r['half_width']:.1%} "
            f"| {_between_words(r)} | {r['pairs']} × {r['block_steps']} | {r['stopped_by']} "
            f"| {_setup_words(r)} | {other}{' **busy**' if r['busy'] else ''} "
            f"| {r['set_aside']} | {r['answer']:.0f} s | {r['wall']:.0f} s |"
        )
    overlaps = _overlaps(rows)
    worst = max(r["half_width"] for r in rows)
    late = sum(a > 180 for a in answers)
    late_words = "met by every run" if not late else f"NOT met by {late} of {len(rows)}"
    lines = [
        f"## Interleaved measurement: {name}, {args.image_size} px, {args.runs} runs in a row"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_interleaved.py repro --runs {args.runs} --image-size "
        f"{args.image_size}{' --dataset ' + args.dataset if args.dataset else ''}"
        f"{'' if args.explain else ' --no-explain'}` (each run is `xlagui compare --quick"
        f"{'' if args.explain else ' --no-explain'}`, batch 64, jit, budget 120 s, target ±3%"
        "; the time to the answer is when its first line appeared on the command's output, "
        "before what follows it: \"What XLA did\"" + (" and the why" if args.explain else "")
        + "). The runs share one new History, so each answer is checked against the runs "
        "before it, as a user's reruns are (`processes.spread`): \"against the runs before\" "
        "says whether it agreed, or disagreed beyond the intervals and widened its own; "
        "\"95% CI, this pair\" is the interval over its own pair of worker processes.",
        "",
        *table,
        "",
        f"Spread of the {args.runs} estimates (max − min) ÷ median: **{spread:.1%}** "
        f"(goal ≤ 5%: {'met' if spread <= 0.05 else 'not met'}); widest half-width "
        f"±{worst:.1%} (goal ≤ 5%: {'met' if worst <= 0.05 else 'not met'}); median time to "
        f"the answer **{statistics.median(answers):.0f} s**, the slowest **{max(answers):.0f} s** "
        f"(goal at 150 px ≤ 180 s: {late_words}); the whole command "
        f"{statistics.median(walls):.0f} s (median). Consecutive runs whose intervals over one "
        f"pair of processes overlap: **{sum(overlaps)} of {len(overlaps)}**; answers widened "
        f"against the runs before them: {sum(r['widened'] for r in rows)} of {len(rows) - 1}.",
        "",
        f"Between processes (each run is a fresh pair of workers): Cochran's Q = {q:.1f} on "
        f"{df} degrees of freedom, p = {p:.3f}: the spread of the estimates is "
        + ("larger than their intervals admit (p < 0.05): an interval over one pair of "
           "processes is too narrow for a rerun" if p < 0.05 else
           "within what their intervals admit (p ≥ 0.05)") + ".",
    ]
    tag = f"-{args.tag}" if args.tag else ""
    publish(f"interleaved-{name}-{args.image_size}{tag}", section_text(lines, load), args.write)


def _batch(size: int, seed: int = 0) -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random((64, size, size, 3), dtype=np.float32)
    y = (rng.random(64) > 0.5).astype("float32")
    return x, y


def p1(args: argparse.Namespace) -> None:
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    import tensorflow as tf

    from xlagui.core.model.cnn import build_model, compile_model

    x, y = _batch(args.image_size)
    model = build_model(args.image_size, 2, seed=0)
    compile_model(model, 2, jit_compile=False)
    model.make_train_function()
    batches = iter(tf.data.Dataset.from_tensors((x, y)).repeat())
    xt, yt = tf.constant(x), tf.constant(y)

    def worker_block(k: int) -> float:  # what xlagui's measuring worker times
        t0 = time.perf_counter()
        logs = None
        for _ in range(k):
            logs = model.train_function(batches)
        float(logs["loss"])  # type: ignore[index]
        return time.perf_counter() - t0

    def plain_block(k: int) -> float:
        t0 = time.perf_counter()
        for _ in range(k):
            model.train_on_batch(xt, yt)
        return time.perf_counter() - t0

    for f in (worker_block, plain_block):
        f(2)
    k = max(1, round(1.0 / (plain_block(1) or 1)))
    ratios = []
    t_end = time.monotonic() + args.seconds
    n = 0
    load = load_average()
    while time.monotonic() < t_end:
        if n % 2 == 0:
            a, b = worker_block(k), plain_block(k)
        else:
            b, a = plain_block(k), worker_block(k)
        ratios.append(a / b)
        n += 1
    est = estimate_ratio(ratios)
    ok = est.high is not None and est.high <= 1.03
    lines = [
        "## P1, interleaved: xlagui's worker step ÷ a plain `train_on_batch` loop",
        "",
        f"`python bench/bench_interleaved.py p1 --image-size {args.image_size} --seconds "
        f"{args.seconds}`: the article's CNN at {args.image_size} px, batch 64, XLA off, "
        f"one process, the same batch; {est.pairs} alternating pairs of {k}-step blocks.",
        "",
        "| ratio | median | 95% CI | outliers | goal |",
        "|---|---|---|---|---|",
        f"| worker step ÷ train_on_batch | **{est.ratio:.3f}** | {est.low:.3f}–{est.high:.3f} "
        f"| {est.outliers} | ≤ 1.03 with an interval that shows it: "
        f"{'met' if ok else 'not met'} |",
    ]
    publish("interleaved-p1", section_text(lines, load), args.write)


def reference(args: argparse.Namespace) -> None:
    # The reference workers are bench_arms.py's (the CNN written out once for both benches),
    # here without augmentation, as this section was first measured.
    from bench_arms import reference as arms_reference

    load = load_average()
    est = arms_reference(["jit"], args.image_size, args.dataset, args.seconds, augment=False)["jit"]
    name = Path(args.dataset).name if args.dataset else "demo"
    lines = [
        f"## Independent interleaved reference: {name}, {args.image_size} px",
        "",
        f"`python bench/bench_interleaved.py reference --image-size {args.image_size}"
        f"{' --dataset ' + args.dataset if args.dataset else ''} --seconds {args.seconds}`: "
        "two processes, the folder loaded with `keras.utils.image_dataset_from_directory` "
        "(no augmentation), the article's CNN written out again, `jit_compile` False / True, "
        f"alternating blocks of 4 `train_on_batch` steps; {est.pairs} pairs.",
        "",
        f"XLA ÷ baseline step time: **{est.ratio:.3f}** (95% CI {est.low:.3f}–{est.high:.3f}"
        f", {est.outliers} outliers).",
    ]
    publish(
        f"interleaved-reference-{name}-{args.image_size}", section_text(lines, load), args.write
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    for name in ("repro", "p1", "reference"):
        s = sub.add_parser(name)
        s.add_argument("--image-size", type=int, default=150)
        s.add_argument("--dataset")
        s.add_argument("--runs", type=int, default=5)
        s.add_argument("--no-explain", dest="explain", action="store_false",
                       help="repro: time the answer alone, without the why after it")
        s.add_argument("--tag", default="", help="repro: a section of its own (run twice)")
        s.add_argument("--seconds", type=int, default=90)
        add_write(s)
    args = p.parse_args()
    {"repro": repro, "p1": p1, "reference": reference}[args.what](args)


if __name__ == "__main__":
    main()
