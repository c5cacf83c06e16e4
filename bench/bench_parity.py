"""Parity, measured: for a model, the baseline, its rounding references (the initial weights
nudged by one ulp, two ways) and each arm, trained on the same first N batches of the demo set;
prints each arm's drift against the references' (`drift_ratios`, which `judge` holds to its
margins) and its kind. `--load` re-judges traces saved with `--save` (older files with one
reference too). Run:
`PYTHONPATH=$PWD python bench/bench_parity.py --model cnn --arms jit perturbed`.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import _common  # noqa: F401  # puts the repository on sys.path

from tests.helpers import levers as test_levers
from tests.helpers.parity_runs import arm_traces
from xlagui.core.analysis.parity import drift_ratios, judge, loss_differences, output_difference
from xlagui.core.data.demo import generate_demo_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol import levers
from xlagui.core.protocol.config import ModelChoice, RunConfig
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.why import ParityTrace

PRECISIONS = {"bf16": Precision.BF16, "fp16": Precision.FP16}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="cnn")
    parser.add_argument("--arms", nargs="+", default=["jit", "perturbed"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--image-size", type=int, default=48)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--per-class", type=int, default=48)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--save", type=Path, help="write every trace there (JSON)")
    parser.add_argument("--load", type=Path, help="judge the traces saved there, run nothing")
    args = parser.parse_args()
    levers.LEVERS = (*levers.LEVERS, test_levers.KNOB, test_levers.PERTURB)
    if args.load:
        saved = json.loads(args.load.read_text())
        report({arm: {name: ParityTrace.from_dict(t) for name, t in sides.items()}
                for arm, sides in saved.items()}, args.steps)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        generate_demo_dataset(root, train_per_class=args.per_class, test_per_class=8,
                              image_size=args.image_size + 16)
        scan = scan_dataset(root)
        config = RunConfig(batch_size=args.batch, image_size=args.image_size, seed=args.seed,
                           model=ModelChoice(name=args.model), arms=tuple(args.arms))
        t0 = time.perf_counter()
        seconds: dict[str, float] = {}
        traces = arm_traces(scan, config, Path(tmp) / "out", args.steps, seconds)
        print(f"{args.model}: {time.perf_counter() - t0:.0f} s for {len(traces)} workers")
    print("parity steps took:", ", ".join(f"{k} {v:.1f} s" for k, v in seconds.items()))
    if args.save:
        args.save.write_text(json.dumps({arm: {name: t.to_dict() for name, t in sides.items()}
                                         for arm, sides in traces.items()}))
    report(traces, args.steps)


def report(traces: dict[str, dict[str, ParityTrace]], steps: int) -> None:
    base = traces["baseline"]
    b = base["plain"]
    ref = [t for name, t in base.items() if name.startswith("reference")]
    print("baseline repeats itself:", base["again"] == b)
    print("losses (baseline):", " ".join(f"{v:.6g}" for v in b.losses))
    for i, one in enumerate(ref, start=1):
        show(f"ref. {i}", one, b, steps)
    for arm, sides in traces.items():
        if arm == "baseline":
            continue
        a = sides["plain"]
        show(arm, a, b, steps)
        verdict = judge(b, a, ref, PRECISIONS.get(arm.split("+")[-1], Precision.FLOAT32))
        r = drift_ratios(a, b, ref, steps)
        print(f"  times the reference: first step {r.first_step:.3g}, training {r.training:.3g},"
              f" outputs {r.outputs:.3g} -> {verdict.kind}")


def show(name: str, side: ParityTrace, base: ParityTrace, steps: int) -> None:
    diffs = loss_differences(side, base, steps)
    out = output_difference(side.outputs, base.outputs)
    print(f"{name:>10}: loss diffs " + " ".join(f"{d:.1e}" for d in diffs) + f" | out {out:.2e}")


if __name__ == "__main__":
    main()
