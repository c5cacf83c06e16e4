"""The report in words: its title, the runs table and the History's title."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.reports import comparison_report
from xlagui.core.results import history
from xlagui.present import report as report_words


def test_one_runs_table_for_the_terminal_and_the_png() -> None:
    import io

    from rich.console import Console

    from tests.helpers.limits import known_limits, limits_report
    from xlagui.cli.console import print_summary

    report = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4)
    rows = report_words.run_rows(report)
    assert len(rows) == len(report.runs) > 0
    assert all(len(row) == len(report_words.RUN_COLUMNS) for row in rows)
    names = [row[0] for row in rows]
    assert names[0] == "Baseline #1" and names[1] == "XLA jit_compile #1"
    # The terminal prints exactly these cells (the PNG lays out the same rows, report_png.py).
    out = io.StringIO()
    print_summary(Console(file=out, width=250, color_system=None), report)
    text = out.getvalue()
    for row in rows:
        for cell in row:
            assert cell in text
    for heading, _ in report_words.RUN_COLUMNS:
        assert heading in text


def test_run_names_say_which_side() -> None:
    assert report_words.run_name("baseline", "off", "baseline", 1) == "Baseline #1"
    assert report_words.run_name("check", "off", "baseline", 1) == "A/A twin (baseline) #1"
    assert report_words.run_name("bf16", "off", "bf16", 2) == "bf16 #2"


def test_the_title_names_the_arms_and_the_model_and_history_says_the_same(tmp_path: Path) -> None:
    report = comparison_report(arms=("bf16",))
    assert report_words.comparison_title(report) == "XLA and bf16 vs baseline on tiny"
    plain = comparison_report()
    assert report_words.comparison_title(plain) == "XLA vs baseline on tiny"
    history.save(plain, tmp_path / "one")
    [item] = history.list_items(tmp_path)
    assert (item.dataset_name, item.model_label) == ("tiny", "")
    assert report_words.history_title(item) == report_words.comparison_title(plain)
    # A comparison of other arms names them in History too, not "XLA vs baseline" (issue 31).
    history.save(report, tmp_path / "two")
    [two] = [i for i in history.list_items(tmp_path) if i.folder.name == "two"]
    assert report_words.history_title(two) == "XLA and bf16 vs baseline on tiny"


def test_a_comparison_cut_short_says_what_it_can_still_claim() -> None:
    """From the runs' statuses: a stop or a close during training leaves the speed figures
    standing and no accuracy verdict (issue 31: it read as a finished one)."""
    import io

    from rich.console import Console

    from xlagui.cli.console import print_summary
    from xlagui.core.protocol.identity import RunStatus
    from xlagui.present.markdown import report_markdown

    report = comparison_report(training=True)
    assert report_words.stopped_words(report) == ""
    epochs = report.config.epochs
    report.runs[-1].status, report.runs[-1].events = RunStatus.CANCELLED, []
    done = epochs * (len(report.runs) - 1)
    assert report_words.stopped_words(report) == (
        f"Training stopped after {done} of {epochs * len(report.runs)} epochs: the speed "
        "figures stand, the accuracy verdict is not earned.")
    report.runs[-1].status = RunStatus.INTERRUPTED
    said = report_words.stopped_words(report)
    assert said.startswith("Training cut short when xlagui closed after ")
    assert f"**{said}**" in report_markdown(report)
    out = io.StringIO()
    print_summary(Console(file=out, width=400, color_system=None), report)
    assert said in out.getvalue()


def test_the_settings_line_of_a_speed_only_comparison_says_no_epochs() -> None:
    quick = comparison_report()
    assert quick.config.quick
    assert report_words.settings_words(quick) == (
        "speed only: 120 s budget, 8 pairs, batch 8, 48 px, augmentation on, seed 0")
    trained = comparison_report(training=True)
    assert report_words.settings_words(trained).startswith(f"{trained.config.epochs} epochs, ")


def test_the_reports_machine_is_its_cpu_as_history_names_it() -> None:
    """The Environment's machine row names the CPU (as History does), the computer's name
    after it; a record without a CPU still says its name."""
    report = comparison_report()
    report.environment.update(hostname="vm", platform="Linux-6.18", cpu_count=2,
                              cpu="AMD EPYC 7B13 64-Core Processor")
    rows = dict(report_words.environment_words(report))
    assert rows["Machine"] == "AMD EPYC 7B13, Linux-6.18, 2 CPUs (computer: vm)"
    report.environment.pop("cpu")
    assert dict(report_words.environment_words(report))["Machine"] == "vm, Linux-6.18, 2 CPUs"
