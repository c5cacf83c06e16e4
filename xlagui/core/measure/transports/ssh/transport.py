"""An SSH host as a transport (`SshTransport`): logged in once and preflighted, readied for a
comparison (`prepare`), every child of that comparison started there.

Both arms of a comparison always run on the same host, so no ratio is ever formed across
machines: the target is a setting of the whole comparison, not of an arm.

On the host, everything lives under its cache (`HostInfo.cache`, `~/.cache/xlagui/remote`):
`datasets/<fingerprint>` (see `dataset.py`), `models/<sha256>/<file>`, and one `runs/<random>`
folder per connection laid out like the local output folder (`runs/<id>`, `tensorboard/<id>`,
and `children/<folder>` for the short children), removed when the transport closes. A child is
`ssh HOST -- env K=V … PYTHON -m xlagui.core.worker.child WORDS`: a run's spec (with the host's
paths) is the first line of its stdin, the commands follow on the same stdin, its events come
back on stdout, and its stderr goes to `worker.log` in its folder on the host. When the child has
ended, its folders (the log, XLA's dump for "What XLA did", TensorBoard's) are copied into the
local ones. Killing the local ssh process closes the child's stdin, and the child exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import subprocess
import sys
import tarfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.ended import child_died, log_tail
from xlagui.core.measure.jobs import ChildJob, WorkerJob
from xlagui.core.measure.transports.base import (
    CopyProgress,
    Identity,
    MachineError,
    PlacedDataset,
    Target,
)
from xlagui.core.measure.transports.environment import child_settings, owned
from xlagui.core.measure.transports.local import child_argv, feed
from xlagui.core.measure.transports.ssh.client import CONFIG, Ssh, config_hosts, quote
from xlagui.core.measure.transports.ssh.dataset import dataset_on_host
from xlagui.core.measure.transports.ssh.preflight import check_host, preflight
from xlagui.core.model import sources
from xlagui.core.model.check import ModelCheckSpec
from xlagui.core.model.source import NeededFile
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.spec import SPEC_FILE, RunSpec
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.protocol.config import ModelChoice, RunConfig

FETCH_TIMEOUT_SECONDS = 600.0
CHILDREN = "children"  # the short children's folders, under the connection's folder


class HostPlace:
    """The host as a child's request sees it (`jobs.Place`): this computer's paths as the host's,
    a model file as the host's copy."""

    local = False

    def __init__(self, transport: SshTransport) -> None:
        self._transport = transport

    def path(self, local: Path) -> PurePosixPath:
        return self._transport.remote(local)

    def spec(self, spec: RunSpec) -> RunSpec:
        return self._transport.remote_spec(spec)

    def check_spec(self, spec: ModelCheckSpec) -> ModelCheckSpec:
        return dataclasses.replace(spec, model=self._transport.model_on_host(spec.model))


