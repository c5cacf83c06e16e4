"""This computer as a transport: children run here, in their own session, with the recipe's
environment; their folders are already where the parent reads them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from xlagui.core.machine import peak
from xlagui.core.machine.environment import host_environment
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.ended import child_died
from xlagui.core.measure.jobs import CHILD_MODULE, HERE, ChildJob, Request
from xlagui.core.measure.transports.base import (
    CopyProgress,
    Identity,
    PlacedDataset,
    Target,
)
from xlagui.core.measure.transports.environment import local_env
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.protocol.config import RunConfig


def child_argv(job: ChildJob, request: Request) -> list[str]:
    """The child's command line here: this interpreter on the child module (a frozen bundle's
    executable takes `-m` too: `xlagui.cli.main`), or a test's own command."""
    return list(job.command) if job.command else [sys.executable, "-m", CHILD_MODULE,
                                                  *request.words]


def popen_here(argv: Sequence[str], env: Mapping[str, str], log: IO[bytes]
               ) -> subprocess.Popen[str]:
    """A child process on this machine, in its own session, with pipes of text lines."""
    return subprocess.Popen(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        env=dict(env),
        text=True,
        encoding="utf-8",
        # A folder name that is not UTF-8 (kept as surrogates) must not stop a summary's text;
        # an undecodable byte on stdout becomes a line the malformed-line policy refuses.
        errors="replace",
        # Its own process group: a Ctrl+C in the terminal reaches the CLI, which cancels the
        # child properly, instead of killing it mid-write.
        start_new_session=(os.name == "posix"),
    )


def feed(proc: subprocess.Popen[str], request: Request) -> None:
    """Write the request's stdin (and close it when the child reads to the end)."""
    if proc.stdin is None:
        return
    try:
        if request.stdin:
            proc.stdin.write(request.stdin)
            proc.stdin.flush()
        if request.end_input:
            proc.stdin.close()
    except (OSError, ValueError):
        pass  # it is already gone: its end of stream says how


class LocalTransport:
    """Children on this computer (`Transport`)."""

    machine = ""
    info: HostInfo | None = None

    def identity(self) -> Identity:
        return Identity(peak.machine_id(), peak.tf_version())

    def environment(self) -> dict[str, Any]:
        return host_environment()

    def prepare(self, scan: DatasetScan, config: RunConfig, out_dir: Path, state: TaskState,
                *, on_progress: CopyProgress | None = None) -> PlacedDataset:
        """Nothing to ready: the dataset is read where it is."""
        t0 = time.perf_counter()
        return PlacedDataset(PurePosixPath(Path(scan.root).as_posix()), len(scan.files),
                             seconds=time.perf_counter() - t0, cached=True)

    def start(self, job: ChildJob, log: IO[bytes]) -> subprocess.Popen[str]:
        request = job.request(HERE)
        proc = popen_here(child_argv(job, request), local_env(job.settings(), job.folder), log)
        feed(proc, request)
        return proc

    def died(self, returncode: int, log_path: Path, job: ChildJob) -> ErrorEvent:
        return child_died(returncode, log_path, job)

    def finish(self, job: ChildJob) -> None:
        pass

    def close(self) -> None:
        pass


LOCAL = LocalTransport()


def connect(target: Target, *, info: HostInfo | None = None, state: TaskState | None = None
         ) -> LocalTransport:
    """The registry's way in (`transports.connect`): this computer needs no connection."""
    return LOCAL


def check(target: Target, state: TaskState | None = None) -> HostInfo:
    raise ValueError("this computer has no preflight")  # the window probes its devices
