"""`xlagui demo-data DIR`: write the demo elephant set to DIR."""

from __future__ import annotations

import argparse

from xlagui.cli.common import EXIT_OK
from xlagui.cli.common import console as _console
from xlagui.core.protocol.config import ConfigError


def cmd_demo_data(args: argparse.Namespace) -> int:
    from xlagui.core.data.demo import generate_demo_dataset

    try:
        path = generate_demo_dataset(args.dest, seed=args.seed)
    except FileExistsError as exc:
        raise ConfigError(str(exc)) from None
    _console().print(f"demo dataset written to {path}")
    return EXIT_OK
