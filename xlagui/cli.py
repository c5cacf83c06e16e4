"""`xlagui`: the desktop app with no arguments (or a folder), headless commands otherwise.

    xlagui [DIR | --demo]                open the window (DIR or the demo set loaded)
    xlagui scan DIR [--json]             what is in a dataset folder, and what is wrong with it
    xlagui compare [DIR | --demo] ...    baseline vs XLA, headless, with a table, CSV/JSON/Markdown
    xlagui demo-data DIR                 write the demo elephant set to DIR
    xlagui inspect FOLDER [--json]       what XLA did in a comparison's (or one run's) XLA runs
    xlagui models                        the built-in models (compare --model NAME|FILE)
    xlagui hosts HOST                    what an SSH host has for a comparison (compare --host)

Nothing here imports TensorFlow or Qt at module level: training runs in worker processes, and
the GUI is imported only when the window is asked for.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from xlagui import __version__
from xlagui.core.measure.transports.base import MachineError as RemoteError  # shim (lane W)
from xlagui.core.measure.transports.base import Target as SshTarget  # shim (lane W)
from xlagui.core.protocol.config import (
    BUILTIN_MODELS,
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    ConfigError,
    RunConfig,
    XlaMode,
    check_batch_fits,
    parse_model,
)

if TYPE_CHECKING:  # imported where used: the command line starts without them
    from rich.console import Console

    from xlagui.core.data.exclusions import Exclusions
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.measure.transports.ssh.transport import RemoteHost  # shim (lane W)
    from xlagui.core.measure.worker_process import Transport
    from xlagui.core.protocol.events import ModelEvent
    from xlagui.core.protocol.task import TaskState
    from xlagui.core.results.report import ComparisonReport

COMMANDS = ("scan", "compare", "demo-data", "inspect", "models", "hosts", "gui")
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="xlagui",
        description="Does XLA make my TensorFlow model train faster, by how much, and at what "
        "cost? Run with no command to open the desktop app.",
    )
    p.add_argument("--version", action="version", version=f"xlagui {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    g = sub.add_parser("gui", help="open the desktop app (the default)")
    g.add_argument("dataset", nargs="?", help="a dataset folder to open")
    g.add_argument("--demo", action="store_true", help="open with the demo dataset loaded")

    s = sub.add_parser("scan", help="scan a dataset folder and report what is in it")
    s.add_argument("dataset", help="the dataset folder")
    s.add_argument("--json", action="store_true", help="print the scan as JSON")
    s.add_argument(
        "--holdout",
        type=int,
        default=DEFAULTS["holdout_percent"],
        help="percent held out for validation when there is no test folder (20)",
    )
    s.add_argument("--seed", type=int, default=DEFAULTS["seed"])

    c = _compare_parser(sub)
    _measure_arguments(c)
    _model_and_output_arguments(c)

    i = sub.add_parser(
        "inspect",
        help="what XLA did: the compiled modules, fusions by kind, convolutions and dots, "
        "the largest fusions",
    )
    i.add_argument("folder", type=Path, help="a comparison folder or one run's folder")
    i.add_argument("--top", type=int, default=10, help="largest fusions shown (default 10)")
    i.add_argument("--json", action="store_true", help="print the figures as JSON")

    m = sub.add_parser(
        "models", help="the built-in models, with their parameter count (builds each once)"
    )
    m.add_argument("--image-size", type=int, default=DEFAULTS["image_size"])
    m.add_argument("--classes", type=int, default=2, help="class count (default 2)")

    h = sub.add_parser(
        "hosts",
        help="the preflight of an SSH host: versions, devices, CPU, free disk (compare --host)",
    )
    _host_arguments(h, required=True)
    h.add_argument("--json", action="store_true", help="print what was found as JSON")

    d = sub.add_parser("demo-data", help="write the demo elephant dataset to a folder")
    d.add_argument("dest", type=Path)
    d.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    return p


def _compare_parser(sub: Any) -> argparse.ArgumentParser:
    """`xlagui compare`: the dataset and the training settings."""
    # No --tensorboard: every training run writes its TensorBoard scalars to OUT/tensorboard.
    # They are written once per epoch after its time was taken and weigh a few KB, so being on
    # costs no measured figure anything (core/worker/tensorboard.py); a flag would only be
    # forgotten.
    c: argparse.ArgumentParser = sub.add_parser(
        "compare", help="train with and without XLA and compare, headless"
    )
    c.add_argument("dataset", nargs="?", help="the dataset folder (default: the demo set)")
    c.add_argument("--demo", action="store_true", help="use the built-in demo dataset")
    c.add_argument("--epochs", type=int, default=DEFAULTS["epochs"])
    c.add_argument("--batch", type=int, default=DEFAULTS["batch_size"], help="batch size")
    c.add_argument("--image-size", type=int, default=DEFAULTS["image_size"])
    c.add_argument("--device", default=DEFAULTS["device"], help="cpu, gpu, gpu:N or all")
    c.add_argument(
        "--xla",
        default=DEFAULTS["xla"],
        choices=[m.value for m in XlaMode if m.asks_for_xla],
        help="how the XLA side turns XLA on ("
        + "; ".join(f"{m.value}: {m.facts.how}" for m in XlaMode if m.asks_for_xla)
        + ")",
    )
    c.add_argument("--repeats", type=int, default=DEFAULTS["repeats"])
    c.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    c.add_argument("--holdout", type=int, default=DEFAULTS["holdout_percent"])
    c.add_argument("--no-augment", action="store_true", help="train without augmentation")
    c.add_argument("--out", type=Path, help="output folder (default: ./xlagui-<date-time>)")
    c.add_argument("--png", action="store_true", help="also render the PNG report (offscreen Qt)")
    c.add_argument("--only", choices=["baseline", "xla"], help="run one side only")
    return c


def _measure_arguments(c: argparse.ArgumentParser) -> None:
    """`compare`'s speed measurement: speed only, the A/A check, budget, precision, arms,
    files left out."""
    c.add_argument(
        "--quick",
        action="store_true",
        help="measure speed only (interleaved), without the training runs",
    )
    c.add_argument(
        "--check",
        action="store_true",
        help="also measure the baseline against an identical second baseline worker, "
        "interleaved like an arm (an A/A check of the instrument: its ratio should be 1.00)",
    )
    c.add_argument(
        "--budget",
        type=int,
        default=None,
        help=f"seconds of interleaved measuring at most (default {DEFAULTS['budget_seconds']}, "
        f"plus {EXTRA_ARM_BUDGET_SECONDS} for every arm measured besides the XLA side)",
    )
    c.add_argument(
        "--target",
        type=float,
        default=DEFAULTS["target_percent"],
        help="stop measuring once the 95%% interval is within ± this percent (default %(default)s)",
    )
    c.add_argument(
        "--arms",
        metavar="ARMS",
        default="",
        help="also measure these arms against the baseline, comma-separated: jit, autocluster, "
        "bf16 (mixed_bfloat16), fp16 (mixed_float16), or one XLA mode and one precision joined "
        "with + (jit+bf16); the XLA side (--xla) is always measured",
    )
    c.add_argument(
        "--exclude-problems",
        metavar="KINDS",
        default="",
        help="leave out the files of these scan problems, comma-separated: conflict (the same "
        "image in several classes: every copy), leakage (in training and test data: the test "
        "copy), duplicate (copies within a class: all but one); the folder is not changed",
    )


def _model_and_output_arguments(c: argparse.ArgumentParser) -> None:
    """`compare`'s model, what it prints, and where its workers run."""
    c.add_argument(
        "--model",
        metavar="MODEL",
        default="cnn",
        help=f"the model trained: {', '.join(BUILTIN_MODELS)} (`xlagui models` says what each "
        "is), a saved PATH.keras, or a PATH.py defining build_model(input_shape, num_classes) "
        "(default: cnn, the article's)",
    )
    c.add_argument(
        "--new-head",
        action="store_true",
        help="a .keras model whose output does not fit the class count: keep its body, "
        "replace its last layer",
    )
    c.add_argument(
        "--events",
        action="store_true",
        help="print every event as a JSON line on stdout instead of progress bars",
    )
    c.add_argument(
        "--markdown",
        action="store_true",
        help="print the comparison as GitHub-flavoured Markdown tables on stdout when it ends, "
        "to paste into an issue or a pull request (the progress and summary go to stderr); "
        "it is written to OUT/comparison.md either way",
    )
    _host_arguments(c, required=False)
    c.add_argument(
        "--remote-data",
        metavar="PATH",
        default="",
        help="with --host: the dataset folder as it already is on the host (same files, same "
        "relative paths), instead of copying it into the host's cache",
    )


