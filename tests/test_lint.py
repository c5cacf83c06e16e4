"""The house rules a machine can check: lint, types, and the Qt-free core contract."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff() -> None:
    res = run(sys.executable, "-m", "ruff", "check", "xlagui", "tests", "bench")
    assert res.returncode == 0, res.stdout + res.stderr


def test_mypy() -> None:
    # Strict, as pyproject says; said again here so the test cannot quietly get laxer.
    res = run(sys.executable, "-m", "mypy", "--strict")
    assert res.returncode == 0, res.stdout + res.stderr


def test_import_contracts() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("import-linter is not installed (pip install -e '.[test]')")
    res = run(exe)
    assert res.returncode == 0, res.stdout + res.stderr


def test_gui_start_imports_no_tensorflow() -> None:
    """The window must appear before TensorFlow would have loaded: importing the app's modules
    must not import it (nor Keras, nor SciPy)."""
    code = (
        "import sys, xlagui.cli, xlagui.ui.app, xlagui.ui.window.main_window\n"
        "bad = [m for m in ('tensorflow', 'keras', 'scipy') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    res = run(sys.executable, "-c", code)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""
