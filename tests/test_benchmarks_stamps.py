"""Every section of BENCHMARKS.md carries a stamp (issue 40): the machine, the load average
before and after (or that it was not recorded), the date and the command, on one line:

    Machine: AMD EPYC, 2 usable cores …; load average before 0.9, 1.0, 1.3, after 1.1, 1.0, 1.3.
    Measured 2026-12-07. Command: `python bench/bench_launch.py --launches 3`.

The bench scripts write it (`bench/_common.py: section_text`); a section written by hand says
the same, with "not recorded" where a figure was not kept and "by hand" where no one command
made it. A figure with no machine, no load or no date cannot be weighed against another."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STAMP = re.compile(
    r"^Machine: (?P<machine>[^;\n]+); "
    r"(?:load average before (?P<before>[^\n]+?), after (?P<after>[^\n]+?)"
    r"|load not recorded[^.\n]*)"
    r"\. Measured (?P<date>20\d\d-\d\d-\d\d)[^.\n]*\. "
    r"Command: (?P<command>`[^`\n]+`|by hand[^\n]*)",
    re.MULTILINE,
)


def sections(text: str) -> dict[str, str]:
    """BENCHMARKS.md's sections by their "## " heading."""
    parts = re.split(r"(?m)^(?=## )", text)
    return {part.splitlines()[0]: part for part in parts[1:]}


def unstamped(text: str) -> list[str]:
    return [title for title, body in sections(text).items() if not STAMP.search(body)]


def test_every_benchmarks_section_has_its_stamp() -> None:
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    assert len(sections(text)) > 50
    assert unstamped(text) == []


def test_a_section_without_its_load_or_command_is_found() -> None:
    good = ("## A\n\nfigures\n\nMachine: AMD EPYC, 2 usable cores; load average before 0.1, 0.2, "
            "0.3, after 0.4, 0.5, 0.6. Measured 2026-12-07. Command: `python bench/x.py`.\n")
    assert unstamped(good) == []
    assert unstamped(good.replace("load average before 0.1, 0.2, 0.3, after 0.4, 0.5, 0.6",
                                  "load not recorded")) == []
    assert unstamped(good.replace(", after 0.4, 0.5, 0.6", "")) == ["## A"]
    assert unstamped(good.replace(" Command: `python bench/x.py`.", "")) == ["## A"]
    assert unstamped(good.replace("2026-12-07", "today")) == ["## A"]


def test_the_bench_scripts_write_the_stamp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.setattr(sys, "argv", [str(ROOT / "bench" / "bench_x.py"), "--runs", "2"])
    monkeypatch.chdir(ROOT)
    from _common import section_text

    text = section_text(["## A section", "", "a figure"], "0.5, 0.6, 0.7", before="the runs")
    (match,) = STAMP.finditer(text)
    assert match["before"] == "the runs 0.5, 0.6, 0.7" and match["after"]
    assert match["command"] == "`python bench/bench_x.py --runs 2`"
