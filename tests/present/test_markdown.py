"""The comparison as Markdown tables to paste into an issue: the tables' exact structure for
each shape of report (speed only, with training runs, with other arms, with a failed arm)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tests.helpers.reports import comparison_report
from xlagui.present import format as fmt
from xlagui.present import report as report_words
from xlagui.present.markdown import ARM_COLUMNS, cell, code_block, report_markdown
from xlagui.present.verdicts import recommendation_sentence

ARM_HEADER = [h for h, _ in ARM_COLUMNS]
SEPARATOR = re.compile(r"^\|(:?-{3,}:?\|)+$")


@dataclass
class Table:
    section: str  # the heading above it
    header: list[str]
    separator: str
    rows: list[list[str]]


def cells(line: str) -> list[str]:
    """A table line's cells, split at the pipes that are not escaped."""
    assert line.startswith("| ") and line.endswith(" |"), line
    out, current, escaped = [], "", False
    for ch in line[2:-2]:
        if escaped:
            current += "\\" + ch
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "|":
            out.append(current)
            current = ""
        else:
            current += ch
    out.append(current)
    return [c.strip() for c in out]


def tables(markdown: str) -> dict[str, Table]:
    """Every table, by the heading above it."""
    lines = markdown.splitlines()
    found: dict[str, Table] = {}
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        if line.startswith("|"):
            header, separator = cells(line), lines[i + 1]
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(cells(lines[i]))
                i += 1
            assert section not in found, f"two tables under {section!r}"
            found[section] = Table(section, header, separator, rows)
            continue
        i += 1
    return found


def check_shape(t: Table) -> None:
    """A GFM table: a separator with one column per heading, every row as wide."""
    assert SEPARATOR.match(t.separator), t.separator
    assert t.separator.count("|") - 1 == len(t.header)
    assert all(len(row) == len(t.header) for row in t.rows), t.section


def test_a_speed_only_comparison() -> None:
    report = comparison_report()
    md = report_markdown(report)
    lines = md.splitlines()
    assert lines[0] == "# XLA vs baseline on tiny — Test CPU (CPU)"
    assert "**Speed per training step: 2.00× faster" in md
    found = tables(md)
    for t in found.values():
        check_shape(t)
    assert list(found) == ["Summary", "Arms against the baseline, fastest first",
                           "How far from the limit", "Setup"]  # no training runs table
    assert found["Summary"].header == ["What", "Value"]
    assert found["Summary"].rows == [list(r) for r in fmt.comparison_rows(report.comparison)]
    arms = found["Arms against the baseline, fastest first"]
    assert arms.header == ARM_HEADER
    assert arms.separator == "|:---|---:|---:|---:|:---|:---|:---|"
    assert arms.rows == [["jit (XLA)", "2.00× faster", "2.00–2.00× faster", "8", "engaged",
                          fmt.arm_accuracy(report.comparison.interleaved.arms[0]), "no"]]
    # No epoch was trained: the settings say the budget and the pairs (issue 31: "50 epochs").
    settings = dict((row[0], row[1]) for row in found["Setup"].rows)["Settings"]
    assert settings == "speed only: 120 s budget, 8 pairs, batch 8, 48 px, augmentation on, seed 0"
    # The reproduce line, fenced, last.
    assert lines[-3:] == ["```sh", report.reproduce_command(), "```"]
    assert lines[-3 - 2] == "## Reproduce"
    assert report.reproduce_command().endswith("--quick")
    assert md.endswith("```\n")


def test_training_runs_get_their_own_table() -> None:
    report = comparison_report(training=True)
    found = tables(report_markdown(report))
    runs = found["Training runs"]
    check_shape(runs)
    assert runs.header == [h for h, _ in report_words.RUN_COLUMNS]
    assert [row[0] for row in runs.rows] == ["Baseline #1", "XLA jit_compile #1"]
    assert runs.rows == [list(r) for r in report_words.run_rows(report)]
    summary = dict(map(tuple, found["Summary"].rows))  # type: ignore[arg-type]
    assert summary["Speed per steady epoch"].startswith("2.00× faster")


def test_other_arms_rank_with_the_xla_side_and_one_is_recommended() -> None:
    report = comparison_report(arms=("bf16", "fp16"), steps={"fp16": 0.4}, training=True,
                               jitter=0.05, rounds=20)
    md = report_markdown(report)
    assert md.startswith("# XLA, bf16 and fp16 vs baseline on tiny — Test CPU (CPU)\n")
    found = tables(md)
    arms = found["Arms against the baseline, fastest first"]
    check_shape(arms)
    assert arms.header == ARM_HEADER
    assert [row[0] for row in arms.rows] == ["jit (XLA)", "bf16", "fp16"]  # fastest first
    assert [row[3] for row in arms.rows] == ["20", "20", "20"]
    by_arm = {a.arm: a for a in report.comparison.interleaved.arms}
    for row, name in zip(arms.rows, ("jit", "bf16", "fp16"), strict=True):
        a = by_arm[name]
        assert row[1] == fmt.arm_speed(a).split(" (")[0]  # the words of every table
        assert row[2] == fmt.arm_interval(a)
    # fp16 is twice as slow as the baseline: said so, never as 0.50× (issue 31).
    assert re.fullmatch(r"(2.00|1.99)× slower", arms.rows[2][1])
    assert arms.rows[2][2].endswith("× slower")
    assert report.comparison.recommended_arm == "jit"
    assert [row[6] for row in arms.rows] == ["★ yes", "no", "no"]
    # The recommendation follows the table; the verdict above it does not repeat it.
    rec = recommendation_sentence(report.comparison.recommendation)
    assert rec and md.count(rec) == 1
    assert md.index(rec) > md.index("## Arms against the baseline")
    assert [row[0] for row in found["Training runs"].rows] == [
        "Baseline #1", "XLA jit_compile #1", "bf16 #1", "fp16 #1"]


def test_a_failed_arm_has_a_row_that_says_so() -> None:
    report = comparison_report(arms=("bf16", "fp16"), failed=("fp16",))
    arms = tables(report_markdown(report))["Arms against the baseline, fastest first"]
    check_shape(arms)
    assert len(arms.rows) == 3
    failed = arms.rows[-1]  # an arm without a ratio ranks last
    assert failed[:5] == ["fp16", "—", "—", "0", "failed: out of memory"]


def test_pipes_and_backslashes_cannot_break_a_table() -> None:
    assert cell("a|b") == "a\\|b"
    assert cell("C:\\data|x") == "C:\\\\data\\|x"
    assert cell("two\nlines  here") == "two lines here"
    report = comparison_report()
    report.dataset["name"] = "cats | dogs"
    report.dataset["root"] = "D:\\photos\\"
    setup = tables(report_markdown(report))["Setup"]
    check_shape(setup)
    rows = dict(map(tuple, setup.rows))  # type: ignore[arg-type]
    assert rows["Name"] == "cats \\| dogs"
    assert rows["Folder"] == "D:\\\\photos\\\\"


def test_a_command_with_backticks_keeps_its_fence() -> None:
    assert code_block("echo ```x```") == ["````sh", "echo ```x```", "````"]
    assert code_block("plain") == ["```sh", "plain", "```"]