def _host_arguments(p: argparse.ArgumentParser, *, required: bool) -> None:
    if required:
        p.add_argument("host", help="user@host, or a Host alias of your ssh configuration")
    else:
        p.add_argument(
            "--host",
            metavar="HOST",
            default="",
            help="run every worker on this SSH host (user@host or an alias of ~/.ssh/config); "
            "both sides are measured there",
        )
    p.add_argument(
        "--remote-python",
        metavar="PY",
        default="python3",
        help="the host's Python with TensorFlow and this xlagui (default python3)",
    )
    p.add_argument(
        "--ssh-config", metavar="FILE", default="", help="an ssh configuration file (ssh -F)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_in = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        # A file or folder name that is not valid UTF-8 must print, not crash the command.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    if args_in[:2] == ["-m", "xlagui.core.worker.child"]:
        # A frozen bundle has no `python -m`: its executable is this program, so the runner's
        # `[sys.executable, "-m", "xlagui.core.worker.child", SPEC]` arrives here.
        from xlagui.core.worker.child import entry

        entry(args_in[2:])
    # `xlagui`, `xlagui DIR` and `xlagui --demo` open the window.
    if not args_in or (
        args_in[0] not in COMMANDS and args_in[0] not in ("-h", "--help", "--version")
    ):
        args_in = ["gui", *args_in]
    args = _parser().parse_args(args_in)
    try:
        if args.command == "scan":
            return cmd_scan(args)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "demo-data":
            return cmd_demo_data(args)
        if args.command == "inspect":
            return cmd_inspect(args)
        if args.command == "models":
            return cmd_models(args)
        if args.command == "hosts":
            return cmd_hosts(args)
        return cmd_gui(args)
    except ConfigError as exc:
        _console(stderr=True).print(f"[red]error:[/red] {exc}", soft_wrap=True)
        return EXIT_USAGE
    except RemoteError as exc:
        from xlagui.present.hosts import error_text

        _console(stderr=True).print(f"[red]error:[/red] {error_text(exc)}", soft_wrap=True)
        return EXIT_USAGE


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    # Rich assumes 80 columns when it is not writing to a terminal; a CI log is wider.
    width = None if stream.isatty() else 120
    return Console(stderr=stderr, highlight=False, width=width)


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from xlagui.ui.app import run_app
    except ImportError as exc:  # no usable Qt: say so instead of a traceback
        raise ConfigError(f"the window cannot open: {exc}") from None

    return run_app(dataset=args.dataset, demo=args.demo)


def _scan(path: str, holdout: int, seed: int) -> DatasetScan:
    from xlagui.core.data.scan import DatasetError, scan_dataset

    try:
        return scan_dataset(path, holdout_percent=holdout, seed=seed)
    except DatasetError as exc:
        raise ConfigError(str(exc)) from None


def cmd_scan(args: argparse.Namespace) -> int:
    RunConfig(holdout_percent=args.holdout, seed=args.seed)  # range checks
    scan = _scan(args.dataset, args.holdout, args.seed)
    if args.json:
        print(json.dumps(scan.to_dict(), indent=1))
    else:
        print(scan.summary_text())
    return EXIT_OK if scan.ok else EXIT_FAILED


def cmd_demo_data(args: argparse.Namespace) -> int:
    from xlagui.core.data.demo import generate_demo_dataset

    try:
        path = generate_demo_dataset(args.dest, seed=args.seed)
    except FileExistsError as exc:
        raise ConfigError(str(exc)) from None
    _console().print(f"demo dataset written to {path}")
    return EXIT_OK


def cmd_inspect(args: argparse.Namespace) -> int:
    from xlagui.core.results.dumps import InspectError, inspect_folder

    try:
        runs = inspect_folder(args.folder)
    except (InspectError, OSError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if args.json:
        print(json.dumps({run_id: r.to_dict() for run_id, r in runs}, indent=1))
        return EXIT_OK if runs else EXIT_FAILED
    from xlagui.console import print_xla_did

    print_xla_did(_console(), runs, top=args.top)
    return EXIT_OK if runs else EXIT_FAILED


def _install_stop_signals(
    state: TaskState, console: Console, reason: str
) -> Callable[[], None]:
    """Ctrl+C (or SIGTERM) stops the comparison as closing the window does: the run in progress
    is saved as interrupted with its finished epochs, the runs not started as not run. A second
    one aborts at once. Returns a function that puts the previous handlers back."""

    def handler(signum: int, frame: FrameType | None) -> None:
        if state.is_interruption_requested():
            raise KeyboardInterrupt
        console.print("[yellow]stopping… (Ctrl+C again to abort at once)[/yellow]")
        state.request_interruption(reason)

    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, handler) for signum in signals}

    def restore() -> None:
        for signum, before in previous.items():
            signal.signal(signum, before)

    return restore


