"""`xlagui gui` (and `xlagui`, `xlagui DIR`, `xlagui --demo`): open the window."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from xlagui.core.protocol.config import ConfigError

HEADLESS = "xlagui compare --demo"  # what to run instead, on a machine with no display


def missing_display(environ: dict[str, str] | None = None, platform: str = sys.platform
                    ) -> str | None:
    """What is missing for the window on this machine (None: nothing known to be). On Linux Qt
    needs an X11 or Wayland display unless a platform plugin that needs none is chosen
    (`QT_QPA_PLATFORM=offscreen`); without one it aborts the process with its own message."""
    env = os.environ if environ is None else environ
    if not platform.startswith("linux") or env.get("QT_QPA_PLATFORM"):
        return None
    if env.get("WAYLAND_DISPLAY"):
        return None
    display = env.get("DISPLAY", "")
    if not display:
        return "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    if display.startswith(":"):  # a local X server listens on its socket
        number = display[1:].split(".")[0]
        if number.isdigit() and not Path(f"/tmp/.X11-unix/X{number}").exists():
            return f"no X server at DISPLAY={display}"
    return None


def cmd_gui(args: argparse.Namespace) -> int:
    missing = missing_display()
    if missing is not None:
        raise ConfigError(
            f"the window cannot open here: {missing}. Without a display, run the headless "
            f"command instead: {HEADLESS}"
        )
    try:
        from xlagui.ui.app import run_app
    except ImportError as exc:  # no usable Qt: say so instead of a traceback
        raise ConfigError(f"the window cannot open: {exc}") from None

    return run_app(dataset=args.dataset, demo=args.demo)
