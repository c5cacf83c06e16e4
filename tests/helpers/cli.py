"""Running the `xlagui` command as a user in a terminal or a CI job does."""

from __future__ import annotations

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
