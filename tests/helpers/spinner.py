"""A busy program that is not the test's own child: a process spinning on one core whose
parent has exited, so the machine's look counts it as another program's load (a child of the
test process is the test's own work, as the window's model check is the window's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

START = ("import subprocess, sys; print(subprocess.Popen([sys.executable, '-c', 'while True: "
         "pass'], start_new_session=True, stdout=subprocess.DEVNULL, "
         "stderr=subprocess.DEVNULL).pid)")


@contextmanager
def spinning_elsewhere() -> Iterator[int]:
    """A process spinning on one core, not this one's child, while inside; its pid."""
    started = subprocess.run([sys.executable, "-c", START], capture_output=True, text=True,
                             check=True, timeout=60)
    pid = int(started.stdout)
    try:
        yield pid
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
