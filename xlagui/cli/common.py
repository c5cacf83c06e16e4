"""What the commands share: exit statuses, the console, the dataset scan and the machine of
`--host` (or the `hosts` command's HOST)."""

from __future__ import annotations

import argparse
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


def target(args: argparse.Namespace) -> Target | None:
    """The SSH host of `--host` (None: this computer)."""
    host = args.host
    remote_data = getattr(args, "remote_data", "")
    if not host:
        if remote_data:
            raise ConfigError("--remote-data is a folder on the --host; give the host too")
        return None
    try:
        return Target(
            host=host,
            python=args.remote_python,
            ssh_config=str(Path(args.ssh_config).expanduser()) if args.ssh_config else "",
            remote_data=remote_data,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
