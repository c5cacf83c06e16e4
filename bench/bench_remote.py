"""What measuring over SSH costs: the transport's overhead and the setup, on this machine
through a private OpenSSH server on localhost (tests/helpers/sshd.py).

    python bench/bench_remote.py --runs 2 --image-size 96 --seconds 30 [--write]

Whole `--quick` comparisons of the demo set, alternating: on this computer, then on the
"host" (this computer again, every worker through `ssh`), `--runs` of each. Both measure the
same thing on the same hardware, so the XLA ratios must agree within their intervals, and the
remote ÷ local step times are the transport's cost on a step (a worker's stdout goes through
ssh: a block's reply, not its steps). The setup is timed apart: the preflight, the first copy of
the dataset into the host's cache and the second (cached) one. `--write` puts the table in
BENCHMARKS.md ("Measuring over SSH").
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, section_text

from tests.helpers.sshd import ALIAS, start_sshd
from xlagui.core.compare import new_report, run_measurement
from xlagui.core.data.demo import ensure_demo_dataset
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure import transports
from xlagui.core.measure.transports import LOCAL, Target
from xlagui.core.measure.transports.ssh.client import Ssh
from xlagui.core.measure.transports.ssh.dataset import dataset_on_host
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState


def once(where: str, host: tuple[Target, HostInfo] | None, scan: DatasetScan, folder: Path,
         size: int, seconds: int) -> dict[str, Any]:
    config = RunConfig(image_size=size, quick=True, budget_seconds=seconds)
    t0 = time.perf_counter()
    transport = transports.connect(host[0], info=host[1]) if host is not None else LOCAL
    try:
        report = new_report(scan, config, demo=True, environment=transport.environment())
        transport.prepare(scan, config, folder, TaskState())
        run_measurement(report, scan, folder, TaskState(), transport=transport)
    finally:
        transport.close()
    c = report.comparison
    i = c.interleaved if c is not None else None
    assert c is not None and i is not None and i.pairs, f"{where}: no pairs"
    return {"where": where, "ratio": i.ratio, "low": i.low, "high": i.high, "pairs": i.pairs,
            "baseline_step": c.baseline_steady_step_seconds,
            "xla_step": c.xla_steady_step_seconds, "wall": time.perf_counter() - t0}


def setup_costs(target: Target, scan: DatasetScan) -> dict[str, float]:
    t0 = time.perf_counter()
    info = transports.check(target)
    preflight = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="xlagui-bench-host-") as cache, Ssh(target) as ssh:
        ssh.open()
        first = dataset_on_host(ssh, cache, scan, TaskState())
        again = dataset_on_host(ssh, cache, scan, TaskState())
    assert not first.cached and again.cached and again.copied_bytes == 0
    return {"preflight": preflight, "tf_preflight": info.seconds, "first": first.seconds,
            "bytes": first.copied_bytes, "files": first.files, "cached": again.seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="whole runs of each (at least 2)")
    parser.add_argument("--image-size", type=int, default=96)
    parser.add_argument("--seconds", type=int, default=30, help="measuring budget per run")
    add_write(parser)
    args = parser.parse_args()
    os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")  # the limits are not what is measured
    load = load_average()
    scan = scan_dataset(ensure_demo_dataset(seed=0))
    with tempfile.TemporaryDirectory(prefix="xlagui-bench-sshd-") as tmp:
        server = start_sshd(Path(tmp) / "sshd")
        try:
            target = Target(ALIAS, python=str(server.python), ssh_config=str(server.config))
            setup = setup_costs(target, scan)
            print(f"setup: {setup}", flush=True)
            results = []
            host = (target, transports.check(target))
            for n in range(args.runs):
                for where, on in (("local", None), ("ssh", host)):
                    r = once(where, on, scan, Path(tmp) / f"{where}{n}", args.image_size,
                             args.seconds)
                    results.append(r)
                    print(f"{where} {n + 1}: XLA ÷ baseline {r['ratio']:.3f} "
                          f"({r['low']:.3f}–{r['high']:.3f}), {r['pairs']} pairs, "
                          f"baseline step {r['baseline_step']:.4f} s, {r['wall']:.0f} s",
                          flush=True)
        finally:
            server.stop()
    local = [r for r in results if r["where"] == "local"]
    remote = [r for r in results if r["where"] == "ssh"]
    step = [s["baseline_step"] / lo["baseline_step"] for lo, s in zip(local, remote, strict=True)]
    xstep = [s["xla_step"] / lo["xla_step"] for lo, s in zip(local, remote, strict=True)]
    wall = [s["wall"] / lo["wall"] for lo, s in zip(local, remote, strict=True)]
    agree = all(max(a["low"], b["low"]) <= min(a["high"], b["high"])
                for a in local for b in remote)
    lines = [
        f"## Measuring over SSH: demo, {args.image_size} px, {args.runs} runs of each "
        "(issue 20)",
        "",
        f"`python bench/bench_remote.py --runs {args.runs} --image-size {args.image_size} "
        f"--seconds {args.seconds}`: whole `--quick` comparisons alternating between this "
        "computer and the same computer as an SSH host (a private sshd on localhost, every "
        f"worker through `ssh`), {args.seconds} s of measuring each. Ratio = XLA ÷ baseline "
        "step time.",
        "",
        "| run | where | ratio | 95% CI | pairs | baseline step | XLA step | wall |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, r in enumerate(results, start=1):
        lines.append(f"| {(n + 1) // 2} | {r['where']} | {r['ratio']:.3f} | {r['low']:.3f}–"
                     f"{r['high']:.3f} | {r['pairs']} | {r['baseline_step']:.4f} s | "
                     f"{r['xla_step']:.4f} s | {r['wall']:.0f} s |")
    lines += [
        "",
        f"Remote ÷ local, run by run: baseline step {_list(step)}, XLA step {_list(xstep)} "
        f"(median {statistics.median(step + xstep):.3f}); whole run wall time {_list(wall)}. "
        f"Every remote interval overlaps every local one: {'yes' if agree else 'NO'}.",
        "",
        f"Setup: the preflight {setup['preflight']:.1f} s (of which {setup['tf_preflight']:.1f} s "
        f"on the host, importing TensorFlow); the first copy of the dataset ({setup['files']} "
        f"files, {setup['bytes'] / 1e6:.1f} MB through tar over ssh) {setup['first']:.1f} s; "
        f"the second, found in the host's cache, {setup['cached']:.2f} s.",
    ]
    publish(f"remote-{args.image_size}", section_text(lines, load), args.write)


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.3f}" for v in values)


if __name__ == "__main__":
    assert (ROOT / "tests" / "helpers" / "sshd.py").exists()
    main()