def compare_config(args: argparse.Namespace) -> RunConfig:
    """The comparison's settings from `compare`'s arguments; without `--budget`, the default
    budget for the arms asked for (`xlagui.core.protocol.config.default_budget_seconds`)."""
    budget = args.budget
    if budget is None:
        from xlagui.core.protocol.arms import default_budget, parse_arms

        budget = default_budget(XlaMode(args.xla), parse_arms([args.arms]), check=args.check)
    return RunConfig(
        epochs=args.epochs,
        batch_size=args.batch,
        image_size=args.image_size,
        device=args.device,
        xla=args.xla,
        repeats=args.repeats,
        seed=args.seed,
        holdout_percent=args.holdout,
        augment=not args.no_augment,
        budget_seconds=budget,
        target_percent=args.target,
        quick=args.quick,
        arms=(args.arms,) if args.arms else (),
        check=args.check,
        model=parse_model(args.model, args.new_head),
    )


def _refuse_conflicting_flags(args: argparse.Namespace) -> None:
    if args.quick and args.only:
        raise ConfigError("--quick measures both sides against each other; drop --only")
    if args.markdown and args.events:
        raise ConfigError("--markdown and --events both print on stdout: choose one")


def _output_folder(args: argparse.Namespace, root: str | Path) -> Path:
    out = args.out or Path.cwd() / f"xlagui-{_dt.datetime.now():%Y%m%d-%H%M%S}"
    out = out.resolve()
    if _inside(out, Path(root).resolve()):
        raise ConfigError("the output folder must not be inside the dataset folder")
    return out


