"""`xlagui compare`: baseline vs XLA, headless, with a table, CSV/JSON/Markdown.

The command turns its arguments into a `ComparisonRequest`, hands it to the one comparison
workflow (`xlagui.core.compare.run`, the window's too) with a `ConsoleWatcher`, then prints the
summary, writes the Markdown (and the PNG) and says how it ended in its exit status.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlagui.cli.common import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from xlagui.cli.common import console as _console
from xlagui.cli.common import scan_folder as _scan
from xlagui.cli.common import target as _target
from xlagui.cli.compare_watch import ConsoleWatcher
from xlagui.cli.console import print_summary
from xlagui.cli.inspect import print_why
from xlagui.core.compare import ComparisonRequest, SaveError, run
from xlagui.core.compare.workflow import MARKDOWN_FILE
from xlagui.core.files import paths
from xlagui.core.model.sources import parse_model
from xlagui.core.protocol.arms import check_backends_here
from xlagui.core.protocol.config import (
    SETTINGS,
    ConfigError,
    RunConfig,
    XlaMode,
)
from xlagui.core.protocol.identity import Role, RunStatus, Severity
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.present.csv_notes import note_words
from xlagui.present.markdown import ATTRIBUTION_ROWS, folder_markdown, summary_markdown
from xlagui.present.scan_problems import problem_text
from xlagui.present.verdicts import recommendation_sentence
from xlagui.present.why_data import why_of

if TYPE_CHECKING:
    from rich.console import Console

    from xlagui.core.data.exclusions import Exclusions
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.results.report import ComparisonReport


def cmd_compare(args: argparse.Namespace) -> int:
    config = compare_config(args)
    target = _target(args)
    if target is None:  # before the dataset is drawn or scanned: the front door says it too
        check_backends_here(config, config.arms)
    _refuse_conflicting_flags(args)
    console = _console(stderr=args.events or args.markdown or args.json)
    demo = args.demo or args.dataset is None
    root = _dataset_root(args, demo, console)
    scan = _scan(root, config.holdout_percent, config.seed)
    if not _say_scan(scan, console):
        return EXIT_USAGE
    exclusions = _exclusions(args.exclude_problems, scan, console)
    trained = exclusions.apply(scan)  # what the progress counts; the workflow checks it
    out = _output_folder(args, root)
    render_report_png = _png_renderer(args)
    request = ComparisonRequest(
        scan=scan,
        config=config,
        out_dir=out,
        demo=demo,
        exclusions=exclusions,
        only=frozenset({Role(args.only)}) if args.only else None,
        target=target,
        summary_text=summary_markdown,
        report_text=folder_markdown,
        csv_notes=note_words,
        wait_quiet_seconds=args.wait_quiet,
        history=paths.history_dir(),
    )
    state = TaskState()
    watcher = ConsoleWatcher(console, request, state, trained, events=args.events)
    try:
        report = run(request, watcher, state)
    except SaveError as exc:
        if watcher.report is not None and not watcher.summarised:
            print_summary(console, watcher.report)
        console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return EXIT_FAILED
    except Cancelled:
        console.print("[yellow]stopped while copying the dataset; nothing measured[/yellow]")
        return EXIT_CANCELLED
    finally:
        watcher.close()
    return _ended(args, report, watcher, render_report_png, console)


def _ended(
    args: argparse.Namespace,
    report: ComparisonReport,
    watcher: ConsoleWatcher,
    render_report_png: Any,
    console: Console,
) -> int:
    """The summary and the report files of a comparison that ran; its exit status: cancelled
    after a stop (not when Ctrl+C only skipped a speed-only comparison's inspection compile),
    failed when a run failed or the comparison is not valid."""
    if watcher.summarised:
        failed = [r.run_id for r in report.inspect_runs if r.status == RunStatus.ERROR]
        if failed:
            console.print(f"[yellow]note:[/yellow] the inspection compile of {', '.join(failed)} "
                          "failed; the speed figures above stand.", soft_wrap=True)
    else:
        print_summary(console, report)
    # After the answer, the why: the attribution's rows cut as in the Markdown.
    print_why(console, why_of(report, watcher.request.out_dir), limit=ATTRIBUTION_ROWS)
    c = report.comparison
    now = recommendation_sentence(c.recommendation if c is not None else None)
    if watcher.summarised and now and now != watcher.said_recommendation:
        # The why's parity is accuracy evidence the answer did not have yet.
        console.print(f"[bold]With the why:[/bold] {now}", soft_wrap=True)
    if not _write_reports(args, report, watcher.request.out_dir, render_report_png, console):
        return EXIT_FAILED
    stopped = watcher.state.is_interruption_requested()
    if stopped and not watcher.summarised:
        return EXIT_CANCELLED
    failed_runs = [r for r in [*report.measure_runs, *report.runs]
                   if r.status == RunStatus.ERROR]
    c = report.comparison
    only = watcher.request.only
    return EXIT_FAILED if failed_runs or (only is None and c is not None and not c.valid) \
        else EXIT_OK


def compare_config(args: argparse.Namespace) -> RunConfig:
    """The comparison's settings from `compare`'s arguments; without `--budget`, the default
    budget for the arms asked for (`xlagui.core.protocol.config.default_budget_seconds`)."""
    budget = args.budget_seconds
    if budget is None:
        from xlagui.core.protocol.arms import default_budget, parse_arms

        budget = default_budget(XlaMode(args.xla), parse_arms([args.arms]), check=args.check)
    # Each setting's option lands under the setting's name (`parser.add_settings`).
    values = {one.name: getattr(args, one.name) for one in SETTINGS if one.flag}
    return RunConfig(
        **(values | {"budget_seconds": budget}),
        arms=(args.arms,) if args.arms else (),
        model=parse_model(args.model, args.new_head),
    )


def _refuse_conflicting_flags(args: argparse.Namespace) -> None:
    if args.quick and args.only:
        raise ConfigError("--quick measures both sides against each other; drop --only")
    on_stdout = [flag for flag, on in (("--markdown", args.markdown), ("--json", args.json),
                                        ("--events", args.events)) if on]
    if len(on_stdout) > 1:
        flags = f"{', '.join(on_stdout[:-1])} and {on_stdout[-1]}"
        both = "both" if len(on_stdout) == 2 else "all"
        raise ConfigError(f"{flags} {both} print on stdout: choose one")


def _output_folder(args: argparse.Namespace, root: str | Path) -> Path:
    out = args.out or Path.cwd() / f"xlagui-{_dt.datetime.now():%Y%m%d-%H%M%S}"
    out = out.resolve()
    if _inside(out, Path(root).resolve()):
        raise ConfigError("the output folder must not be inside the dataset folder")
    return out


def _say_scan(scan: DatasetScan, console: Console) -> bool:
    """The scan's problems, one line each; False when the dataset cannot be trained on."""
    for p in scan.problems:
        colour = {Severity.ERROR: "red", Severity.WARNING: "yellow"}.get(p.severity, "dim")
        console.print(f"[{colour}]{p.severity}:[/{colour}] {problem_text(p)}")
    if not scan.ok:
        console.print("[red]The dataset cannot be trained on; see the errors above.[/red]")
    return scan.ok


def _png_renderer(args: argparse.Namespace) -> Any:
    """With --png, the PNG renderer, imported now: a missing Qt is said before training, not
    hours later. None without --png."""
    if not args.png:
        return None
    try:
        from xlagui.ui import report_png
    except ImportError as exc:
        raise ConfigError(f"--png needs a working Qt: {exc}") from None
    return report_png.render_report_png


def _dataset_root(args: argparse.Namespace, demo: bool, console: Console) -> str:
    """The dataset folder: the one given, or the demo set (drawn into the cache once)."""
    if args.demo and args.dataset:
        raise ConfigError("give either a dataset folder or --demo, not both")
    from xlagui.core.compare.inputs import dataset_folder

    if not demo:
        return str(dataset_folder(args.dataset)[0])
    with console.status("preparing the demo dataset…"):
        return str(dataset_folder(None)[0])


def _exclusions(text: str, scan: DatasetScan, console: Console) -> Exclusions:
    """The `--exclude-problems` list for `scan`, said on the console; ConfigError if the
    kinds are unknown or would leave nothing to train on."""
    from xlagui.core.compare.inputs import exclusions_of_kinds
    from xlagui.core.data.exclusions import parse_kinds
    from xlagui.present.exclusions import left_out as describe

    try:
        kinds = parse_kinds(text)
        exclusions = exclusions_of_kinds(scan, kinds)
    except ValueError as exc:  # ConfigError too: an unknown word, or nothing left to train on
        raise ConfigError(f"--exclude-problems: {exc}") from None
    if not kinds:
        return exclusions
    left_out = exclusions.files(scan)
    console.print(
        f"{describe(len(left_out))} ({len(exclusions)} problem"
        f"{'s' if len(exclusions) != 1 else ''}); the dataset folder is not changed"
    )
    return exclusions


def _write_reports(
    args: argparse.Namespace,
    report: ComparisonReport,
    out: Path,
    render_report_png: Any,
    console: Console,
) -> bool:
    """The PNG (with --png) beside the CSV, the JSON and the Markdown (the workflow wrote
    those), the Markdown on stdout with --markdown, the JSON with --json; False, said, when
    the PNG could not be written."""
    if render_report_png is not None:
        try:
            png = render_report_png(report, out / "comparison.png", why_of(report, out))
        except OSError as exc:
            console.print(f"[red]error:[/red] could not write the PNG: {exc}", soft_wrap=True)
            return False
        console.print(f"PNG report: {png}")
    markdown = out / MARKDOWN_FILE  # written by the workflow (`ComparisonRequest.report_text`)
    console.print(f"Written: {out / 'comparison.csv'}, {out / 'comparison.json'}, {markdown}")
    if args.markdown or args.json:
        printed = markdown if args.markdown else out / "comparison.json"
        sys.stdout.write(printed.read_text(encoding="utf-8"))
        sys.stdout.flush()
    return True


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False
