"""ARCHITECTURE.md's "to add an X" recipes, tried as a plugin would: a throwaway module that
registers its X in one line, then a script of what a user would see of it, in a fresh
interpreter that imports the module first (so every table built as a module loads has it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def seen_after_registering(folder: Path, module: str, source: str, script: str
                           ) -> dict[str, Any]:
    """Write `source` as `folder/<module>.py`, run `script` (which puts `sys.argv[1]` on its
    path and imports `module` first) in a fresh interpreter, and read the JSON object its last
    line prints."""
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", script, str(folder)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seen
