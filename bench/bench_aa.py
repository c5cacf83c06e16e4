"""The A/A check of the instrument: the baseline measured against an identical second baseline
worker, interleaved exactly like an arm, several times in a row.

    python bench/bench_aa.py --runs 10 --image-size 150 --seconds 60 [--write]

Each run is `xlagui compare --demo --quick --check` without the XLA worker (the measurement of
the baseline and its twin alone, through the same `run_measurement`), with `--seconds` of
measuring. A position, order or process effect of the instrument would show as ratios away from
1.00. Prints each run's ratio, interval and pairs, how many intervals cover 1.00 and the
largest deviation; `--write` puts the table in BENCHMARKS.md ("A/A check").
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, repeat, section_text

from xlagui.core.compare import CHECK, new_report, planning, run_measurement
from xlagui.core.data.demo import ensure_demo_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState


def once(folder: Path, size: int, seconds: int) -> dict[str, Any]:
    scan = scan_dataset(ensure_demo_dataset(seed=0))
    config = RunConfig(image_size=size, quick=True, check=True, budget_seconds=seconds)
    report = new_report(scan, config, demo=True)
    report.measure_runs = [e for e in report.measure_runs if e.variant in ("baseline", CHECK)]
    t0 = time.perf_counter()
    run_measurement(report, scan, folder, TaskState())
    c = report.comparison
    k = c.interleaved.check if c is not None and c.interleaved is not None else None
    assert k is not None, "no A/A pairs"
    m = report.measurement
    return {"check": k, "wall": time.perf_counter() - t0,
            "stopped_by": m.stopped_by if m else "",
            "twin_last": bool(m and m.warm_up_order and m.warm_up_order[-1].endswith(CHECK))}


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.1%}"


def _verdict(kind: str) -> str:
    return {"too_early": "none (quick check)", "worse": "WORSE", "better": "BETTER"}.get(
        kind, kind or "—")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--image-size", type=int, default=150)
    parser.add_argument("--seconds", type=int, default=60, help="measuring budget per run")
    parser.add_argument("--tag", default="", help="a second section for a rerun (run twice)")
    parser.add_argument("--same-seed", action="store_true",
                        help="the twin on the baseline's seed (by default it takes the next)")
    order = parser.add_mutually_exclusive_group()
    order.add_argument("--baseline-warms-first", action="store_true",
                       help="an experiment: the order before the fix (baseline warmed up first)")
    order.add_argument("--twin-warm-up-first", "--twin-warms-first", action="store_true",
                       help="an experiment: warm the twin up first (the workers always start "
                       "together, baseline first; --twin-warms-first once also started the "
                       "twin first, which made no visible difference)")
    add_write(parser)
    args = parser.parse_args()
    os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")  # the limits are not what is tested
    fixed = [0, 1] if args.baseline_warms_first else [1, 0] if args.twin_warm_up_first else None
    if fixed is not None:
        from xlagui.core.measure import interleave

        # Not a product setting: the product draws the order at random (warm_up_order).
        interleave.warm_up_order = lambda n, rng=None: fixed  # type: ignore[assignment]
    if args.same_seed:
        # An experiment on the instrument, not a product setting: is a ratio away from 1 the
        # twin's other seed (data order, initial weights) or the twin itself?
        original = planning._seeded
        planning._seeded = lambda config, entry, mode: (  # type: ignore[assignment]
            config if entry.variant == CHECK else original(config, entry, mode))
    load = load_average()
    results = repeat(
        args.runs, "aa", lambda f: once(f, args.image_size, args.seconds),
        lambda r: f"{r['check'].ratio:.3f} ({r['check'].low:.3f}–{r['check'].high:.3f}), "
        f"{r['check'].pairs} pairs, {r['wall']:.0f} s",
    )
    lines = [
        f"## A/A check: demo, {args.image_size} px, {args.runs} runs in a row (issue 19)"
        + (f", {args.tag}" if args.tag else ""),
        "",
        f"`python bench/bench_aa.py --runs {args.runs} --image-size {args.image_size} --seconds "
        f"{args.seconds}`: the baseline against an identical second baseline worker, "
        "interleaved like an arm (`--check`), the XLA worker left out, "
        f"{args.seconds} s of measuring each. Ratio = twin ÷ baseline step time. The twin "
        + ("on the baseline's own seed (`--same-seed`)." if args.same_seed
           else "on the next seed.")
        + (" Warmed up after the baseline, as before the fix (`--baseline-warms-first`)."
           if args.baseline_warms_first else "")
        + (" Started after the baseline, warmed up before it (`--twin-warm-up-first`)."
           if args.twin_warm_up_first else "")
        + (" The warm-up order drawn at random for each run, as the product does."
           if fixed is None else ""),
        "",
        "| run | ratio | 95% CI | pairs | covers 1.00 | ended by | baseline acc. | twin acc. "
        f"({'same seed' if args.same_seed else 'seed + 1'}) | accuracy verdict | warmed up last "
        "| wall |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(results, start=1):
        k = r["check"]
        lines.append(f"| {n} | {k.ratio:.3f} | {k.low:.3f}–{k.high:.3f} | {k.pairs} | "
                     f"{'yes' if k.covers_one else 'NO'} | {r['stopped_by']} | "
                     f"{_pct(k.baseline_val_accuracy)} | {_pct(k.val_accuracy)} | "
                     f"{_verdict(k.accuracy_kind)} | {'twin' if r['twin_last'] else 'baseline'} "
                     f"| {r['wall']:.0f} s |")
    covered = sum(r["check"].covers_one for r in results)
    worst = max(abs(r["check"].ratio - 1) for r in results)
    claims = sum(r["check"].accuracy_kind in ("worse", "better") for r in results)
    gaps = [abs(k.val_accuracy - k.baseline_val_accuracy) for k in (r["check"] for r in results)
            if k.val_accuracy is not None and k.baseline_val_accuracy is not None]
    lines += ["", f"{covered} of {len(results)} intervals cover 1.00; the largest deviation of a "
              f"ratio from 1 is {worst:.1%}. Accuracy, baseline against baseline with another "
              f"seed after the same steps: {claims} of {len(results)} said \"learns worse\" or "
              "\"learns better\"" + (f"; the gaps were up to {max(gaps):.1%}" if gaps else "")
              + "."]
    below = sum(r["check"].ratio < 1 for r in results)
    twin_last = [r for r in results if r["twin_last"]]
    lines += ["", f"Ratios below 1.00: {below} of {len(results)}. The twin was warmed up last in "
              f"{len(twin_last)} of {len(results)} runs; its ratio was below 1.00 in "
              f"{sum(r['check'].ratio < 1 for r in twin_last)} of those and in "
              f"{sum(r['check'].ratio < 1 for r in results if not r['twin_last'])} of the "
              f"{len(results) - len(twin_last)} others."]
    tag = f"-{args.tag}" if args.tag else ""
    publish(f"aa-{args.image_size}{tag}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
