"""`xlagui inspect` on a comparison folder says its why: where the time goes, the compiles with
the partial batch's fix, the parity; a comparison from before says only what XLA did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.reports import comparison_report
from tests.helpers.why import write_comparison
from xlagui.cli import main
from xlagui.core.results import history


def test_inspect_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    folder = write_comparison(tmp_path / "c")
    assert main(["inspect", str(folder)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ("• XLA jit_compile spends 0.88 s of its 2.50 s step in the input gradient of "
            "block_1_depthwise's depthwise convolution (lowered to base-dilated convolutions), "
            "where the baseline spends 0.04 s: 0.84 s more per step.") in out
    assert "29% (0.73 s) is not traced (below the 80% goal)" in out
    assert "Thread-times add up across cores" in out
    assert "│ not traced │ — │ — │ 0.01 s │ 0.72 s │ +0.71 s │" in out
    assert "│ 02-xla-r1 │ eval │ float32[8,64,64,3], int32[8] │ 1.10 s │ the last partial batch " \
           "of 8 │" in out
    assert "drop_remainder=True" in out
    assert "• XLA jit_compile is the same within float32 rounding over 20 steps" in out
    # --json keeps its shape: what XLA did per run (the why is in comparison.json).
    assert main(["inspect", str(folder), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"02-xla-r1"}


def test_inspect_of_an_older_comparison_says_no_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "old"
    history.save(comparison_report(training=True), folder)
    assert main(["inspect", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "XLA did:" in out
    assert "Where the time goes" not in out and "Compiles" not in out
