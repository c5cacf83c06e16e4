"""Running the `xlagui` command as a user in a terminal or a CI job does."""

from __future__ import annotations

import json
import subprocess
import sys
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
