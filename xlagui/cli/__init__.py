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

This module holds `main`; the parser is `parser.build_parser`, and each command is a module of
its own (`scan`, `compare`, `demo_data`, `inspect`, `models`, `hosts`, `sweep`, `gui`), imported
when it is run.
Nothing here imports TensorFlow or Qt at module level: training runs in worker processes, and
the GUI is imported only when the window is asked for.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from xlagui.cli.common import EXIT_CANCELLED, EXIT_FAILED, EXIT_OK, EXIT_USAGE
from xlagui.cli.common import console as _console
from xlagui.cli.parser import build_parser
from xlagui.core.measure.transports import MachineError
from xlagui.core.protocol.config import ConfigError

__all__ = ["EXIT_CANCELLED", "EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "main"]

COMMANDS = ("scan", "compare", "demo-data", "inspect", "models", "hosts", "sweep", "gui")


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
    args = build_parser().parse_args(args_in)
    try:
        return _run_command(args)
    except ConfigError as exc:
        from rich.markup import escape  # a message's brackets are text ("xlagui[ray]")

        from xlagui.present.model_files import refusal_text

        _console(stderr=True).print(f"[red]error:[/red] {escape(refusal_text(exc))}",
                                    soft_wrap=True)
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