def _refuse_missing_device(host: RemoteHost, device: str) -> None:
    if not host.info.has_device(device):
        devices = ", ".join(d.id for d in host.info.devices)
        raise ConfigError(f"{host.target.host} has no device {device} "
                          f"(TensorFlow sees: {devices})")


def cmd_compare(args: argparse.Namespace) -> int:
    # One try/finally holds the host connection, the stop signals and the machine's transport
    # across the measurement, the inspection and the summary; the steps around it are helpers.
    from xlagui.console import print_summary
    from xlagui.core.compare import CLOSING, SaveError, check_writable, new_report
    from xlagui.core.protocol.task import Cancelled, TaskState

    config = compare_config(args)
    target = _target(args)
    _refuse_conflicting_flags(args)
    console = _console(stderr=args.events or args.markdown)
    demo = args.demo or args.dataset is None
    root = _dataset_root(args, demo, console)
    scan = _scan(root, config.holdout_percent, config.seed)
    if not _say_scan(scan, console):
        return EXIT_USAGE
    exclusions = _exclusions(args.exclude_problems, scan, console)
    trained = exclusions.apply(scan)
    check_batch_fits(config.batch_size, len(trained.files_for("train")))
    model_check = _check_model(config, len(scan.class_names), console)
    out = _output_folder(args, root)
    render_report_png = _png_renderer(args)
    # The preflight before the output folder is made: a host that cannot measure leaves
    # nothing behind.
    host = _connect(target, console) if target is not None else None
    summarised = skipped = False
    try:
        if host is not None:
            _refuse_missing_device(host, config.device)
        try:
            check_writable(out)
        except SaveError as exc:
            raise ConfigError(str(exc)) from None
        report = new_report(
            scan,
            config,
            demo=demo,
            exclusions=exclusions,
            model_check=model_check,
            environment=host.environment() if host is not None else None,
        )
        config = report.config  # with the model's parameter count (and a file's image size)
        state = TaskState()
        _say_comparing(report, trained, console)
        only = {args.only} if args.only else None
        restore_signals = _install_stop_signals(state, console, CLOSING)
        try:
            with _on_machine(host, scan, config, out, state, console) as transport:
                _run(args, report, scan, out, state, only, console, transport)
                if only is None and config.quick and not state.is_interruption_requested():
                    # The answer first; then, for "What XLA did", the compile the measuring
                    # workers did not dump.
                    print_summary(console, report)
                    summarised = True
                    _inspect(report, scan, out, state, console, transport)
                    skipped = state.is_interruption_requested()  # Ctrl+C skipped only that
        except SaveError as exc:
            if not summarised:
                print_summary(console, report)
            console.print(f"[red]error:[/red] {exc}", soft_wrap=True)
            return EXIT_FAILED
        except Cancelled:
            console.print("[yellow]stopped while copying the dataset; nothing measured[/yellow]")
            return EXIT_CANCELLED
        finally:
            restore_signals()
    finally:
        if host is not None:
            host.close()
    if not summarised:
        print_summary(console, report)
    if not _write_reports(args, report, out, render_report_png, console):
        return EXIT_FAILED
    if state.is_interruption_requested() and not skipped:
        return EXIT_CANCELLED
    failed = [r for r in [*report.measure_runs, *report.runs] if r.status == "error"]
    c = report.comparison
    return EXIT_FAILED if failed or (only is None and c is not None and not c.valid) else EXIT_OK


