"""`xlagui gui` (and `xlagui`, `xlagui DIR`, `xlagui --demo`): open the window."""

from __future__ import annotations

import argparse
import ctypes.util
import os
import sys
from collections.abc import Callable
from pathlib import Path

from xlagui.core.protocol.config import ConfigError

HEADLESS = "xlagui compare --demo"  # what to run instead, on a machine with no display


# The system library Qt's X11 plugin needs since Qt 6.5 that desktop images have and servers
# lack; without it Qt aborts with "Could not load the Qt platform plugin" (status 134).
XCB_CURSOR = "xcb-cursor"


def missing_display(environ: dict[str, str] | None = None, platform: str = sys.platform,
                    find_library: Callable[[str], str | None] = ctypes.util.find_library,
                    ) -> str | None:
    """What is missing for the window on this machine (None: nothing known to be). On Linux Qt
    needs an X11 or Wayland display unless a platform plugin that needs none is chosen
    (`QT_QPA_PLATFORM=offscreen`), and on X11 the libxcb-cursor0 library; without them it
    aborts the process with its own message."""
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
    if find_library(XCB_CURSOR) is None:
        return ("the X11 library libxcb-cursor0 is missing (Qt's X11 plugin needs it; on "
                "Debian/Ubuntu: sudo apt-get install libxcb-cursor0, the README lists the rest)")
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
