"""A made-up transport, as a newcomer would add one: children run on this computer, under the
name of a host reached as `elsewhere://NAME`. Registered by `register` (one line in
`transports.TRANSPORTS`, for the test's duration); it keeps what the layers above asked of it,
so a test can show that a comparison, the command line and the registry reach it without any
change above `core/measure/`."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar

import pytest

from xlagui import __version__
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure import transports
from xlagui.core.measure.jobs import ChildJob
from xlagui.core.measure.transports.base import PlacedDataset, Target, TransportOption
from xlagui.core.measure.transports.local import LocalTransport
from xlagui.core.protocol.events import PROTOCOL_VERSION
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.protocol.config import RunConfig

NAME = "elsewhere"
HOST = f"{NAME}://box"
MODULE = __name__
# A setting of its own (as ssh's configuration file is ssh's): a flag of the command line and an
# entry of `Target.options`, with no line above `core/measure/` naming it.
REGION = TransportOption("elsewhere_region", "--elsewhere-region", "NAME",
                         "the made-up transport's region")
OPTIONS = (REGION,)
REGIONS: list[str] = []  # the region of every target checked, in order (`register` clears it)


class ElsewhereTransport(LocalTransport):
    """Every child here (as `LocalTransport`), said to run on `target.host`; `log` is what it
    was asked, in order."""

    log: ClassVar[list[str]] = []  # every instance's, in order (`register` clears it)

    def __init__(self, target: Target) -> None:
        self.target = target
        self._info = check(target)

    @property
    def machine(self) -> str:  # type: ignore[override]
        return self.target.host

    @property
    def info(self) -> HostInfo:  # type: ignore[override]
        return self._info

    def environment(self) -> dict[str, Any]:
        return self._info.environment()

    def prepare(self, scan: DatasetScan, config: RunConfig, out_dir: Path, state: TaskState,
                **kwargs: Any) -> PlacedDataset:
        self.log.append("prepare")
        return super().prepare(scan, config, out_dir, state, **kwargs)

    def start(self, job: ChildJob, log: IO[bytes]) -> subprocess.Popen[str]:
        self.log.append(f"start {job.describe()}")
        return super().start(job, log)

    def finish(self, job: ChildJob) -> None:
        self.log.append("finish")

    def close(self) -> None:
        self.log.append("close")


def connect(target: Target, *, info: HostInfo | None = None, state: TaskState | None = None
            ) -> ElsewhereTransport:
    ElsewhereTransport.log.append("connect")
    return ElsewhereTransport(target)


def check(target: Target, state: TaskState | None = None) -> HostInfo:
    REGIONS.append(target.option(REGION.name))
    return HostInfo(host=target.host, hostname=platform.node(), xlagui=__version__,
                    protocol=PROTOCOL_VERSION, python=platform.python_version(),
                    platform=sys.platform, cpu="Made-up CPU", cpu_count=os.cpu_count() or 1,
                    cache="", free_disk_bytes=0, tensorflow="2.99",
                    devices=(DeviceInfo(id="cpu", name="CPU", kind="CPU"),))


def hosts(options: Mapping[str, str]) -> list[str]:
    region = options.get(REGION.name, "")
    return [f"{HOST}-{region}" if region else HOST]


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registration line, for the test's duration."""
    monkeypatch.setitem(transports.TRANSPORTS, NAME, MODULE)
    ElsewhereTransport.log = []
    REGIONS.clear()
