"""`xlagui gui` (and `xlagui`, `xlagui DIR`, `xlagui --demo`): open the window."""

from __future__ import annotations

import argparse

from xlagui.core.protocol.config import ConfigError


def cmd_gui(args: argparse.Namespace) -> int:
    try:
        from xlagui.ui.app import run_app
    except ImportError as exc:  # no usable Qt: say so instead of a traceback
        raise ConfigError(f"the window cannot open: {exc}") from None

    return run_app(dataset=args.dataset, demo=args.demo)
