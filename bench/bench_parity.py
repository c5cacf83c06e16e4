"""Parity, measured: for a model, the baseline, its rounding reference (the initial weights
nudged by one ulp) and each arm, trained on the same first N batches of the demo set; prints
each arm's drift against the reference's (the ratio `judge` compares with `SAME_MARGIN`) and
its kind. Run: `PYTHONPATH=$PWD python bench/bench_parity.py --model cnn --arms jit perturbed`.
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
from xlagui.core.analysis.parity import (
    ParityTrace,
    drift_ratio,
    judge,
    loss_differences,
    output_difference,
)
from xlagui.core.data.demo import generate_demo_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol import levers
from xlagui.core.protocol.config import ModelChoice, RunConfig
from xlagui.core.protocol.precision import Precision

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
    args = parser.parse_args()
    levers.LEVERS = (*levers.LEVERS, test_levers.PERTURB)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        generate_demo_dataset(root, train_per_class=args.per_class, test_per_class=8,
                              image_size=args.image_size + 16)
        scan = scan_dataset(root)
        config = RunConfig(batch_size=args.batch, image_size=args.image_size, seed=args.seed,
                           model=ModelChoice(name=args.model), arms=tuple(args.arms))
        t0 = time.perf_counter()
        traces = arm_traces(scan, config, Path(tmp) / "out", args.steps)
        print(f"{args.model}: {time.perf_counter() - t0:.0f} s for {len(traces)} workers")
    if args.save:
        args.save.write_text(json.dumps({arm: {name: t.to_dict() for name, t in sides.items()}
                                         for arm, sides in traces.items()}))
    base = traces["baseline"]
    b, ref = base["plain"], base["reference"]
    print("baseline repeats itself:", base["again"] == b)
    print("losses (baseline):", " ".join(f"{v:.6g}" for v in b.losses))
    show("reference", ref, b, args.steps)
    for arm, sides in traces.items():
        if arm == "baseline":
            continue
        a = sides["plain"]
        show(arm, a, b, args.steps)
        verdict = judge(b, a, ref, PRECISIONS.get(arm.split("+")[-1], Precision.FLOAT32))
        print(f"  ratio to the reference {drift_ratio(a, b, ref, args.steps):.3g} -> {verdict}")


def show(name: str, side: ParityTrace, base: ParityTrace, steps: int) -> None:
    diffs = loss_differences(side, base, steps)
    out = output_difference(side.outputs, base.outputs)
    print(f"{name:>10}: loss diffs " + " ".join(f"{d:.1e}" for d in diffs) + f" | out {out:.2e}")


if __name__ == "__main__":
    main()
