"""How far from the limit: the machine's measured peak and bandwidth, the model's layer ceiling,
and the demo CNN's achieved FLOP/s and % of peak per arm (XLA off and jit) at 150 px.

    python bench/bench_peak.py [--image-size 150] [--budget 20] [--write]

Measures the limits afresh (`python -m xlagui.core.worker.child --peak …`, timed), stores them
in the cache the app reads, then runs `xlagui compare --demo --quick` and reads the efficiency
figures from its comparison.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import (
    ROOT,
    add_image_size_and_batch,
    add_write,
    load_average,
    publish,
    section_text,
)

from xlagui.core.machine import peak
from xlagui.core.measure.children import machine_limits
from xlagui.core.model import flops


def main() -> None:
    parser = argparse.ArgumentParser()
    add_image_size_and_batch(parser)
    parser.add_argument("--budget", type=int, default=20)
    add_write(parser)
    args = parser.parse_args()
    load = load_average()

    # A fresh probe, timed from the outside (process start, TensorFlow import included).
    cache = peak.cache_path()
    key = peak.cache_key("cpu")
    entries = json.loads(cache.read_text()).get("entries", {}) if cache.exists() else {}
    entries.pop(key, None)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"format": "xlagui-machine-limits", "entries": entries}))
    t0 = time.perf_counter()
    limits = machine_limits("cpu", args.image_size, args.batch)
    probe_wall = time.perf_counter() - t0
    assert limits is not None
    ceiling = limits.ceiling(args.image_size, args.batch)
    assert ceiling is not None
    print(f"peak {limits.matmul_flops_per_second / 1e9:.1f} GFLOP/s, bandwidth "
          f"{limits.bandwidth_bytes_per_second / 1e9:.1f} GB/s, ceiling "
          f"{ceiling.flops_per_second / 1e9:.1f} GFLOP/s, probe {probe_wall:.1f} s", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cmp"
        cmd = [sys.executable, "-m", "xlagui", "compare", "--demo", "--quick",
               "--image-size", str(args.image_size), "--batch", str(args.batch),
               "--budget", str(args.budget), "--xla", "jit", "--out", str(out)]
        subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        data = json.loads((out / "comparison.json").read_text())
    e = data["comparison"]["efficiency"]
    count = flops.article_cnn_count(args.image_size, 2)
    lines = [
        f"## How far from the limit: demo, {args.image_size} px, batch {args.batch}",
        "",
        f"- Work per training step, counted from the layer shapes (`core/model/flops.py`): "
        f"{e['flops_per_step'] / 1e9:.1f} GFLOP (forward {count.forward_per_sample / 1e6:.0f} "
        f"MFLOP and training {count.train_per_sample / 1e6:.0f} MFLOP per image, Adam "
        f"{count.optimizer_per_step / 1e6:.1f} MFLOP per step); estimated traffic "
        f"{e['bytes_per_step'] / 1e9:.2f} GB, {e['intensity']:.0f} FLOP/byte.",
        f"- Peak, float32 matmul {limits.matmul_size}²: "
        f"**{limits.matmul_flops_per_second / 1e9:.0f} GFLOP/s**; memory bandwidth "
        f"(element-wise, {limits.bandwidth_bytes >> 20} MiB moved): "
        f"**{limits.bandwidth_bytes_per_second / 1e9:.1f} GB/s**; the model's largest layers "
        f"alone ({', '.join(ceiling.layers)}, forward + gradients): "
        f"**{ceiling.flops_per_second / 1e9:.0f} GFLOP/s**. The probe took {probe_wall:.0f} s "
        f"wall ({limits.probe_seconds:.0f} s of it measuring, the rest TensorFlow's import).",
        "",
        "| arm | steady step | achieved | % of peak | % of layer ceiling | gap |",
        "|---|---|---|---|---|---|",
    ]
    for a in e["arms"]:
        lines.append(
            f"| {a['xla_mode']} ({a['key']}) | {a['seconds']:.3f} s | "
            f"{a['achieved_flops_per_second'] / 1e9:.1f} GFLOP/s | {a['percent_of_peak']:.0%} | "
            f"{a['percent_of_ceiling']:.0%} | {a['bound']} |"
        )
    i = data["comparison"]["interleaved"]
    lines += [
        "",
        f"`xlagui compare --demo --quick --image-size {args.image_size} --budget {args.budget}`: "
        f"{i['pairs']} interleaved pairs, stopped by {i['stopped_by']}.",
    ]
    publish("peak", section_text(lines, load), args.write)


if __name__ == "__main__":
    main()
