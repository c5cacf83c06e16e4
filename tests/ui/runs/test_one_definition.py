"""One definition per figure, shown the same way everywhere (issue 31): the window's summary,
the PNG, the Markdown and the CLI say each comparison row in the same words."""

from __future__ import annotations

import csv as pycsv
import io

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot
from rich.console import Console

from tests.helpers.reports import comparison_report
from xlagui.cli.console import print_summary
from xlagui.present import format as fmt
from xlagui.present.markdown import cell, report_markdown
from xlagui.ui.report_png import ReportFigure
from xlagui.ui.runs.comparison_panel import ComparisonPanel


@pytest.mark.parametrize("arm", ["bf16", "jax"])  # jax: Keras on JAX (issue 39)
def test_every_row_reads_the_same_in_the_window_png_markdown_and_cli(qtbot: QtBot,
                                                                      arm: str) -> None:
    # Per step XLA is 1.5× slower (0.3 s against 0.2 s, with noise), per epoch 2× faster: the
    # two must not stand bare side by side, the epoch row says why they differ.
    report = comparison_report(arms=(arm,), steps={"xla": 0.3}, training=True, jitter=0.05)
    c = report.comparison
    rows = dict(fmt.comparison_rows(c))
    epoch = rows["Speed per steady epoch"]
    assert epoch.startswith("2.00× faster")
    step = rows["Speed per training step"].split(" (")[0]
    assert step.endswith("× slower")
    assert f"per step it was {step}: an epoch also times the validation pass" in epoch
    assert rows["Compile cost"] == "not measurable" or "over the baseline's" in (
        rows["Compile cost"])

    panel = ComparisonPanel()
    qtbot.addWidget(panel)
    panel.show_comparison(c)
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    png = {label.text() for label in figure.findChildren(QLabel)}
    markdown = report_markdown(report)
    console = Console(record=True, width=2000, color_system=None)
    print_summary(console, report)
    cli = console.export_text()
    for name, value in rows.items():
        assert panel.rows[name].text() == value, name
        assert value in png, name
        assert f"| {cell(name)} | {cell(value)} |" in markdown, name
        assert value in cli, name
    # The arms: one interval each, the adjusted one, labelled so, in the window and the CLI.
    table = fmt.arm_table(c)
    assert all("Bonferroni-adjusted for 2 arms" in row[2] for row in table)
    assert panel.arm_rows == table
    assert all(row[2] in cli for row in table)
    assert any(row[1].startswith(arm) for row in table)


def test_xla_has_one_interval_on_a_page_with_arms() -> None:
    """With several arms, XLA's step interval in the headline and the summary is the adjusted
    one its arms-table row shows (a plain 95% interval beside an adjusted one for the same arm
    was two intervals on one page); alone, it is the plain one, unlabelled."""
    from xlagui.present.verdicts import speed_sentence

    report = comparison_report(arms=("bf16",), steps={"xla": 0.3}, jitter=0.05)
    c = report.comparison
    assert c is not None and c.interleaved is not None
    xla_row = next(row for row in fmt.arm_table(c) if row[1].startswith("jit"))
    interval = xla_row[2].split("(")[1].split(",")[0]  # "95% CI 1.40–1.60×"
    summary = dict(fmt.comparison_rows(c))["Speed per training step"]
    assert interval in summary and "Bonferroni-adjusted for 2 arms" in summary
    assert interval in speed_sentence(c) and "Bonferroni-adjusted" in speed_sentence(c)
    xla = next(a for a in c.interleaved.arms if a.variant == "xla")
    assert (xla.low, xla.high) != (xla.adjusted_low, xla.adjusted_high)  # they differ

    alone = comparison_report(steps={"xla": 0.3}, jitter=0.05).comparison
    assert alone is not None
    assert "Bonferroni" not in dict(fmt.comparison_rows(alone))["Speed per training step"]


def test_a_point_interval_is_said_as_none_in_the_headline_and_the_summary() -> None:
    """Every pair the same ratio gives an interval that is a point: the summary said "no
    interval: a single measurement" and the headline "95% CI 2.00–2.00×" beside it."""
    from xlagui.present.verdicts import speed_sentence

    c = comparison_report(steps={"xla": 0.3}).comparison  # no jitter: every pair alike
    assert c is not None and c.speedup is not None and c.speedup.low == c.speedup.high
    assert "no interval" in dict(fmt.comparison_rows(c))["Speed per training step"]
    assert "95% CI" not in speed_sentence(c) and "single measurement" in speed_sentence(c)


