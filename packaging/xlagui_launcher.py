"""The PyInstaller bundle's entry point: `xlagui.cli.main`, as the `xlagui` command runs it.

The app starts each training as `[sys.executable, "-m", "xlagui.core.worker.child", SPEC]`. In the
bundle `sys.executable` is the bundle's own executable, not a Python interpreter, so that
command line arrives here too; `xlagui.cli.main` hands it to the worker (which then ends the
process itself). The spec lists `xlagui.core.worker.child` as a hidden import for that reason.
"""

from __future__ import annotations

import multiprocessing
import sys


def main() -> int:
    # Nothing in xlagui starts processes with multiprocessing, but a library might; in a
    # frozen app a spawned child would otherwise start a second copy of the app (Windows, macOS).
    multiprocessing.freeze_support()
    from xlagui.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
