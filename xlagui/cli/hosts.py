"""`xlagui hosts HOST`: what an SSH host has for a comparison (compare --host)."""

from __future__ import annotations

import argparse
import json

from xlagui.cli.common import EXIT_OK
from xlagui.cli.common import console as _console
from xlagui.cli.common import target as _target


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
