"""`--arms jax` on a Python without JAX: one line with the install command, exit 2, nothing
started (the plain-install lane checks the same on a real install without JAX)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.cli import main


def test_the_jax_arm_without_jax_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "jax" else real(name, *a))
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    out = tmp_path / "o"
    assert main(["compare", str(data), "--quick", "--arms", "jax", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pip install 'xlagui[jax]'" in err and "Traceback" not in err
    assert not out.exists()  # refused before anything ran


def test_an_arm_that_mixes_jax_with_tensorflows_levers_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    assert main(["compare", str(data), "--quick", "--arms", "jax+dnn",
                 "--out", str(tmp_path / "o")]) == 2
    assert "cannot change oneDNN settings" in capsys.readouterr().err.replace("\n", " ")
