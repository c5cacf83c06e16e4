"""The comparison as GitHub-flavoured Markdown, the form people paste into an issue or a pull
request (as hyperfine's `--export-markdown`): a title naming the dataset, the model and the
machine, the headline speed-up with its 95% interval, the summary and every arm as tables, the
training runs, the notes, and the command that reproduces it.

`xlagui compare` writes it to `comparison.md` (and prints it with `--markdown`), the window's
"Copy as Markdown" puts it on the clipboard. Every figure and sentence comes from `format`,
`verdicts` and `limits`, the same as in the terminal, the window and the PNG; this module only
lays them out. `summary_markdown` is the shorter text for TensorBoard's text tab.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xlagui.core.analysis.ranking import ranked
from xlagui.core.protocol.identity import Role
from xlagui.present import compiles, explain, limits, parity, verdicts
from xlagui.present import format as fmt
from xlagui.present import report as report_words
from xlagui.present.machine_load import is_busy, load_lines
from xlagui.present.notes import comparison_notes
from xlagui.present.problems import comparison_problems
from xlagui.present.why_data import WhyData, why_of

if TYPE_CHECKING:
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.results.report import ComparisonReport

# The arms table: (heading, aligned left).
ARM_COLUMNS: tuple[tuple[str, bool], ...] = (
    ("Arm", True),
    ("Speed per step", False),
    ("95% CI (Bonferroni-adjusted)", False),
    ("Pairs", False),
    ("Status", True),
    ("Accuracy", True),
    ("Recommended", True),
)


def cell(text: str) -> str:
    """`text` safe inside a table cell: backslashes and `|` escaped, line breaks as spaces."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def table(header: Sequence[str], rows: Sequence[Sequence[str]],
          left: Sequence[bool] | None = None) -> list[str]:
    """A GFM table: the header, the separator (`:---` left, `---:` right aligned), a line
    per row."""
    left = list(left) if left is not None else [True] * len(header)
    lines = [
        "| " + " | ".join(cell(h) for h in header) + " |",
        "|" + "|".join(":---" if lft else "---:" for lft in left) + "|",
    ]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


def code_block(text: str, info: str = "sh") -> list[str]:
    """`text` fenced, with a fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", text, fence]


def title(report: ComparisonReport) -> str:
    """What was compared, on which dataset and model, and where: "XLA vs baseline on tiny
    with mixer — Intel Xeon (CPU)"."""
    return f"{report_words.comparison_title(report)} — {report_words.device_words(report)}"


def headline(c: Comparison) -> str:
    """The speed-up per training step (or per steady epoch, without a speed measurement) with
    its 95% interval, and what it was measured on."""
    if c.interleaved is not None:
        return f"**Speed per training step: {fmt.speedup(c)}**, {fmt.measured_on(c)}."
    return f"**Speed per steady epoch: {fmt.speedup_epochs(c)}**."


def arm_rows(report: ComparisonReport) -> list[tuple[str, ...]]:
    """Every arm against the baseline, fastest first, as rows of `ARM_COLUMNS`."""
    c = report.comparison
    if c is None or c.interleaved is None:
        return []
    rows: list[tuple[str, ...]] = []
    for a in ranked(c.interleaved.arms):
        name = f"{a.arm} (XLA)" if a.variant == Role.XLA else a.arm
        rows.append((
            name,
            fmt.arm_speedup(a),
            fmt.arm_interval(a),
            str(a.pairs),
            fmt.arm_status(a, fmt.measure_entry(report, a)),
            fmt.arm_accuracy(a),
            "★ yes" if c.recommended_arm == a.arm else "no",
        ))
    return rows


def report_markdown(report: ComparisonReport, why: WhyData | None = None) -> str:
    """The whole comparison as Markdown, ending with a newline; its "why" is `why` (by default
    what the report carries: `why_data.why_of`). A name that is not valid UTF-8 (a folder's,
    kept as surrogate escapes) is written with backslash escapes, so the text can be written,
    printed and pasted."""
    text = _report_markdown(report, why if why is not None else why_of(report))
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


ATTRIBUTION_ROWS = 12  # the rows that differ most; the window and comparison.json have all


