"""`xlagui inspect FOLDER`: what XLA did in a comparison's (or one run's) XLA runs."""

from __future__ import annotations

import argparse
import json

from xlagui.cli.common import EXIT_FAILED, EXIT_OK
from xlagui.cli.common import console as _console
from xlagui.core.protocol.config import ConfigError


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
