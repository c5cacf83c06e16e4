"""Where the time goes, measured: each arm (baseline, xla) of one model profiled in a real
worker (`tests/helpers/profiling.py`), its coverage, its largest rows and XLA's top differences.

    PYTHONPATH=$PWD python bench/bench_explain.py --model mobilenetv2 --image-size 64

On the demo set (generated into a temporary folder) unless --dataset is given; batch 64 (the
app's default) and 5 warm steps unless told.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tests.helpers.profiling import profile_arm
from xlagui.core.data.demo import generate_demo_dataset
from xlagui.core.explain.attribute import top_differences
from xlagui.core.model.sources import parse_model
from xlagui.core.protocol.config import RunConfig


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--image-size", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--dataset", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="bench_explain_"))
    data = args.dataset or generate_demo_dataset(out / "demo")
    config = RunConfig(batch_size=args.batch_size, image_size=args.image_size, quick=True,
                       seed=1, model=parse_model(args.model))
    profiles = {}
    for variant in ("baseline", "xla"):
        t0 = time.perf_counter()
        prof = profile_arm(Path(data), config, variant, out / variant, args.steps)
        profiles[variant] = prof
        print(f"{variant}: step {prof.step_seconds:.3f} s, coverage {prof.coverage:.1%} "
              f"({time.perf_counter() - t0:.0f} s to profile)")
        for r in prof.rows[:6]:
            print(f"    {r.seconds_per_step:.4f} s  {r.layer} {r.pass_} {r.op_kind}")
        print(f"    {prof.rows[-1].seconds_per_step:.4f} s  {prof.rows[-1].layer}")
    top = top_differences(profiles)
    for d in top:
        print(f"top: {d.layer} {d.pass_} {d.op_kind}: baseline {d.baseline_seconds:.4f} s, "
              f"{d.arm} {d.arm_seconds:.4f} s")
    (out / "explain.json").write_text(json.dumps({
        "arms": {k: v.to_dict() for k, v in profiles.items()},
        "top_differences": [d.to_dict() for d in top]}, indent=1), encoding="utf-8")
    print(f"written: {out / 'explain.json'}")


if __name__ == "__main__":
    main()
