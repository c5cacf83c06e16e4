"""Arms on this machine: are xlagui's per-arm figures reproducible, and does an independent
interleaved measurement of the same arms agree?

    python bench/bench_arms.py --arms jit,bf16 --image-size 150 --runs 2 --seconds 120 --write

Runs `xlagui compare --demo --quick --arms ARMS` `--runs` times in a row and tabulates every
arm's ratio (arm ÷ baseline step time), interval, pairs and the wall time, then an independent
reference that shares none of xlagui's measuring code: one process per arm loads the folder with
`keras.utils.image_dataset_from_directory`, builds the article's CNN written out again under the
arm's Keras dtype policy (output layer float32) and `jit_compile`, and the parent alternates
blocks of 4 `train_on_batch` steps, going through every order of the arms in turn. The section
says how far each xlagui estimate is from the reference.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, repeat, section_text

from xlagui.core.analysis.pairs import Recommendation, estimate_ratio
from xlagui.core.protocol.arms import parse_arm
from xlagui.present.verdicts import recommendation_sentence


def _quick(
    arms: str,
    size: int,
    dataset: str | None,
    out: Path,
    budget: int | None = None,
    augment: bool = True,
) -> dict[str, Any]:
    # The answer alone, as before the why existed (this bench's figures are speeds and wall
    # times to the answer; the why's untimed workers would add minutes to every run).
    cmd = [sys.executable, "-m", "xlagui", "compare", "--quick", "--no-explain",
           "--image-size", str(size)]
    cmd += ["--budget", str(budget)] if budget else []
    cmd += [] if augment else ["--no-augment"]
    cmd += ["--arms", arms, "--out", str(out)]
    cmd += [dataset] if dataset else ["--demo"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, cwd=ROOT, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    data = json.loads((out / "comparison.json").read_text())
    c = data["comparison"]
    i = c["interleaved"]
    return {
        "wall": wall,
        "stopped_by": i["stopped_by"],
        "block_steps": i["block_steps"],
        "recommended": c.get("recommended_arm"),
        "recommendation": recommendation_sentence(Recommendation.from_dict(c["recommendation"]))
        if c.get("recommendation") else "",
        "arms": {a["arm"]: a for a in i["arms"]},
    }


def _reference_worker(folder: str, size: int, arm_name: str, augment: bool, conn: Any) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import keras
    import tensorflow as tf

    arm = parse_arm(arm_name)
    keras.mixed_precision.set_global_policy(arm.precision.value)
    if arm.xla.value == "autocluster":
        tf.config.optimizer.set_jit("autoclustering")
    train = Path(folder) / "train"
    ds = keras.utils.image_dataset_from_directory(
        train if train.is_dir() else folder,
        image_size=(size, size),
        batch_size=64,
        label_mode="binary",
        seed=0,
    )
    ds = ds.cache().repeat()
    if augment:
        # The article's augmentation, as xlagui applies it by default: in tf.data, per batch.
        aug = keras.Sequential(
            [
                keras.layers.RandomFlip("horizontal"),
                keras.layers.RandomZoom(0.2),
                keras.layers.RandomShear(x_factor=0.2),
            ]
        )
        ds = ds.map(lambda a, b: (aug(a, training=True), b), num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(lambda a, b: (a / 255.0, b)).prefetch(tf.data.AUTOTUNE)
    it = iter(ds)
    model = keras.Sequential(
        [
            keras.Input((size, size, 3)),
            keras.layers.Conv2D(64, 5, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(32, 5, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(16, 5, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(126, activation="relu"),
            keras.layers.Dense(52, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid", dtype="float32"),
        ]
    )
    model.compile("adam", "binary_crossentropy", jit_compile=arm.xla.value == "jit")
    for _ in range(3):
        model.train_on_batch(*next(it))
    conn.send("ready")
    while True:
        k = conn.recv()
        if k is None:
            return
        t0 = time.perf_counter()
        for _ in range(k):
            model.train_on_batch(*next(it))
        conn.send((time.perf_counter() - t0) / k)


def reference(
    arms: list[str], size: int, dataset: str | None, seconds: float, augment: bool = True
) -> dict[str, Any]:
    from xlagui.core.data.demo import ensure_demo_dataset

    folder = dataset or str(ensure_demo_dataset(seed=0))
    names = ["off", *arms]
    ctx = mp.get_context("spawn")
    pipes, procs = [], []
    for name in names:
        mine, theirs = ctx.Pipe()
        p = ctx.Process(target=_reference_worker, args=(folder, size, name, augment, theirs))
        p.start()
        pipes.append(mine)
        procs.append(p)
    for c in pipes:
        assert c.recv() == "ready"
    ratios: dict[str, list[float]] = {n: [] for n in arms}
    t_end = time.monotonic() + seconds
    # Every order in turn (for three arms, all six), so each arm follows each other one
    # equally often over a cycle.
    orders = list(itertools.permutations(range(len(names))))
    n = 0
    while time.monotonic() < t_end:
        order = orders[n % len(orders)]
        got = {}
        for i in order:
            pipes[i].send(4)
            got[i] = pipes[i].recv()
        for i, name in enumerate(arms, start=1):
            ratios[name].append(got[i] / got[0])
        n += 1
    for c in pipes:
        c.send(None)
    for p in procs:
        p.join()
    return {name: estimate_ratio(r) for name, r in ratios.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arms", default="jit,bf16")
    p.add_argument("--image-size", type=int, default=150)
    p.add_argument("--dataset")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--seconds", type=int, default=120)
    p.add_argument("--budget", type=int, help="xlagui's --budget (default: its own, 120 s)")
    p.add_argument("--no-augment", action="store_true", help="both sides without augmentation")
    p.add_argument("--tag", default="", help="a label for the section (another machine, say), "
                   "so that it does not replace an earlier one")
    add_write(p)
    args = p.parse_args()
    arms = [parse_arm(a).name for a in args.arms.split(",")]
    load = load_average()
    runs = repeat(
        args.runs,
        "run",
        lambda out: _quick(args.arms, args.image_size, args.dataset, out, args.budget),
        lambda r: (
            f"{r['wall']:.0f} s, {r['stopped_by']}, "
            + ", ".join(
                f"{k} {a['ratio']:.3f} (±{a['half_width']:.1%})"
                for k, a in r["arms"].items()
                if a["ratio"] is not None and a["half_width"] is not None
            )
        ),
    )
    ref = reference(arms, args.image_size, args.dataset, args.seconds, not args.no_augment)
    for name, est in ref.items():
        print(f"reference {name}: {est.ratio:.3f} ({est.low}–{est.high})", flush=True)

    name = Path(args.dataset).name if args.dataset else "demo"
    budget = f" --budget {args.budget}" if args.budget else ""
    budget += " --no-augment" if args.no_augment else ""
    lines = [
        f"## Arms on this machine: {name}, {args.image_size} px, `--arms {args.arms}{budget}`"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_arms.py --arms {args.arms} --image-size {args.image_size} "
        f"--runs {args.runs} --seconds {args.seconds}{budget}"
        f"{' --dataset ' + args.dataset if args.dataset else ''}`: `xlagui compare --quick "
        f"--no-explain --arms {args.arms}` {args.runs} times in a row, then an independent "
        "interleaved reference (one process per arm, `image_dataset_from_directory`, the CNN "
        "written out again, blocks of 4 `train_on_batch` steps, every order of the arms in "
        "turn; the article's augmentation in tf.data like xlagui's unless `--no-augment`). "
        "Ratio = arm ÷ baseline step time (below 1: faster).",
        "",
        "| run | arm | ratio | 95% CI | half-width | pairs | speed | recommended | wall |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(runs, start=1):
        for k, a in r["arms"].items():
            if a["ratio"] is None:
                lines.append(f"| {n} | {k} | — | — | — | {a['pairs']} | — | | {r['wall']:.0f} s |")
                continue
            ci = f"{a['low']:.3f}–{a['high']:.3f}" if a["low"] is not None else "—"
            hw = f"±{a['half_width']:.1%}" if a["half_width"] is not None else "—"
            speed = (
                f"{1 / a['ratio']:.2f}× faster" if a["ratio"] < 1 else f"{a['ratio']:.2f}× slower"
            )
            # A missing star names its reason: the recommendation's sentence, which says why
            # every faster arm was passed over (and which arms tie).
            star = "★" if r["recommended"] == k else (
                "why not: " + r["recommendation"].replace("|", "/")
                if r["recommended"] is None or (a["high"] is not None and a["high"] < 1)
                else ""
            )
            lines.append(
                f"| {n} | {k} | {a['ratio']:.3f} | {ci} | {hw} | {a['pairs']} | {speed} | "
                f"{star} | {r['wall']:.0f} s |"
            )
    lines += ["", "| arm | reference ratio (95% CI) | xlagui runs vs reference | spread of runs |"]
    lines += ["|---|---|---|---|"]
    for k in arms:
        est = ref[k]
        got = [r["arms"][k]["ratio"] for r in runs if r["arms"].get(k, {}).get("ratio")]
        off = ", ".join(f"{abs(g / est.ratio - 1):.1%}" for g in got)
        spread = f"{(max(got) - min(got)) / min(got):.1%}" if len(got) > 1 else "—"
        ci = (f"{est.low:.3f}–{est.high:.3f}" if est.low is not None and est.high is not None
              else "no interval: too few rounds in --seconds")
        lines.append(f"| {k} | {est.ratio:.3f} ({ci}) | {off} | {spread} |")
    suffix = budget.replace(" --budget ", "-b").replace(" --no-augment", "-noaug")
    suffix += f"-{args.tag}" if args.tag else ""
    publish(f"arms-{name}-{args.image_size}{suffix}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
