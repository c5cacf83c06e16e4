"""Running the `xlagui` command as a user in a terminal or a CI job does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


def cli(
    *args: str, cwd: Path | None = None, timeout: float = 600, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xlagui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=env,
    )


def assert_ran(code: int, out: Path, said: str = "") -> None:
    """`compare`'s exit status for a comparison that ran: 0, or 1 only when no run failed and
    the comparison was judged not valid (a tiny set or a 10 s budget may leave it so). A 1
    for a failed run, or any other status, fails with `said` (the output) shown."""
    assert code in (0, 1), said
    if code == 1:
        saved = json.loads((out / "comparison.json").read_text())
        runs = [*saved.get("measure_runs", []), *saved.get("runs", [])]
        failed = [r["run_id"] for r in runs if r["status"] == "error"]
        assert not failed, f"exit status 1 from failed runs {failed}\n{said}"
        comparison = saved.get("comparison") or {}
        assert comparison.get("valid") is False, f"exit status 1 without a reason\n{said}"


@dataclass(frozen=True)
class RealComparison:
    """One real training comparison run by the CLI in a process of its own, for the tests that
    only read what it left: `result` (its exit status and output), `out` (its folder), `data`
    and `data_before` (the dataset and its snapshot before), `home` and `tmp` (its own home and
    temporary folders, to see what it wrote outside `out`)."""

    result: subprocess.CompletedProcess[str]
    out: Path
    data: Path
    data_before: dict[str, tuple[int, int, int]]
    home: Path
    tmp: Path


def real_comparison(root: Path) -> RealComparison:
    """`xlagui compare DATA --epochs 2 --batch 8 --image-size 48 --budget 10 --no-explain` on a
    tiny set, CPU only, with a home and a temporary folder of its own and no xlagui settings
    from the test run. (The why has its own tests; this is the measurement and the training.)"""
    from tests.helpers.datasets import tiny_split_dataset
    from tests.helpers.images import tree_snapshot

    data = tiny_split_dataset(root / "d")
    before = tree_snapshot(data)
    out, home, tmp = root / "report", root / "home", root / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XLAGUI_", "XDG_"))}
    # The peak probe stays off, as in every test that does not ask for it (tests/conftest.py).
    env.update(HOME=str(home), TMPDIR=str(tmp), CUDA_VISIBLE_DEVICES="", XLAGUI_PEAK_PROBE="off")
    result = cli("compare", str(data), "--epochs", "2", "--batch", "8", "--image-size", "48",
                 "--budget", "10", "--no-explain", "--out", str(out), cwd=root, env=env)
    return RealComparison(result, out, data, before, home, tmp)