class SshTransport:
    """An SSH host (`Transport`): one master connection and its preflight (`info`); `prepare`
    readies one comparison there; `close` removes this connection's folder on the host and ends
    the connection. A context manager closes it."""

    def __init__(self, ssh: Ssh, info: HostInfo) -> None:
        self.ssh = ssh
        self._info = info
        self.remote_out = PurePosixPath(info.cache) / "runs" / secrets.token_hex(8)
        self.place = HostPlace(self)
        self._roots: dict[Path, PurePosixPath] = {}  # a local folder → its place on the host
        self._paths: dict[str, str] = {}  # a sample's local path → its path on the host
        self._models: dict[str, str] = {}  # a model file's local path → the host's copy
        self._fetched: set[Path] = set()
        self._made = False  # this connection's folder on the host exists (made once)

    @classmethod
    def connect(cls, target: Target, *, info: HostInfo | None = None,
                state: TaskState | None = None) -> SshTransport:
        """Log in and run the preflight (none when `info` is what it answered moments ago:
        the window's Machine group checked the host when it was chosen); raises the
        `MachineError` that says why not."""
        ssh = Ssh(target)
        ssh.open()
        try:
            return cls(ssh, info if info is not None else preflight(ssh, state=state))
        except BaseException:
            ssh.close()
            raise

    @property
    def target(self) -> Target:
        return self.ssh.target

    @property
    def machine(self) -> str:
        return self.target.host

    @property
    def info(self) -> HostInfo:
        return self._info

    def identity(self) -> Identity:
        return Identity(self._info.machine_id, self._info.tensorflow)

    def environment(self) -> dict[str, Any]:
        return self._info.environment()

    def prepare(
        self,
        scan: DatasetScan,
        config: RunConfig,
        out_dir: Path,
        state: TaskState,
        *,
        on_progress: CopyProgress | None = None,
    ) -> PlacedDataset:
        """The dataset (copied once, or the target's `remote_data`) and the model file on the
        host, and this comparison's folders there. Raises `Cancelled` on a stop during the
        copy and a `MachineError` when the host cannot take it."""
        dataset = dataset_on_host(
            self.ssh, self._info.cache, scan, state,
            remote_data=self.target.remote_data, on_progress=on_progress,
        )
        self.model_on_host(config.model)
        self._roots[out_dir.resolve()] = self.remote_out
        self._paths = {f.path: dataset.path_of(f.rel) for f in scan.files}
        return dataset

    def model_on_host(self, model: ModelChoice) -> ModelChoice:
        """`model` as a child on the host reads it: each file its source builds it from
        (`sources.needed_files`: none for a built-in) copied once into the host's cache, named
        by its digest."""
        paths = {str(needed.path): self._file_on_host(needed) for needed in
                 sources.needed_files(model)}
        return sources.placed(model, paths) if paths else model

    def _file_on_host(self, needed: NeededFile) -> str:
        local = str(needed.path)
        if local not in self._models:
            key = needed.sha256 or secrets.token_hex(8)
            remote = PurePosixPath(self._info.cache) / "models" / key / needed.path.name
            r, part = quote(str(remote)), quote(f"{remote}.part")
            self.ssh.check(
                f"test -f {r} || {{ mkdir -p {quote(str(remote.parent))} && cat > {part} && "
                f"mv {part} {r}; }}",
                input=needed.path.read_bytes(),
                timeout=300,
                step="model_copy",
                file=needed.path.name,
            )
            self._models[local] = str(remote)
        return self._models[local]

    def remote(self, local: str | Path) -> PurePosixPath:
        """Where a local path of a child's is on the host."""
        path = Path(local).resolve()
        root = self._root_containing(path)
        return self._roots[root] / path.relative_to(root).as_posix()

    def remote_spec(self, spec: RunSpec) -> RunSpec:
        """`spec` with the host's paths: its run folder, TensorBoard folder, samples, model."""

        def moved(samples: list[Any]) -> list[Any]:
            return [dataclasses.replace(s, path=self._paths[s.path]) for s in samples]

        config = dataclasses.replace(spec.config, model=self.model_on_host(spec.config.model))
        return dataclasses.replace(
            spec,
            config=config,
            train=moved(spec.train),
            val=moved(spec.val),
            run_dir=Path(self.remote(spec.run_dir)),
            tensorboard_dir=str(self.remote(spec.tensorboard_dir))
            if spec.tensorboard_dir
            else "",
        )

    def command(self, job: ChildJob, argv: list[str]) -> str:
        """The host's shell line that runs `argv` (the child's command line here: this
        interpreter becomes the host's Python, a run's spec file `-`)."""
        self._root_of(job)
        folder = self.remote(job.folder)
        settings = child_settings(job.settings(), folder,
                                  PurePosixPath(self._info.cache) / "keras")
        local_spec = str(job.spec_path) if isinstance(job, WorkerJob) else None
        words = ["-" if w == local_spec else w for w in argv]
        python = ""
        if words and words[0] == sys.executable:
            python, words = self.target.python, words[1:]
        unset = " ".join(f"-u {k}" for k in owned() if k not in settings)
        env = " ".join(quote(f"{k}={v}") for k, v in settings.items())
        rd = quote(str(folder))
        rel = quote(folder.relative_to(self.remote_out).as_posix())
        self._make_folder()
        # The line enters the connection's folder before making the child's own: a line the
        # host runs late, after `close` removed that folder (a stop while a worker was starting,
        # on a loaded host), fails there and leaves nothing behind.
        # Not `exec`: the shell turns a death by signal N into exit status 128 + N, so ssh's
        # own 255 means only that the connection failed.
        return (
            f"cd {quote(str(self.remote_out))} && mkdir -p {rel}/tmp && "
            f"env {unset} {env} {python} "
            f"{' '.join(quote(w) for w in words)} 2>>{rd}/worker.log; exit $?"
        )

    def _make_folder(self) -> None:
        """This connection's folder on the host, made once, before its first child."""
        if not self._made:
            self.ssh.check(f"mkdir -p {quote(str(self.remote_out))}", timeout=60,
                           step="run_folder")
            self._made = True

    def start(self, job: ChildJob, log: IO[bytes]) -> subprocess.Popen[str]:
        request = job.request(self.place)
        line = self.command(job, child_argv(job, request))
        proc: subprocess.Popen[str] = self.ssh.popen(
            line, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
        )
        feed(proc, request)
        return proc

    def died(self, returncode: int, log_path: Path, job: ChildJob) -> ErrorEvent:
        """A child that ended without its last word: the connection, or the child?

        ssh's own failure is 255 (the host's shell reports a child's death by signal N as
        128 + N, see `command`), and a local ssh killed by a signal was not stopped by us (a
        stop cancels first and is reported as cancelled): both mean the connection went. The
        message names the host here: it travels with the run's error event as it is
        (`ended.py`)."""
        host = self.machine
        if returncode < 0 or returncode == 255:
            return ErrorEvent(
                error_type="ConnectionLost",
                message=f"the connection to {host} was lost ({job.describe()})",
                kind=Failure.CONNECTION_LOST.value,
                details=log_tail(log_path),  # ssh's own words
            )
        with contextlib.suppress(OSError, MachineError, subprocess.TimeoutExpired,
                                 tarfile.TarError, ValueError):
            self.fetch(job)  # the child's log: what it said before it died
        signalled = 128 < returncode < 128 + 65
        event = child_died(-(returncode - 128) if signalled else returncode, log_path, job)
        event.message = f"{event.message} on {host}"
        return event

    def finish(self, job: ChildJob) -> None:
        """Bring the child's folders (log, XLA's dump, TensorBoard's) home, then remove them on
        the host. A failure is noted in the local log, never raised: the child's events are
        already here."""
        try:
            self.fetch(job)
        except (OSError, MachineError, subprocess.TimeoutExpired, tarfile.TarError,
                ValueError) as exc:
            with contextlib.suppress(OSError), job.log_path.open("a") as fh:
                fh.write(f"\nxlagui: the run folder could not be copied from {self.machine}: "
                         f"{exc}\n")
            return
        folders = [self.remote(f) for f in job.homeward()]
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.ssh.run("rm -rf " + " ".join(quote(str(f)) for f in folders), timeout=60)

    def fetch(self, job: ChildJob) -> None:
        """Copy the child's folders from the host into the local ones (once it has ended;
        again only when asked after a death, which `finish` repeats harmlessly)."""
        if job.folder in self._fetched:
            return
        own = self._root_of(job)
        log = job.log_path
        ssh_said = log.read_bytes() if log.exists() else b""
        groups: dict[Path, list[str]] = {}
        for folder in job.homeward():
            root = self._root_containing(Path(folder).resolve())
            groups.setdefault(root, []).append(
                Path(folder).resolve().relative_to(root).as_posix())
        for root, rels in groups.items():
            mine = job.folder.resolve().relative_to(own).as_posix() if root == own else ""
            self._fetch_from(self._roots[root], rels, root, mine)
        self._fetched.add(job.folder)
        if ssh_said.strip() and log.exists() and log.read_bytes() != ssh_said:
            with log.open("ab") as fh:  # ssh's own words after the child's
                fh.write(b"\n--- ssh ---\n" + ssh_said)

    def _fetch_from(self, there: PurePosixPath, rels: list[str], into: Path, own: str) -> None:
        """`rels` under `there` on the host, unpacked under `into`; `own`: the child's own
        folder among them, whose temporary files are removed and spec left out."""
        paths = " ".join(quote(r) for r in rels)
        tidy = (f"rm -rf {quote(own + '/tmp')}; " if own else "")
        exclude = (f"--exclude={quote(own + '/' + SPEC_FILE)} " if own else "")
        command = (
            f"cd {quote(str(there))} || exit 0; {tidy}"
            f"set --; for p in {paths}; do [ -e \"$p\" ] && set -- \"$@\" \"$p\"; done; "
            f"[ $# -eq 0 ] || tar -cf - {exclude}\"$@\""
        )
        proc = self.ssh.popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        try:
            _extract(proc.stdout, into)
        finally:
            proc.stdout.close()
            try:
                proc.wait(timeout=FETCH_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def _root_of(self, job: ChildJob) -> Path:
        """The local folder the job's own folder is under: the comparison's output folder, or
        the short child's own folder (`children/<name>` on the host)."""
        folder = job.folder.resolve()
        for root in self._roots:
            if folder.is_relative_to(root):
                return root
        self._roots[folder] = self.remote_out / CHILDREN / folder.name
        return folder

    def _root_containing(self, path: Path) -> Path:
        for root in self._roots:
            if path.is_relative_to(root):
                return root
        raise ValueError(f"{path} is in no folder of a child on {self.machine}")

    def close(self) -> None:
        """Remove this connection's folder on the host (best effort) and end the connection.
        Safe to call twice."""
        if self.ssh.is_open:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                self.ssh.run(f"rm -rf {quote(str(self.remote_out))}", timeout=60)
        self.ssh.close()

    def __enter__(self) -> SshTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def connect(target: Target, *, info: HostInfo | None = None, state: TaskState | None = None
            ) -> SshTransport:
    """The registry's way in (`transports.connect`)."""
    return SshTransport.connect(target, info=info, state=state)


def check(target: Target, state: TaskState | None = None) -> HostInfo:
    """The registry's preflight alone (`transports.check`)."""
    return check_host(target, state)


# The settings of this transport's own (`Target.options`; the command line's flags:
# `transports.options`).
OPTIONS = (CONFIG,)


def hosts(options: Mapping[str, str]) -> list[str]:
    """The hosts a picker offers: the ssh configuration's (`transports.suggested_hosts`)."""
    config = options.get(CONFIG.name, "")
    return config_hosts(Path(config) if config else None)


def _extract(stream: IO[bytes], into: Path) -> None:
    """A tar stream from the host, unpacked under `into`: regular files and folders with
    relative paths only (nothing the host sends lands outside it)."""
    root = into.resolve()
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            target = (root / member.name).resolve()
            if not (member.isfile() or member.isdir()) or not target.is_relative_to(root):
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is None:
                continue
            with target.open("wb") as fh:
                while chunk := source.read(1 << 20):
                    fh.write(chunk)
