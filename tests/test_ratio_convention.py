"""One ratio convention (issue 40): a speed-up is the baseline's step time ÷ the arm's, said in
words ("2.00× faster", "1.46× slower"), so no output shows a bare ratio below 1 followed by
"×" ("jit 0.66× (0.64–0.68×)" once read as a speed-up by some and as a time by others).

The project's pages are scanned, and the outputs of `xlagui compare`, `xlagui sweep` and
`xlagui inspect` as a user gets them: the terminal's text and the files each writes (Markdown,
CSV), with every arm slower than the baseline, where a bare ratio would be below 1. The workers
are the fakes that speak the protocol (tests/helpers/fake_measure_worker.py), told the arms'
step time ratios."""

from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.why import write_comparison
from xlagui.cli import main
from xlagui.core.compare import ComparisonRequest
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.sweep.cell import CellJob

FAKE_MEASURE = Path(__file__).resolve().parent / "helpers" / "fake_measure_worker.py"
# Every arm slower than the baseline: its step time 2.0 (jit) or 1.25 (bf16) times the baseline's.
SLOWER = json.dumps({"ratios": {"xla": 2.0, "jit": 2.0, "bf16": 1.25}})
BARE = re.compile(r"(?<![\d.])0\.\d+\s*×")


def bare_ratios(text: str) -> list[str]:
    """The bare ratios below 1 followed by "×" in `text`."""
    return BARE.findall(text)


def slower_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json"), SLOWER]


def texts(folder: Path, *suffixes: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(folder.rglob("*"))
                     if p.suffix in suffixes)


def test_the_scan_finds_a_bare_ratio_and_nothing_else() -> None:
    assert bare_ratios("✓ batch 16, 64 px, arms jit: jit 0.66× (0.64–0.68×)") == ["0.66×",
                                                                                 "0.68×"]
    assert bare_ratios("RAM 0.85 × the baseline's") == ["0.85 ×"]
    assert bare_ratios("1.52× slower (1.47–1.56× slower); 10.5× faster; 150×150 images; "
                       "op×2; 0.85 of the baseline's") == []


def test_the_pages_say_no_bare_ratio_below_1() -> None:
    """The README, BENCHMARKS.md and the guides: a figure below 1 is a ratio with its direction
    said beside it ("baseline ÷ jit step time, below 1: slower"), never "0.66×"."""
    root = Path(__file__).resolve().parents[1]
    pages = [root / "README.md", root / "BENCHMARKS.md", *sorted((root / "docs").glob("*.md"))]
    found = {p.name: bare_ratios(p.read_text(encoding="utf-8")) for p in pages}
    assert {name: ratios for name, ratios in found.items() if ratios} == {}


def test_compare_says_slower_arms_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xlagui.cli import compare as command

    monkeypatch.setattr(command, "ComparisonRequest", functools.partial(
        ComparisonRequest, worker_command=slower_command))
    monkeypatch.setenv("COLUMNS", "200")
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "o"
    assert main(["compare", str(data), "--quick", "--batch", "4", "--image-size", "48",
                 "--budget", "30", "--arms", "bf16", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    written = texts(out, ".md", ".csv")
    assert "2.00× slower" in printed.out and "1.25× slower" in written  # what is scanned
    assert bare_ratios(printed.out + printed.err + written) == []


def test_sweep_says_slower_arms_in_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xlagui.cli import sweep

    monkeypatch.setattr(sweep, "CellJob", functools.partial(CellJob,
                                                             worker_command=slower_command))
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "s"
    assert main(["sweep", str(data), "--batch", "4,8", "--image-size", "48", "--arms", "jit",
                 "--budget", "100", "--out", str(out)]) == 0
    printed = capsys.readouterr()
    written = texts(out, ".md", ".csv")
    assert "jit 2.00× slower (" in printed.out and "2.00× slower" in written
    assert bare_ratios(printed.out + printed.err + written) == []


def test_inspect_says_its_figures_without_a_bare_ratio(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    folder = write_comparison(tmp_path / "c")  # XLA slower there: its why's recorded figures
    assert main(["inspect", str(folder)]) == 0
    printed = capsys.readouterr()
    assert "XLA jit_compile spends" in printed.out
    assert bare_ratios(printed.out + printed.err) == []
