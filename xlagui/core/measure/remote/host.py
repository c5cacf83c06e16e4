"""A comparison on an SSH host: `RemoteHost` (logged in once, preflighted) and the
`SshTransport` that `WorkerProcess` starts every worker of one comparison through.

Both arms of a comparison always run on the same host, so no ratio is ever formed across
machines: the target is a setting of the whole comparison, not of an arm.

On the host, everything lives under its cache (`HostInfo.cache`, `~/.cache/xlagui/remote`):
`datasets/<fingerprint>` (see `dataset.py`), `models/<sha256>/<file>`, and one
`runs/<random>` folder per comparison laid out like the local output folder (`runs/<id>`,
`tensorboard/<id>`), removed when the comparison is over. A worker is
`ssh HOST -- env K=V … PYTHON -m xlagui.core.worker.child -`: its spec (with the host's paths) is
the first line of its stdin, the commands follow on the same stdin, its events come back on stdout,
and its stderr goes to `worker.log` in its run folder on the host. When the worker has ended,
its run folder (the log, XLA's dump for "What XLA did") and TensorBoard folder are copied into
the local ones. Killing the local ssh process closes the worker's stdin, and the worker exits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import secrets
import subprocess
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING, Any

from xlagui.core.measure.remote.dataset import CopyProgress, HostDataset, dataset_on_host
from xlagui.core.measure.remote.preflight import HostInfo, preflight
from xlagui.core.measure.remote.ssh import RemoteError, Ssh, SshTarget, quote
from xlagui.core.measure.worker_process import WORKER_OWNED, died_event, log_tail, worker_settings
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan
    from xlagui.core.protocol.config import RunConfig

FETCH_TIMEOUT_SECONDS = 600.0


class RemoteHost:
    """An SSH host made ready for comparisons: one master connection and its preflight
    (`info`). `prepare` readies one comparison there and gives its transport; `close` ends
    the connection. A context manager closes it."""

    def __init__(self, ssh: Ssh, info: HostInfo) -> None:
        self.ssh = ssh
        self.info = info

    @classmethod
    def connect(cls, target: SshTarget) -> RemoteHost:
        """Log in and run the preflight; raises the `RemoteError` that says why not."""
        ssh = Ssh(target)
        ssh.open()
        try:
            return cls(ssh, preflight(ssh))
        except BaseException:
            ssh.close()
            raise

    @classmethod
    def reopen(cls, target: SshTarget, info: HostInfo) -> RemoteHost:
        """Log in again to a host whose preflight answered `info` moments ago (the window's
        Machine group checked it when it was chosen): no second preflight before a run."""
        ssh = Ssh(target)
        ssh.open()
        return cls(ssh, info)

    @property
    def target(self) -> SshTarget:
        return self.ssh.target

    def environment(self) -> dict[str, Any]:
        return self.info.environment()

    def prepare(
        self,
        scan: DatasetScan,
        config: RunConfig,
        out_dir: Path,
        state: TaskState,
        *,
        on_progress: CopyProgress | None = None,
    ) -> SshTransport:
        """The dataset (copied once, or the target's `remote_data`) and the model file on the
        host, and a run folder there for this comparison. Raises `Cancelled` on a stop during
        the copy and a `RemoteError` when the host cannot take it."""
        dataset = dataset_on_host(
            self.ssh, self.info.cache, scan, state,
            remote_data=self.target.remote_data, on_progress=on_progress,
        )
        model_file = self._model_on_host(config) if config.model.file else ""
        remote_out = PurePosixPath(self.info.cache) / "runs" / secrets.token_hex(8)
        paths = {f.path: dataset.path_of(f.rel) for f in scan.files}
        return SshTransport(self, dataset, paths, out_dir, remote_out, model_file)

    def _model_on_host(self, config: RunConfig) -> str:
        local = Path(config.model.file)
        key = config.model.sha256 or secrets.token_hex(8)
        remote = PurePosixPath(self.info.cache) / "models" / key / local.name
        r, part = quote(str(remote)), quote(f"{remote}.part")
        self.ssh.check(
            f"test -f {r} || {{ mkdir -p {quote(str(remote.parent))} && cat > {part} && "
            f"mv {part} {r}; }}",
            input=local.read_bytes(),
            timeout=300,
            what=f"copying the model file {local.name}",
        )
        return str(remote)

    def close(self) -> None:
        self.ssh.close()

    def __enter__(self) -> RemoteHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SshTransport:
    """The `Transport` (`core/measure/worker_process.py`) of one comparison on an SSH host."""

    def __init__(
        self,
        host: RemoteHost,
        dataset: HostDataset,
        paths: dict[str, str],
        out_dir: Path,
        remote_out: PurePosixPath,
        model_file: str = "",
    ) -> None:
        self.host = host
        self.dataset = dataset
        self._paths = paths  # a sample's local path → its path on the host
        self._out = out_dir
        self.remote_out = remote_out
        self._model_file = model_file
        self._fetched: set[str] = set()

    @property
    def machine(self) -> str:
        return self.host.target.host

    def _remote(self, local: str | Path) -> PurePosixPath:
        rel = Path(local).resolve().relative_to(self._out.resolve())
        return self.remote_out / rel.as_posix()

    def remote_spec(self, spec: RunSpec) -> RunSpec:
        """`spec` with the host's paths: its run folder, TensorBoard folder, samples, model."""

        def moved(samples: list[Any]) -> list[Any]:
            return [dataclasses.replace(s, path=self._paths[s.path]) for s in samples]

        config = spec.config
        if self._model_file:
            config = dataclasses.replace(
                config, model=dataclasses.replace(config.model, file=self._model_file)
            )
        return dataclasses.replace(
            spec,
            config=config,
            train=moved(spec.train),
            val=moved(spec.val),
            run_dir=Path(self._remote(spec.run_dir)),
            tensorboard_dir=str(self._remote(spec.tensorboard_dir))
            if spec.tensorboard_dir
            else "",
        )

    def command(self, spec: RunSpec, argv: Sequence[str]) -> tuple[str, RunSpec]:
        """The host's shell line that runs the worker of `spec`, and the spec it is sent.
        `argv` is the local command line: this interpreter becomes the host's Python, and the
        local spec file becomes `-` (the spec comes as the first line of stdin)."""
        remote = self.remote_spec(spec)
        run_dir = PurePosixPath(str(remote.run_dir))
        settings = worker_settings(
            spec.xla_mode, spec.config.device, run_dir, spec.xla_dump,
            PurePosixPath(self.host.info.cache) / "keras",
        )
        local_spec = str(spec.run_dir / "spec.json")
        words = ["-" if w == local_spec else w for w in argv]
        python = ""
        if words and words[0] == sys.executable:
            python, words = self.host.target.python, words[1:]
        unset = " ".join(f"-u {k}" for k in WORKER_OWNED if k not in settings)
        env = " ".join(quote(f"{k}={v}") for k, v in settings.items())
        rd = quote(str(run_dir))
        # Not `exec`: the shell turns a death by signal N into exit status 128 + N, so ssh's
        # own 255 means only that the connection failed.
        line = (
            f"mkdir -p {rd}/tmp && env {unset} {env} {python} "
            f"{' '.join(quote(w) for w in words)} 2>>{rd}/worker.log; exit $?"
        )
        return line, remote

    def start(self, spec: RunSpec, argv: Sequence[str], log: IO[bytes]) -> subprocess.Popen[str]:
        line, remote = self.command(spec, argv)
        proc: subprocess.Popen[str] = self.host.ssh.popen(
            line, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True
        )
        assert proc.stdin is not None
        try:
            proc.stdin.write(json.dumps(remote.to_dict()) + "\n")
            proc.stdin.flush()
        except OSError:
            pass  # it is already gone: its end of stream says how
        return proc

    def died(self, returncode: int, log_path: Path, spec: RunSpec) -> ErrorEvent:
        """A worker that ended without its last word: the connection, or the worker?

        ssh's own failure is 255 (the host's shell reports a worker's death by signal N as
        128 + N, see `command`), and a local ssh killed by a signal was not stopped by us (a
        stop cancels first and is reported as cancelled): both mean the connection went."""
        host = self.machine
        if returncode < 0 or returncode == 255:
            return ErrorEvent(
                error_type="ConnectionLost",
                message=f"the connection to {host} was lost ({spec.describe()})",
                kind=Failure.CONNECTION_LOST.value,
                details=log_tail(log_path),  # ssh's own words
            )
        with contextlib.suppress(OSError, RemoteError, subprocess.TimeoutExpired,
                                 tarfile.TarError):
            self.fetch(spec)  # the worker's log: what it said before it died
        signalled = 128 < returncode < 128 + 65
        event = died_event(-(returncode - 128) if signalled else returncode, log_path, spec)
        event.message = f"{event.message} on {host}"
        return event

    def finish(self, spec: RunSpec) -> None:
        """Bring the run's folder (log, XLA's dump) and TensorBoard folder home, then remove
        them on the host. A failure is noted in the local log, never raised: the run's events
        are already here."""
        try:
            self.fetch(spec)
        except (OSError, RemoteError, subprocess.TimeoutExpired, tarfile.TarError) as exc:
            with contextlib.suppress(OSError), (spec.run_dir / "worker.log").open("a") as fh:
                fh.write(f"\nxlagui: the run folder could not be copied from {self.machine}: "
                         f"{exc}\n")
            return
        folders = [self._remote(spec.run_dir)]
        if spec.tensorboard_dir:
            folders.append(self._remote(spec.tensorboard_dir))
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.host.ssh.run(
                "rm -rf " + " ".join(quote(str(f)) for f in folders), timeout=60
            )

    def fetch(self, spec: RunSpec) -> None:
        """Copy the run's folders from the host into the local ones (once a run has ended;
        again only when asked after a death, which `finish` repeats harmlessly)."""
        if spec.run_id in self._fetched:
            return
        rels = [Path(spec.run_dir).resolve().relative_to(self._out.resolve()).as_posix()]
        if spec.tensorboard_dir:
            tb = Path(spec.tensorboard_dir).resolve().relative_to(self._out.resolve())
            rels.append(tb.as_posix())
        run_rel = rels[0]
        paths = " ".join(quote(r) for r in rels)
        command = (
            f"cd {quote(str(self.remote_out))} || exit 0; rm -rf {quote(run_rel + '/tmp')}; "
            f"set --; for p in {paths}; do [ -e \"$p\" ] && set -- \"$@\" \"$p\"; done; "
            f"[ $# -eq 0 ] || tar -cf - --exclude={quote(run_rel + '/spec.json')} \"$@\""
        )
        log = spec.run_dir / "worker.log"
        ssh_said = log.read_bytes() if log.exists() else b""
        proc = self.host.ssh.popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        try:
            _extract(proc.stdout, self._out)
        finally:
            proc.stdout.close()
            try:
                proc.wait(timeout=FETCH_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._fetched.add(spec.run_id)
        if ssh_said.strip() and log.exists() and log.read_bytes() != ssh_said:
            with log.open("ab") as fh:  # ssh's own words after the worker's
                fh.write(b"\n--- ssh ---\n" + ssh_said)

    def close(self) -> None:
        """Remove this comparison's folder on the host (best effort)."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.host.ssh.run(f"rm -rf {quote(str(self.remote_out))}", timeout=60)


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