def _say_scan(scan: DatasetScan, console: Console) -> bool:
    """The scan's problems, one line each; False when the dataset cannot be trained on."""
    for p in scan.problems:
        colour = {"error": "red", "warning": "yellow"}.get(p.severity, "dim")
        console.print(f"[{colour}]{p.severity}:[/{colour}] {p.message}")
    if not scan.ok:
        console.print("[red]The dataset cannot be trained on; see the errors above.[/red]")
    return scan.ok


def _say_comparing(report: ComparisonReport, trained: DatasetScan, console: Console) -> None:
    """What is compared, on what, with which settings and model."""
    config = report.config
    console.print(
        f"Comparing on [bold]{report.dataset['name']}[/bold] "
        f"({len(trained.files_for('train'))} training images, "
        f"{len(trained.files_for('test'))} validation) — {config.epochs} epochs, "
        f"batch {config.batch_size}, {config.image_size} px, {config.device}, XLA mode "
        f"{config.xla.value}, model {config.model.label}"
    )
    _say_model(report, console)


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
    if not demo:
        return str(args.dataset)
    from xlagui.core.data.demo import ensure_demo_dataset

    with console.status("preparing the demo dataset…"):
        return str(ensure_demo_dataset(seed=0))


def _write_reports(
    args: argparse.Namespace,
    report: ComparisonReport,
    out: Path,
    render_report_png: Any,
    console: Console,
) -> bool:
    """The PNG (with --png) and comparison.md beside the CSV and JSON, the Markdown on stdout
    with --markdown; False, said, when one could not be written."""
    if render_report_png is not None:
        try:
            png = render_report_png(report, out / "comparison.png")
        except OSError as exc:
            console.print(f"[red]error:[/red] could not write the PNG: {exc}", soft_wrap=True)
            return False
        console.print(f"PNG report: {png}")
    try:
        markdown = _write_markdown(report, out / "comparison.md")
    except OSError as exc:
        console.print(f"[red]error:[/red] could not write the Markdown: {exc}", soft_wrap=True)
        return False
    console.print(
        f"Written: {out / 'comparison.csv'}, {out / 'comparison.json'}, {out / 'comparison.md'}"
    )
    if args.markdown:
        sys.stdout.write(markdown)
        sys.stdout.flush()
    return True


def _inspect(
    report: ComparisonReport,
    scan: DatasetScan,
    out: Path,
    state: TaskState,
    console: Console,
    transport: Transport,
) -> None:
    """A speed-only comparison's inspection compile (`compare.inspect_after_measurement`), on
    the machine that measured it."""
    from xlagui.core.compare import inspect_after_measurement

    xla_arms = [r for r in report.measure_runs if r.arm.xla is not XlaMode.OFF]
    if not xla_arms:
        return
    with console.status(
        f"compiling {len(xla_arms)} XLA arm{'s' if len(xla_arms) > 1 else ''} once more with "
        "XLA's dump on, for “What XLA did” (xlagui inspect; Ctrl+C skips it)…"
    ):
        inspect_after_measurement(report, scan, out, state, transport=transport)
    failed = [r.run_id for r in report.inspect_runs if r.status == "error"]
    if failed:
        console.print(f"[yellow]note:[/yellow] the inspection compile of {', '.join(failed)} "
                      "failed; the speed figures above stand.", soft_wrap=True)


