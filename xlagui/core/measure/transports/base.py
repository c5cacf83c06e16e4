"""What every transport is and answers with, whatever it reaches: the `Transport` protocol, the
machine a user named (`Target`), the dataset made readable there (`PlacedDataset`) and the one
error of a machine that cannot take a comparison (`MachineError`, a kind with its facts:
`xlagui.present.hosts` words it). Nothing here names SSH.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any, Protocol

from xlagui.core.machine.host import DEFAULT_PYTHON, HostInfo
from xlagui.core.protocol.events import ErrorEvent, Fact
from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.measure.jobs import ChildJob
    from xlagui.core.protocol.config import RunConfig

# The settings of a transport's own that a user gave, by name (`Target.options`).
TransportOptions = tuple[tuple[str, str], ...]

# (bytes sent, bytes in all): called as a dataset copy goes, at most once per chunk.
CopyProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class Target:
    """Where a comparison runs, as the user named it: `host` "" is this computer; otherwise
    `user@host`, an alias of the ssh configuration, or `NAME://…` for the transport NAME,
    reached by the transport `via` ("": see `transport`). `python`: the host's Python as words
    of its shell (`python3`, `~/venv/bin/python`, `env VAR=1 python3`). `remote_data`: a dataset
    folder already on the host, laid out like the local one; "" copies the dataset into the
    host's cache. `options`: the settings of the transport's own that the user gave, by name
    (`TransportOption`: the ssh transport's configuration file); read them with `option`.
    """

    host: str = ""
    python: str = DEFAULT_PYTHON
    remote_data: str = ""
    via: str = ""
    options: TransportOptions = ()

    def option(self, name: str) -> str:
        """The value of the transport's own setting `name` ("" when not given)."""
        return dict(self.options).get(name, "")

    def __post_init__(self) -> None:
        if self.is_local:
            return
        if not self.host or self.host != self.host.strip() or any(c.isspace() for c in self.host):
            raise ValueError(f"not an SSH host name: {self.host!r}")
        if self.host.startswith("-"):  # would be read as an option of ssh
            raise ValueError(f"an SSH host name cannot start with '-': {self.host!r}")
        if not self.python.strip():
            raise ValueError("the host's Python cannot be empty")

    @property
    def is_local(self) -> bool:
        return not self.host and self.via in ("", "local")

    @property
    def transport(self) -> str:
        """The registered transport that reaches it (`transports.TRANSPORTS`): `via`, else the
        scheme of a host typed as `NAME://…` (`ray://head:10001`; `ssh://me@gpu:22` is ssh's
        own form), else "local" for this computer and "ssh" for any other host. So the command
        line's `--host` and the window's host field reach every registered transport."""
        if self.via:
            return self.via
        if self.is_local:
            return "local"
        scheme, sep, _ = self.host.partition("://")
        return scheme if sep else "ssh"


@dataclass(frozen=True)
class TransportOption:
    """A setting of a transport's own that a user gives (`Target.options`), declared by the
    transport's module (`OPTIONS`): its `name` there, and its command-line `flag`, `metavar`
    and `help` (`xlagui.core.measure.transports.options` lists them for the command line);
    `path`: a file name, read with `~` expanded."""

    name: str
    flag: str
    metavar: str
    help: str
    path: bool = False


class MachineFailure(StrEnum):
    """The ways a machine fails to take a comparison, or a step on it fails
    (`MachineError.kind`); `xlagui.present.hosts` words each. The facts each names follow it."""

    NO_CLIENT = "no_client"  # the transport's client program is not here; facts: client
    AUTH_FAILED = "auth_failed"  # facts: host, said
    HOST_NOT_FOUND = "host_not_found"  # facts: host, said
    UNREACHABLE = "unreachable"  # facts: host, said
    # The client could not run a command, for no reason it said; facts: client, host, said.
    CLIENT_FAILED = "client_failed"
    NO_ANSWER = "no_answer"  # the login did not answer in time; host, seconds
    NO_CONNECTION = "no_connection"  # host, said
    COMMAND_FAILED = "command_failed"  # host, step, file, status, said
    PREFLIGHT_TIMEOUT = "preflight_timeout"  # host, seconds
    PYTHON_MISSING = "python_missing"  # host, python, said
    PREFLIGHT_FAILED = "preflight_failed"  # host, status, said
    XLAGUI_MISSING = "xlagui_missing"  # host, python, missing, version
    VERSION_MISMATCH = "version_mismatch"  # host, python, theirs, their_protocol, version, protocol
    PREFLIGHT_STOPPED = "preflight_stopped"  # host, status, said
    TENSORFLOW_MISSING = "tensorflow_missing"  # host, python, said
    PREFLIGHT_GARBLED = "preflight_garbled"  # host, said
    COPY_FAILED = "copy_failed"  # host, said
    REMOTE_DATA_UNCHECKED = "remote_data_unchecked"  # host, root
    REMOTE_DATA_MISSING = "remote_data_missing"  # host, root
    REMOTE_DATA_DIFFERS = "remote_data_differs"  # host, root, count, files, examples

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class MachineError(Exception):
    """Something about the machine stops the comparison before it starts, or a step on it
    failed: `kind` says what (`xlagui.present.hosts` words each, with what to do), `facts` what
    the words name (the host, what ssh said...), `details` the tool's own output."""

    def __init__(self, kind: MachineFailure, details: str = "", **facts: Fact) -> None:
        super().__init__(f"{kind}: {facts}")
        self.kind = kind
        self.facts: dict[str, Fact] = dict(facts)
        self.details = details


@dataclass(frozen=True)
class PlacedDataset:
    """Where the dataset is on the machine, and what getting it there cost."""

    root: PurePosixPath
    files: int
    copied_bytes: int = 0  # 0: it was already there
    seconds: float = 0.0
    cached: bool = False  # a copy made before was used

    def path_of(self, rel: str) -> str:
        return str(self.root / rel)


@dataclass(frozen=True)
class Identity:
    """The machine and TensorFlow a transport's children run with, as the machine-limits cache
    keys them (`core/machine/peak.py`)."""

    machine: str
    tensorflow: str


class Transport(Protocol):
    """Where the app's children run (`core/measure/jobs.py`: workers, the model check, the
    probes, the TensorBoard text), every one of them started here.

    `prepare` readies one comparison there (the dataset, the model file, a run folder) and says
    where the dataset is; `start` runs a child's command line with the one environment recipe
    (`transports/environment.py`), its stdin and stdout pipes of text lines and its stderr
    into `log`; `died` is the parent's account of a child that ended without its last word;
    `finish` brings a child's files home once it has ended; `close` lets go of the machine.
    """

    @property
    def machine(self) -> str:
        """The host's name; "" for this computer."""
        ...

    @property
    def info(self) -> HostInfo | None:
        """What the machine's preflight found (None: this computer, which has none)."""
        ...

    def identity(self) -> Identity: ...

    def environment(self) -> dict[str, Any]:
        """The comparison's environment block for this machine."""
        ...

    def prepare(
        self,
        scan: DatasetScan,
        config: RunConfig,
        out_dir: Path,
        state: TaskState,
        *,
        on_progress: CopyProgress | None = None,
    ) -> PlacedDataset: ...

    def start(self, job: ChildJob, log: IO[bytes]) -> subprocess.Popen[str]: ...

    def died(self, returncode: int, log_path: Path, job: ChildJob) -> ErrorEvent: ...

    def finish(self, job: ChildJob) -> None: ...

    def close(self) -> None: ...
