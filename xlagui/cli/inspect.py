"""`xlagui inspect FOLDER`: what XLA did in a comparison's (or one run's) XLA runs, and a
comparison's why: where each step's time goes, every compile and recompile, and whether the
numbers stay the same (`present/explain.py`, `compiles.py`, `parity.py`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from xlagui.cli.common import EXIT_FAILED, EXIT_OK
from xlagui.cli.common import console as _console
from xlagui.core.protocol.config import ConfigError

if TYPE_CHECKING:
    from rich.console import Console

    from xlagui.present.why_data import WhyData


def cmd_inspect(args: argparse.Namespace) -> int:
    from xlagui.core.results.dumps import InspectError, inspect_folder
    from xlagui.present.why_data import read_folder

    try:
        runs = inspect_folder(args.folder)
    except (InspectError, OSError, ValueError) as exc:
        raise ConfigError(str(exc)) from None
    if args.json:
        print(json.dumps({run_id: r.to_dict() for run_id, r in runs}, indent=1))
        return EXIT_OK if runs else EXIT_FAILED
    from xlagui.cli.console import print_xla_did

    console = _console()
    why = read_folder(args.folder)
    if runs or why.empty:
        print_xla_did(console, runs, top=args.top)
    print_why(console, why)
    return EXIT_OK if runs or not why.empty else EXIT_FAILED


def _table(console: Console, title: str, columns: Sequence[str],
           rows: Sequence[Sequence[str]], right: Sequence[str] = ()) -> None:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="right" if col in right else "left")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _say(console: Console, lines: Sequence[str]) -> None:
    for line in lines:
        console.print(f"• {line}", soft_wrap=False, markup=False, highlight=False)


def print_why(console: Console, why: WhyData, limit: int | None = None) -> None:
    """The why, as the window's "Why" tab shows it; nothing for a comparison without one.
    `limit`: the attribution's rows that differ most (`xlagui inspect` shows every row)."""
    from xlagui.present import compiles, explain, parity

    if why.explain is not None:
        ex = why.explain
        console.print("[bold]Where the time goes[/bold]")
        _say(console, explain.difference_lines(ex))
        _table(console, "Coverage per arm", explain.COVERAGE_COLUMNS, explain.coverage_rows(ex),
               right=explain.COVERAGE_COLUMNS[1:])
        _say(console, explain.coverage_lines(ex))
        attribution = explain.attribution_table(ex, limit)
        title = "Thread-time per step, by difference from the baseline"
        if limit is not None:
            title += f" (the {limit} rows that differ most; xlagui inspect FOLDER has all)"
        _table(console, title, attribution.columns, attribution.rows,
               right=attribution.columns[3:])
        _say(console, [explain.THREADS_NOTE, explain.NOT_TRACED_NOTE])
    if why.compilations:
        console.print("[bold]Compiles[/bold]")
        _say(console, compiles.compile_lines(why.compilations))
        _table(console, "Every compile", compiles.COMPILE_COLUMNS,
               compiles.compile_rows(why.compilations), right=("time",))
    if why.parity:
        console.print("[bold]Do the numbers stay the same?[/bold]")
        _say(console, parity.parity_lines(why.parity))
        _table(console, "Parity against the baseline", parity.PARITY_COLUMNS,
               parity.parity_rows(why.parity), right=parity.PARITY_COLUMNS[2:])
        _say(console, [parity.HOW])
