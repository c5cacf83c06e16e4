"""`xlagui`: the desktop app with no arguments (or a folder), headless commands otherwise.

    xlagui [DIR | --demo]                open the window (DIR or the demo set loaded)
    xlagui scan DIR [--json]             what is in a dataset folder, and what is wrong with it
    xlagui compare [DIR | --demo] ...    baseline vs XLA, headless, with a table, CSV/JSON/Markdown
    xlagui demo-data DIR                 write the demo elephant set to DIR
    xlagui inspect FOLDER [--json]       what XLA did in a comparison's (or one run's) XLA runs,
                                         and why: where the time goes, compiles, parity
    xlagui models                        the built-in models (compare --model NAME|FILE)
    xlagui hosts HOST                    what an SSH host has for a comparison (compare --host)
    xlagui sweep [DIR | --demo] ...      comparisons over a grid of settings: where XLA's verdict
                                         flips (sweep.json, sweep.csv, sweep.md; resumable)

This module holds `main` and the parser; each command is a module of its own (`scan`,
`compare`, `demo_data`, `inspect`, `models`, `hosts`, `sweep`, `gui`), imported when it is run.
Nothing here imports TensorFlow or Qt at module level: training runs in worker processes, and
the GUI is imported only when the window is asked for.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xlagui import __version__
from xlagui.cli.common import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from xlagui.cli.common import console as _console
from xlagui.cli.sweep_ray import add_ray_arguments
from xlagui.core.measure.transports import MachineError
from xlagui.core.protocol.config import (
    DEFAULTS,
    EXTRA_ARM_BUDGET_SECONDS,
    ConfigError,
    XlaMode,
)
from xlagui.core.protocol.identity import Role
from xlagui.present.levers import arms_words, mode_words
from xlagui.present.models import model_help

__all__ = ["EXIT_CANCELLED", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main"]

COMMANDS = ("scan", "compare", "demo-data", "inspect", "models", "hosts", "sweep", "gui")


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
        "the largest fusions; and why: where each step's time goes, every compile, parity",
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

    _sweep_parser(sub)

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
        + "; ".join(f"{m.value}: {mode_words(m).how}" for m in XlaMode if m.asks_for_xla)
        + ")",
    )
    c.add_argument("--repeats", type=int, default=DEFAULTS["repeats"])
    c.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    c.add_argument("--holdout", type=int, default=DEFAULTS["holdout_percent"])
    c.add_argument("--no-augment", action="store_true", help="train without augmentation")
    c.add_argument("--drop-remainder", action="store_true",
                   help="drop the last partial validation batch (XLA then compiles the "
                   "evaluation once, not again for that batch's size)")
    c.add_argument("--out", type=Path, help="output folder (default: ./xlagui-<date-time>)")
    c.add_argument("--png", action="store_true", help="also render the PNG report (offscreen Qt)")
    c.add_argument("--only", choices=[Role.BASELINE.value, Role.XLA.value],
                   help="run one side only")
    return c


def _sweep_parser(sub: Any) -> argparse.ArgumentParser:
    """`xlagui sweep`: each comma list an axis of the grid (`xlagui.core.sweep.plan`)."""
    w: argparse.ArgumentParser = sub.add_parser(
        "sweep", help="comparisons over a grid of settings (batch, image size, model, arms, "
        "host, runtime settings): where XLA's verdict flips; resumable")
    w.add_argument("dataset", nargs="?", help="the dataset folder (default: the demo set)")
    w.add_argument("--demo", action="store_true", help="use the built-in demo dataset")
    w.add_argument("--batch", metavar="N,N", default="", help="batch sizes (16,128)")
    w.add_argument("--image-size", metavar="PX,PX", default="", help="image sizes (64,150)")
    w.add_argument("--model", metavar="MODEL,MODEL", default="",
                   help="models, comma-separated: built-in names or files (cnn,mixer)")
    w.add_argument("--arms", metavar="ARMS", action="append", default=[],
                   help=f"the arms every cell measures, comma-separated: {arms_words()}; give "
                   "--arms more than once to sweep over arm lists (default: jit)")
    w.add_argument("--set", metavar="NAME=V,V", action="append", default=[],
                   help="a runtime setting every worker of a cell takes, swept over its values "
                   "(threads=1,2; onednn=on,off; spe=1,8); more than once for more settings")
    w.add_argument("--budget", type=int, default=None,
                   help="seconds for the whole sweep, each cell's measuring budget planned from "
                   "it (default: each cell the default budget of its arms)")
    w.add_argument("--out", type=Path, help="the sweep folder (default: ./xlagui-sweep-<date>); "
                   "the same folder again resumes it")
    w.add_argument("--json", action="store_true",
                   help="print sweep.json on stdout when it ends (progress on stderr)")
    w.add_argument("--device", default=DEFAULTS["device"], help="cpu, gpu, gpu:N or all")
    w.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    w.add_argument("--holdout", type=int, default=DEFAULTS["holdout_percent"])
    w.add_argument("--target", type=float, default=DEFAULTS["target_percent"],
                   help="stop a cell once its 95%% interval is within ± this percent")
    w.add_argument("--no-augment", action="store_true", help="train without augmentation")
    w.add_argument("--host", metavar="HOST,HOST", default="",
                   help="SSH hosts, comma-separated (local: this computer); each cell runs "
                   "wholly on one, and hosts are never compared with each other")
    w.add_argument("--remote-python", metavar="PY", default="python3",
                   help="the hosts' Python with TensorFlow and this xlagui (default python3)")
    w.add_argument("--ssh-config", metavar="FILE", default="", help="an ssh configuration file")
    w.add_argument("--remote-data", metavar="PATH", default="",
                   help="with --host or --ray: the dataset folder as it already is on the "
                   "hosts or the cluster's nodes")
    add_ray_arguments(w)
    return w


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
        "--no-explain",
        dest="explain",
        action="store_false",
        help="skip the why: the untimed profile of each arm (where each step's time goes) and "
        "its parity steps, after the speed answer (default: explained)",
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
        help=f"also measure these arms against the baseline, comma-separated: {arms_words()}; "
        "the XLA side (--xla) is always measured",
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
        help=model_help(),
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
    # `xlagui`, `xlagui DIR` and `xlagui --demo` open the window; a word that is neither a
    # command nor a folder is a mistyped command, never a dataset for the window.
    if not args_in or (
        args_in[0] not in COMMANDS and args_in[0] not in ("-h", "--help", "--version")
    ):
        unknown = _unknown_word(args_in[0]) if args_in else None
        if unknown is not None:
            _console(stderr=True).print(f"[red]error:[/red] {unknown}", soft_wrap=True)
            return EXIT_USAGE
        args_in = ["gui", *args_in]
    args = _parser().parse_args(args_in)
    try:
        return _run_command(args)
    except ConfigError as exc:
        from rich.markup import escape  # a message's brackets are text ("xlagui[ray]")

        _console(stderr=True).print(f"[red]error:[/red] {escape(str(exc))}", soft_wrap=True)
        return EXIT_USAGE
    except MachineError as exc:
        from xlagui.present.hosts import error_text

        _console(stderr=True).print(f"[red]error:[/red] {error_text(exc)}", soft_wrap=True)
        return EXIT_USAGE


def _unknown_word(word: str) -> str | None:
    """Why `word`, given where a command goes, is refused (None: an option, or a path that
    exists, which the window opens)."""
    if word.startswith("-") or Path(word).exists():
        return None
    from difflib import get_close_matches

    close = get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" if close else f"the commands are {', '.join(COMMANDS)}"
    return f"{word!r} is neither a command nor an existing folder: {hint}"


def _run_command(args: argparse.Namespace) -> int:
    """The command asked for; its module is imported only now, so that `xlagui` opens the
    window without what the headless commands need (and the reverse)."""
    command = args.command
    if command == "scan":
        from xlagui.cli.scan import cmd_scan

        return cmd_scan(args)
    if command == "compare":
        from xlagui.cli.compare import cmd_compare

        return cmd_compare(args)
    if command == "demo-data":
        from xlagui.cli.demo_data import cmd_demo_data

        return cmd_demo_data(args)
    if command == "inspect":
        from xlagui.cli.inspect import cmd_inspect

        return cmd_inspect(args)
    if command == "models":
        from xlagui.cli.models import cmd_models

        return cmd_models(args)
    if command == "hosts":
        from xlagui.cli.hosts import cmd_hosts

        return cmd_hosts(args)
    if command == "sweep":
        from xlagui.cli.sweep import cmd_sweep
        from xlagui.cli.sweep_ray import ray_executor

        return cmd_sweep(args, ray_executor(args))
    from xlagui.cli.gui import cmd_gui

    return cmd_gui(args)
