"""What the commands share: exit statuses, the console, the dataset scan and the machine of
`--host` (or the `hosts` command's HOST)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from xlagui.core.measure.transports import Target
from xlagui.core.protocol.config import ConfigError

if TYPE_CHECKING:  # imported where used: the command line starts without them
    from rich.console import Console

    from xlagui.core.data.scan import DatasetScan

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    # Rich assumes 80 columns when it is not writing to a terminal; a CI log is wider.
    width = None if stream.isatty() else 120
    return Console(stderr=stderr, highlight=False, width=width)


def scan_folder(path: str, holdout: int, seed: int) -> DatasetScan:
    """The scan of `path` through the front door (`core.compare.inputs.open_dataset`);
    ConfigError when it is no dataset folder."""
    from xlagui.core.compare.inputs import open_dataset

    return open_dataset(path, holdout_percent=holdout, seed=seed)


def reach(args: argparse.Namespace) -> Target:
    """How a host is reached, less the host itself: the host's Python, `--remote-data` and the
    transports' own settings (`transports.options`: `--ssh-config`...), as a `Target` of no
    host (a sweep's cells each add theirs)."""
    from xlagui.core.measure.transports import options

    given: list[tuple[str, str]] = []
    for option in options():
        value = str(getattr(args, option.name, "") or "")
        if value:
            given.append((option.name, str(Path(value).expanduser()) if option.path else value))
    return Target(python=args.remote_python, remote_data=getattr(args, "remote_data", ""),
                  options=tuple(given))


def target(args: argparse.Namespace) -> Target | None:
    """The host of `--host` (None: this computer), reached as `reach` says."""
    host = args.host
    if not host:
        if getattr(args, "remote_data", ""):
            raise ConfigError("--remote-data is a folder on the --host; give the host too")
        return None
    try:
        return dataclasses.replace(reach(args), host=host)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