def why_markdown(why: WhyData) -> list[str]:
    """The "Why" section: where the time goes, the compiles, the parity; [] when the
    comparison has none of them (recorded before, or skipped)."""
    if why.empty:
        return []
    lines = ["## Why", ""]
    if why.explain is not None:
        ex = why.explain
        lines += ["### Where the time goes", ""]
        lines += [f"- {line}" for line in explain.difference_lines(ex)] + [""]
        lines += table(explain.COVERAGE_COLUMNS, explain.coverage_rows(ex),
                       (True, False, False, False))
        lines += ["", *(f"- {line}" for line in explain.coverage_lines(ex)), ""]
        attribution = explain.attribution_table(ex, limit=ATTRIBUTION_ROWS)
        lines += table(attribution.columns, attribution.rows,
                       [i < 3 for i in range(len(attribution.columns))])
        lines += ["", f"{explain.THREADS_NOTE} {explain.NOT_TRACED_NOTE}", ""]
    if why.compilations:
        lines += ["### Compiles", ""]
        lines += [f"- {line}" for line in compiles.compile_lines(why.compilations)] + [""]
        lines += table(compiles.COMPILE_COLUMNS, compiles.compile_rows(why.compilations),
                       (True, True, True, False, True))
        lines.append("")
    if why.parity:
        lines += ["### Do the numbers stay the same?", ""]
        lines += [f"- {line}" for line in parity.parity_lines(why.parity)] + [""]
        lines += table(parity.PARITY_COLUMNS, parity.parity_rows(why.parity),
                       (True, True, False, False, False))
        lines += ["", parity.HOW, ""]
    return lines


def _report_markdown(report: ComparisonReport, why: WhyData) -> str:
    c = report.comparison
    lines = [f"# {title(report)}", ""]
    lines += [f"{fmt.created(report.created)} · xlagui {report.app_version}", ""]
    if c is None:
        lines += ["Not compared yet: no run finished.", ""]
    else:
        lines += [headline(c), "", fmt.question_verdict(c), ""]
        for line in load_lines(c):
            lines += [f"**{line}**" if is_busy(c) else line, ""]
        stopped = report_words.stopped_words(report)
        if stopped:
            lines += [f"**{stopped}**", ""]
        lines += ["## Summary", ""]
        lines += table(("What", "Value"), fmt.comparison_rows(c))
        lines.append("")
        arms = arm_rows(report)
        if arms:
            lines += ["## Arms against the baseline, fastest first", ""]
            lines += table([h for h, _ in ARM_COLUMNS], arms, [lft for _, lft in ARM_COLUMNS])
            lines.append("")
            recommendation = verdicts.recommendation_sentence(c.recommendation)
            if recommendation:
                lines += [recommendation, ""]
    if report.runs:
        lines += ["## Training runs", ""]
        lines += table([h for h, _ in report_words.RUN_COLUMNS], report_words.run_rows(report),
                       [lft for _, lft in report_words.RUN_COLUMNS])
        lines.append("")
    efficiency = limits.efficiency_rows(c)
    if efficiency:
        lines += ["## How far from the limit", ""]
        lines += table(("What", "Value"), efficiency)
        lines += ["", limits.limit_verdict(c), ""]
    if c is not None:
        for heading, items in (("Problems", comparison_problems(c.problems)),
                               ("Notes", comparison_notes(c))):
            if items:
                lines += [f"## {heading}", ""]
                lines += [f"- {' '.join(item.split())}" for item in items]
                lines.append("")
    lines += why_markdown(why)
    lines += ["## Setup", ""]
    lines += table(("What", "Value"), [*report_words.dataset_words(report),
                                       *report_words.environment_words(report)])
    lines += ["", "## Reproduce", ""]
    lines += code_block(report.reproduce_command())
    return "\n".join(lines) + "\n"


def folder_markdown(report: ComparisonReport, folder: Path) -> str:
    """What `comparison.md` holds: `report_markdown` with the why read from the comparison's
    folder (the inspecting runs' files). The workflow writes it for every front end
    (`ComparisonRequest.report_text`)."""
    return report_markdown(report, why_of(report, folder))


def summary_markdown(report: ComparisonReport) -> str:
    """The comparison in a few lines of Markdown, for TensorBoard's text tab
    (`compare.run_comparison`'s `tensorboard_text`)."""
    c = report.comparison
    verdict = verdicts.verdict_sentence(c) if c is not None else "Not compared."
    lines = [f"## {report_words.comparison_title(report)}", "", verdict, ""]
    recommendation = verdicts.recommendation_sentence(c.recommendation) if c is not None else ""
    if recommendation:
        lines += [recommendation, ""]
    lines += ["| run | status | steady epoch (s) | val. accuracy |", "|---|---|---|---|"]
    for entry in report.runs:
        s = entry.summary
        steady = s.steady_epoch_seconds if s is not None else None
        acc = s.final_val_accuracy if s is not None else None
        lines.append(
            f"| {entry.run_id} | {entry.status} | "
            f"{'—' if steady is None else f'{steady:.2f}'} | "
            f"{'—' if acc is None else f'{acc:.1%}'} |"
        )
    lines += ["", f"Reproduce: `{report.reproduce_command()}`"]
    return "\n".join(lines)