def _write_markdown(report: ComparisonReport, path: Path) -> str:
    """The comparison as Markdown (`xlagui.present.markdown`), written atomically to `path`
    beside comparison.csv and comparison.json; the text written."""
    from xlagui.core.files.atomic import atomic_write_text
    from xlagui.present.markdown import report_markdown

    text = report_markdown(report)
    atomic_write_text(path, text)
    return text


def _connect(target: SshTarget, console: Console) -> RemoteHost:
    """Log in to the host and run its preflight (a `RemoteError` ends the command, status 2)."""
    from xlagui.core.measure.transports.ssh.transport import RemoteHost  # shim (lane W)
    from xlagui.present.hosts import host_line

    with console.status(f"connecting to {target.host} and asking what it has…"):
        host = RemoteHost.connect(target)
    console.print(host_line(host.info), soft_wrap=True)
    return host


@contextlib.contextmanager
def _on_machine(
    host: RemoteHost | None,
    scan: DatasetScan,
    config: RunConfig,
    out: Path,
    state: TaskState,
    console: Console,
) -> Iterator[Transport]:
    """Where the workers run: this computer, or `host` with the dataset there (copied with a
    progress bar, or found in its cache); the comparison's folder on the host goes after."""
    from xlagui.core.measure.worker_process import LOCAL

    if host is None:
        yield LOCAL
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    from xlagui.present.hosts import dataset_line

    with Progress(
        TextColumn(f"copying the dataset to {host.target.host}"),
        BarColumn(),
        DownloadColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task("copy", total=None)
        transport = host.prepare(
            scan,
            config,
            out,
            state,
            on_progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    console.print(dataset_line(transport.dataset, host.target.host), soft_wrap=True)
    try:
        yield transport
    finally:
        transport.close()


def _check_model(config: RunConfig, num_classes: int, console: Console) -> ModelEvent | None:
    """Any model but the article's CNN is built once in a worker process before anything is
    measured (`xlagui.core.model.check`): a model file that cannot be trained is refused here,
    exit status 2, with its file and line. None for the article's CNN (known from its shapes)."""
    from xlagui.core.measure.model_check import check_model
    from xlagui.core.model.check import ModelCheckSpec

    if config.model.is_article_cnn:
        return None
    spec = ModelCheckSpec(
        model=config.model,
        image_size=config.image_size,
        num_classes=num_classes,
        batch_size=config.batch_size,
        seed=config.seed,
    )
    with console.status(f"building {config.model.label} once to check it…"):
        check = check_model(spec)  # ModelRefused is a ConfigError: exit status 2
    if check.image_size != config.image_size:
        console.print(
            f"{config.model.label} takes {check.image_size}x{check.image_size} images: "
            f"the image size is {check.image_size}, not {config.image_size}"
        )
    return check


def _say_model(report: ComparisonReport, console: Console) -> None:
    """The model line, and a warning when a step may not fit in the free memory."""
    from xlagui.core.model.check import article_cnn_memory, memory_guard
    from xlagui.present.models import memory_warning, model_line

    config, check = report.config, report.model_check
    console.print(model_line(config, check), soft_wrap=True)
    if check is not None:
        per_worker = check.memory_bytes
    else:
        classes = len(report.dataset.get("class_names") or []) or 2
        per_worker = sum(article_cnn_memory(config.image_size, classes, config.batch_size).values())
    if per_worker:
        warning = memory_warning(memory_guard(per_worker, len(report.measure_runs)), config)
        if warning:
            console.print(f"[yellow]warning:[/yellow] {warning}", soft_wrap=True)


def _target(args: argparse.Namespace) -> SshTarget | None:
    """The SSH host of `--host` (None: this computer)."""
    host = args.host
    remote_data = getattr(args, "remote_data", "")
    if not host:
        if remote_data:
            raise ConfigError("--remote-data is a folder on the --host; give the host too")
        return None
    try:
        return SshTarget(
            host=host,
            python=args.remote_python,
            ssh_config=str(Path(args.ssh_config).expanduser()) if args.ssh_config else "",
            remote_data=remote_data,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def cmd_hosts(args: argparse.Namespace) -> int:
    """`xlagui hosts HOST`: the preflight alone."""
    from rich.table import Table

    from xlagui.core.measure import transports
    from xlagui.core.protocol.jsoncodec import plain
    from xlagui.present.hosts import host_rows

    target = _target(args)
    assert target is not None
    console = _console()
    with console.status(f"asking {target.host} what it has…"):
        info = transports.check(target)
    if args.json:
        print(json.dumps(plain(info), indent=1))
        return EXIT_OK
    table = Table(title=f"{target.host} can measure", title_justify="left", show_header=False)
    table.add_column("what")
    table.add_column("value")
    for row in host_rows(info):
        table.add_row(*row)
    console.print(table)
    return EXIT_OK


def cmd_models(args: argparse.Namespace) -> int:
    """`xlagui models`: every built-in model with its parameter count, each built once in one
    worker process."""
    from rich.table import Table

    from xlagui.core.measure.model_check import check_models
    from xlagui.core.model.check import ModelCheckSpec
    from xlagui.core.protocol.config import ModelChoice, check_image_size
    from xlagui.present.models import models_rows

    if args.classes < 2:
        raise ConfigError(f"a classifier needs at least 2 classes, got {args.classes}")
    specs = [
        ModelCheckSpec(
            model=ModelChoice(name=name),
            image_size=check_image_size(args.image_size, ModelChoice(name=name)),
            num_classes=args.classes,
            count_flops=False,
        )
        for name in BUILTIN_MODELS
    ]
    console = _console()
    with console.status(f"building the {len(specs)} built-in models once…"):
        checks = check_models(specs)
    table = Table(
        title=f"Built-in models (--model NAME), parameters at {args.image_size} px for "
        f"{args.classes} classes",
        title_justify="left",
    )
    for column in ("name", "parameters", "what it is"):
        table.add_column(column, justify="right" if column == "parameters" else "left")
    for row in models_rows(checks):
        table.add_row(*row)
    console.print(table)
    console.print("Or your own: --model PATH.keras (a saved model) or --model PATH.py "
                  "(a file defining build_model(input_shape, num_classes)).")
    return EXIT_OK


def _exclusions(text: str, scan: DatasetScan, console: Console) -> Exclusions:
    """The `--exclude-problems` list for `scan`, said on the console; ConfigError if the
    kinds are unknown or would leave nothing to train on."""
    from xlagui.core.data.exclusions import Exclusions, describe, empty_after, parse_kinds

    try:
        kinds = parse_kinds(text)
    except ValueError as exc:
        raise ConfigError(f"--exclude-problems: {exc}") from None
    exclusions = Exclusions.of_kinds(scan, kinds)
    if not kinds:
        return exclusions
    left_out = exclusions.files(scan)
    why = empty_after(exclusions.apply(scan))
    if why:
        raise ConfigError(f"--exclude-problems: {why}; exclude fewer kinds of problem")
    console.print(
        f"{describe(len(left_out))} ({len(exclusions)} problem"
        f"{'s' if len(exclusions) != 1 else ''}); the dataset folder is not changed"
    )
    return exclusions


def _run(
    args: argparse.Namespace,
    report: ComparisonReport,
    scan: DatasetScan,
    out: Path,
    state: TaskState,
    only: set[str] | None,
    console: Console,
    transport: Transport,
) -> None:
    from xlagui.console import MeasureProgress, print_run_failure
    from xlagui.core.compare import run_comparison, run_measurement
    from xlagui.present.markdown import summary_markdown

    if only is None:
        if args.events:
            run_measurement(
                report,
                scan,
                out,
                state,
                on_event=lambda entry, ev: print(
                    json.dumps({"run_id": entry.run_id, **ev.to_dict()}), flush=True
                ),
                transport=transport,
            )
        else:
            with MeasureProgress(console, report) as measuring:
                run_measurement(
                    report,
                    scan,
                    out,
                    state,
                    on_event=measuring.on_event,
                    on_round=measuring.on_round,
                    transport=transport,
                )
        if report.config.quick or state.is_interruption_requested():
            return
    if args.events:
        hooks: dict[str, Any] = {
            "on_event": lambda entry, ev: print(
                json.dumps({"run_id": entry.run_id, **ev.to_dict()}), flush=True
            ),
            "on_run_done": lambda entry: print_run_failure(console, entry),
        }
        run_comparison(report, scan, out, state, only=only, transport=transport,
                       tensorboard_text=summary_markdown, **hooks)
        return
    from xlagui.console import RichProgress

    with RichProgress(console, report) as progress:
        run_comparison(
            report,
            scan,
            out,
            state,
            only=only,
            on_event=progress.on_event,
            on_run_start=progress.on_run_start,
            on_run_done=progress.on_run_done,
            transport=transport,
            tensorboard_text=summary_markdown,
        )


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False
