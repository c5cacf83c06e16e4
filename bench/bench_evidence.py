"""What collecting XLA's evidence costs: the compile and the steady step of an XLA worker that
dumps its HLO (the default, `text`), one that dumps it without metadata (`nometa`) and one that
dumps nothing (`none`), measured with the interleaved measurement.

    python bench/bench_evidence.py --image-size 64 --rounds 3 --budget 20 [--write]

Each round starts three measuring workers on the demo set, all `jit`, that differ only in their
XLA_FLAGS (`worker_process.XLA_DUMPS`); `measure_interleaved` warms each up alone (its first step
pays the compile) and then alternates blocks of steps between them. Per arm it reports the compile
time TensorFlow logs for the train step (`Compiled … compile time: N us`), the first step minus a
warm one, the steady step against the no-dump arm (median of per-round ratios), and the dump's
files and bytes. Rounds repeat this with fresh workers, so the compile figures get more than one
sample.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, repeat, section_text

from xlagui.core.analysis.pairs import estimate_ratio
from xlagui.core.analysis.summary import arm_timing, pair_up
from xlagui.core.measure.interleave import MeasureSettings, measure_interleaved
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.transports.environment import xla_flags
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import Event
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.xla import hlo

ARMS = ("none", "text", "nometa")


def _specs(size: int, out: Path) -> list[RunSpec]:
    from xlagui.core.data.demo import ensure_demo_dataset
    from xlagui.core.data.scan import scan_dataset

    scan = scan_dataset(str(ensure_demo_dataset(seed=0)), holdout_percent=20, seed=0)
    names, train, val = samples_from_scan(scan)
    config = RunConfig(image_size=size, xla="jit")
    return [
        RunSpec(
            run_id=f"dump-{arm}",
            variant="xla",
            xla_mode=XlaMode.JIT,
            config=config,
            class_names=names,
            train=train,
            val=val,
            run_dir=out / f"dump-{arm}",
            mode="measure",
            xla_dump=arm,
        )
        for arm in ARMS
    ]


def _dump_size(folder: Path) -> tuple[int, int]:
    files = [f for f in folder.rglob("*") if f.is_file()] if folder.is_dir() else []
    return len(files), sum(f.stat().st_size for f in files)


def one_round(size: int, budget: float, out: Path) -> dict[str, Any]:
    from xlagui.core.protocol.task import TaskState

    specs = _specs(size, out)
    events: dict[str, list[Event]] = {s.run_id: [] for s in specs}
    outcome = measure_interleaved(
        specs,
        TaskState(),
        MeasureSettings(budget_seconds=budget, target=0.01),
        on_event=lambda spec, ev: events[spec.run_id].append(ev),
    )
    if outcome.error is not None:
        raise RuntimeError(f"a worker failed: {outcome.error.message}")
    res: dict[str, Any] = {"arms": {}}
    base = events[specs[0].run_id]
    for arm, spec in zip(ARMS, specs, strict=True):
        timing = arm_timing(arm, "jit", events[spec.run_id])
        logged = hlo.compile_times(spec.run_dir / "worker.log")
        files, nbytes = _dump_size(spec.run_dir / "xla")
        t0 = time.perf_counter()
        report = hlo.read_dump(spec.run_dir / "xla", spec.run_dir / "worker.log")
        parse = time.perf_counter() - t0
        ratios = [p.ratio for p in pair_up(base, events[spec.run_id])]
        res["arms"][arm] = {
            "compile_logged": sum(s for _, s in logged) if logged else None,
            "compile_warm": timing.compile_seconds,
            "steady": timing.steady_step_seconds,
            "ratios": ratios,
            "files": files,
            "bytes": nbytes,
            "modules": len(report.modules),
            "fusions": report.fusions,
            "parse": parse,
            "text_bytes": sum(
                (spec.run_dir / "xla" / m.file).stat().st_size for m in report.modules
            ),
        }
    res["block_steps"] = outcome.block_steps
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget", type=float, default=20.0)
    add_write(ap)
    args = ap.parse_args()
    # The workers are `python -m xlagui.core.worker.child`: they must import this checkout.
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    load = load_average()
    rounds = repeat(
        args.rounds,
        "round",
        lambda out: one_round(args.image_size, args.budget, out),
        lambda r: "; ".join(
            f"{arm}: compile {a['compile_logged'] or 0:.3f} s (log), "
            f"{a['compile_warm'] or 0:.3f} s (warm-up), {a['files']} files "
            f"{a['bytes'] / 1e6:.2f} MB"
            for arm, a in r["arms"].items()
        ),
    )

    def med(arm: str, key: str) -> float | None:
        vals = [r["arms"][arm][key] for r in rounds if r["arms"][arm][key] is not None]
        return statistics.median(vals) if vals else None

    def fmt(x: float | None, unit: str = "s", digits: int = 3) -> str:
        return "—" if x is None else f"{x:.{digits}f} {unit}".strip()

    base_log, base_warm = med("none", "compile_logged"), med("none", "compile_warm")
    rows = [
        "| XLA dump | XLA_FLAGS (besides `--xla_dump_to`) | train-step compile, logged "
        "(median; each round) | first − warm step (median) | steady step ÷ no dump (95% CI) "
        "| files | bytes | optimized HLO text | modules / fusions read |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    summary = {}
    for arm in ARMS:
        logged = [r["arms"][arm]["compile_logged"] for r in rounds]
        ratios = [x for r in rounds for x in r["arms"][arm]["ratios"]]
        est = estimate_ratio(ratios) if ratios and arm != "none" else None
        ci = (
            "1 (the reference)"
            if est is None
            else f"{est.ratio:.3f} ({est.low:.3f}–{est.high:.3f})"
            if est.low is not None and est.high is not None
            else f"{est.ratio:.3f}"
        )
        a0 = rounds[-1]["arms"][arm]
        flags = xla_flags(Path("DIR"), arm).replace("--xla_dump_to=DIR/xla", "").strip()
        rows.append(
            f"| {arm} | `{flags or '(no dump)'}` | {fmt(med(arm, 'compile_logged'))} "
            f"({', '.join(fmt(x, '', 2) for x in logged)}) | {fmt(med(arm, 'compile_warm'))} "
            f"| {ci} | {a0['files']} | {a0['bytes'] / 1e6:.2f} MB | "
            f"{a0['text_bytes'] / 1e3:.0f} KB | {a0['modules']} / {a0['fusions']} |"
        )
        summary[arm] = (med(arm, "compile_logged"), med(arm, "compile_warm"), est)
    notes = []
    for arm in ("text", "nometa"):
        paired = [
            r["arms"][arm]["compile_logged"] - r["arms"]["none"]["compile_logged"]
            for r in rounds
            if r["arms"][arm]["compile_logged"] is not None
            and r["arms"]["none"]["compile_logged"] is not None
        ]
        if paired:
            notes.append(
                f"Per round, `{arm}` − `none` logged compile: "
                + ", ".join(f"{d:+.2f} s" for d in paired)
                + "."
            )
    for arm in ("text", "nometa"):
        logged, warm, est = summary[arm]
        if logged is not None and base_log:
            notes.append(
                f"`{arm}` compiles in {logged / base_log:.2f}× the no-dump time "
                f"({(logged - base_log) * 1000:+.0f} ms, logged)"
                + (
                    f", first − warm step {(warm - base_warm) * 1000:+.0f} ms"
                    if warm is not None and base_warm is not None
                    else ""
                )
                + (f", steady step ÷ no dump's {est.ratio:.3f}" if est is not None else "")
                + "."
            )
    parse = med("text", "parse")
    lines = [
        f"## Evidence collection: what dumping XLA's HLO costs ({args.image_size} px)",
        "",
        f"`python bench/bench_evidence.py --image-size {args.image_size} --rounds "
        f"{args.rounds} --budget {args.budget:.0f}`: the demo set, batch 64, `jit`, CPU; per "
        "round three measuring workers that differ only in XLA_FLAGS, warmed up alone, then "
        f"interleaved blocks of {rounds[-1]['block_steps']} steps for up to "
        f"{args.budget:.0f} s. Compile time is TensorFlow's own log line for the train step "
        "(`Compiled … compile time`, which includes writing the dump); the steady ratio "
        "pools the per-round block ratios of all rounds.",
        "",
        *rows,
        "",
        *notes,
        "",
        "No flag of this build (TF 2.21) narrows the dump to the HLO text: the CPU backend "
        "writes LLVM IR (`.ll`), MLIR and object files for every fused kernel whenever "
        "dumping is on (`--xla_dump_emitter_re` and `--xla_dump_hlo_module_re` leave them; "
        "`--xla_dump_ir` is unknown to it). Reading the dump (`core/xla/hlo.py: read_dump`) "
        f"takes {fmt(parse)} after the run.",
        "",
        "What xlagui does with this: the measuring workers, whose first step is the "
        "comparison's compile cost and whose blocks are its headline, dump nothing "
        '(`compare.spec_for`: `xla_dump="none"`); their evidence is TensorFlow\'s log '
        "(`Compiled cluster using XLA`, one `compile time` line per compilation). The XLA "
        'training runs keep the `text` dump, which "What XLA did" and `xlagui inspect` '
        "read; their first epoch carries its cost (the difference above), their steady "
        "epochs do not (the steady ratio is 1 within its interval).",
    ]
    publish(f"evidence-{args.image_size}", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