def test_a_columns_compile_figure_is_the_one_the_compile_cost_subtracts(qtbot: QtBot) -> None:
    """Each column's "Compile + warm-up" is every compilation its worker reported, summed:
    XLA's less the baseline's is the summary's compile cost (they once read 7.82 s and 1.75 s
    beside "+9.03 s in compiles and recompiles")."""
    from tests.core.analysis.test_compiles import compiled_report
    from xlagui.ui.runs.run_column import RunColumn

    report = compiled_report()
    base, xla = report.measure_runs[:2]
    c = report.recompute()
    shown = []
    for entry in (base, xla):
        column = RunColumn(entry.variant)
        qtbot.addWidget(column)
        column.begin_run(entry.run_id, 1)
        for event in entry.events:
            column.apply_event(event)
        column.redraw()
        shown.append(column.figures["compile"].text())
    assert shown == ["1.20 s", "5.00 s"]
    assert dict(fmt.comparison_rows(c))["Compile cost"].startswith("+3.80 s")


def test_a_busy_machine_is_said_in_the_same_words_everywhere(qtbot: QtBot) -> None:
    """Issue 37: an answer measured beside another program says so, once worded
    (`machine_load.load_lines`), in the window's banner, the PNG, the Markdown, the CLI and
    the History row, and `comparison.json` holds the figures per round and in total."""
    import json

    from xlagui.core.results.history import HistoryItem
    from xlagui.core.results.report import ComparisonReport
    from xlagui.present import history
    from xlagui.present.machine_load import load_lines

    report = comparison_report(jitter=0.05, others=[0.45] * 8)
    c = report.comparison
    assert c is not None and c.interleaved is not None and c.interleaved.machine is not None
    lines = load_lines(c)
    assert lines and "measured on a busy machine" in lines[0]
    assert "45% of the 2 cores" in lines[0] and "spinner (pid 4242) 45%" in lines[0]
    assert "8 of 8 rounds were disturbed" in lines[0] and "Close them" in lines[0]

    panel = ComparisonPanel()
    qtbot.addWidget(panel)
    panel.show_comparison(c)
    assert panel.machine.isVisibleTo(panel) and panel.machine.text() == "\n".join(lines)
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    assert any(lines[0] in label.text() for label in figure.findChildren(QLabel))
    assert f"**{lines[0]}**" in report_markdown(report)
    console = Console(record=True, width=4000, color_system=None)
    print_summary(console, report)
    assert lines[0] in console.export_text()
    item = HistoryItem(folder=report.dataset.get("root", "."), created=report.created,  # type: ignore[arg-type]
                       dataset_name="tiny", comparison=c, runs_finished=0)
    assert history.verdict(item).endswith("(busy)") and lines[0] in history.verdict_tip(item)

    saved = json.loads(json.dumps(report.to_dict()))
    machine = saved["comparison"]["interleaved"]["machine"]
    assert machine["busy"] is True and machine["disturbed_rounds"] == 8
    assert machine["busiest"][0]["name"] == "spinner"
    block = next(e for e in saved["measure_runs"][0]["events"] if e["type"] == "block")
    assert block["interference"]["other_share"] == 0.45 and block["interference"]["disturbed"]
    again = ComparisonReport.from_dict(saved)
    assert load_lines(again.recompute()) == lines  # replayed: the same words
    from xlagui.core.results.export import to_csv
    from xlagui.present.csv_notes import note_words

    csv = {r["metric"]: r for r in pycsv.DictReader(io.StringIO(to_csv(report, note_words)))}
    assert csv["disturbed_rounds"]["value"] == "8" and "of 8 rounds" in csv[
        "disturbed_rounds"]["note"]
    assert "spinner (pid 4242)" in csv["busy_machine"]["note"]


def test_a_quiet_machine_is_one_plain_line_and_marks_nothing(qtbot: QtBot) -> None:
    report = comparison_report(jitter=0.05, others=[0.01] * 8)
    c = report.comparison
    from xlagui.present.machine_load import is_busy, load_lines

    assert load_lines(c) == ["The machine was quiet while timing: other programs used 1% of "
                             "the 2 cores."]
    assert not is_busy(c)
    panel = ComparisonPanel()
    qtbot.addWidget(panel)
    panel.show_comparison(c)
    assert "quiet" in panel.machine.text() and "font-weight" not in panel.machine.styleSheet()
