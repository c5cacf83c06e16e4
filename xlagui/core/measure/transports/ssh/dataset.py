"""The dataset on the host: copied once into the host's cache, keyed by the scan's fingerprint
and each file's modification time (`cache_key`), or a folder already there
(`Target.remote_data`).

The copy is a tar stream made here (the scanned files alone, under their paths relative to the
dataset's root) and unpacked by `tar` on the host into `.partial-<random>`, which is renamed to
`datasets/<cache key>` only when the stream's last member, `MARKER` (written after every
image), has arrived. A stream cut short (a stop, a lost connection) never gets that far, so no
later run trusts a partial copy: it is removed when the copy stops, or by the next copy once it
is an hour old (a crash). A folder of that name already there is the whole dataset: nothing is
copied.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import secrets
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import IO, TYPE_CHECKING

from xlagui.core.measure.transports.base import (
    CopyProgress,
    MachineError,
    MachineFailure,
    PlacedDataset,
)
from xlagui.core.measure.transports.ssh.client import Ssh, connection_error, last_lines, quote
from xlagui.core.protocol.task import Cancelled, TaskState

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan

MARKER = ".xlagui-complete"  # the copy's last member: the manifest (relative path → size)
STALE_PARTIAL_MINUTES = 60
CHUNK_BYTES = 1 << 20

def manifest(scan: DatasetScan) -> dict[str, int]:
    """The scanned files by their path relative to the dataset's root, with their sizes."""
    return {f.rel: f.size_bytes for f in scan.files}


def cache_key(scan: DatasetScan) -> str:
    """The name of `scan`'s copy in the host's cache: its fingerprint (which files, in which split
    and class, of which sizes) and each file's modification time, read now. An image edited
    since a copy, even to the same size, gets a new copy rather than the old one."""
    stamps = []
    for item in scan.files:
        try:
            stamps.append((item.rel, os.stat(item.path).st_mtime_ns))
        except OSError:  # gone since the scan: the copy will say so
            stamps.append((item.rel, -1))
    blob = json.dumps([scan.fingerprint(), sorted(stamps)], ensure_ascii=True).encode("ascii")
    return hashlib.blake2b(blob, digest_size=16).hexdigest()


def dataset_on_host(
    ssh: Ssh,
    cache: str,
    scan: DatasetScan,
    state: TaskState,
    *,
    remote_data: str = "",
    on_progress: CopyProgress | None = None,
) -> PlacedDataset:
    """Make `scan`'s files readable on the host; raises `Cancelled` on a stop during the copy
    (nothing half-copied is left to trust) and a `MachineError` when it cannot."""
    if remote_data:
        return _check_remote_data(ssh, remote_data, scan)
    t0 = time.perf_counter()
    datasets = PurePosixPath(cache) / "datasets"
    final = datasets / cache_key(scan)
    files = manifest(scan)
    # Stale partial copies (a crash) go; a copy under way elsewhere is younger than that.
    probe = (
        f"mkdir -p {quote(str(datasets))} && "
        f"find {quote(str(datasets))} -maxdepth 1 -name '.partial-*' "
        f"-mmin +{STALE_PARTIAL_MINUTES} -exec rm -rf {{}} + ; "
        f"test -f {quote(str(final / MARKER))}"
    )
    proc = ssh.run(probe, timeout=60)
    if proc.returncode == 0:
        return PlacedDataset(
            root=final, files=len(files), seconds=time.perf_counter() - t0, cached=True
        )
    stderr = proc.stderr.decode("utf-8", errors="replace")
    lost = connection_error(ssh.target, proc.returncode, stderr)
    if lost is not None:
        raise lost
    partial = datasets / f".partial-{secrets.token_hex(6)}"
    sent = _copy(ssh, scan, files, partial, final, state, on_progress)
    return PlacedDataset(
        root=final, files=len(files), copied_bytes=sent, seconds=time.perf_counter() - t0
    )


def _copy(
    ssh: Ssh,
    scan: DatasetScan,
    files: dict[str, int],
    partial: PurePosixPath,
    final: PurePosixPath,
    state: TaskState,
    on_progress: CopyProgress | None,
) -> int:
    p, f = quote(str(partial)), quote(str(final))
    # Renamed into place only with the marker there: the stream arrived whole. A copy that
    # finished first elsewhere wins, and this one is dropped. A stream cut short (a stop kills
    # ssh here, while the host's shell may still be starting) removes its own partial folder
    # there: the parent's `_remove` can run before the host's `mkdir` does.
    command = (
        f"{{ mkdir -p {p} && tar -xf - -C {p} && test -f {p}/{MARKER} && "
        f"{{ if [ -d {f} ]; then rm -rf {p}; else mv {p} {f}; fi; }}; }} || "
        f"{{ rm -rf {p}; exit 1; }}"
    )
    total = sum(files.values())
    with open_err() as err:
        proc = ssh.popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
        assert proc.stdin is not None
        counter = _Counting(proc.stdin, total, on_progress)
        try:
            with tarfile.open(fileobj=counter, mode="w|", format=tarfile.PAX_FORMAT) as tar:
                for item in scan.files:
                    if state.is_interruption_requested():
                        raise Cancelled()
                    _add(tar, Path(item.path), item.rel)
                data = json.dumps(files, sort_keys=True).encode("utf-8")
                info = tarfile.TarInfo(MARKER)
                info.size, info.mtime = len(data), int(time.time())
                tar.addfile(info, io.BytesIO(data))
            proc.stdin.close()
            returncode = proc.wait()
        except (Cancelled, OSError) as exc:  # a stop, or the host stopped reading
            if isinstance(exc, Cancelled):
                proc.kill()
            try:  # ssh's own exit status says whether the connection went
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            with contextlib.suppress(OSError):
                proc.stdin.close()
            _remove(ssh, partial)
            if isinstance(exc, Cancelled):
                raise
            returncode = proc.returncode
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
    if returncode != 0:
        _remove(ssh, partial)
        lost = connection_error(ssh.target, returncode, stderr)
        if lost is not None:
            raise lost
        raise MachineError(MachineFailure.COPY_FAILED, stderr, host=ssh.target.host,
                           said=last_lines(stderr, 3))
    return counter.sent


def _add(tar: tarfile.TarFile, path: Path, rel: str) -> None:
    info = tar.gettarinfo(str(path), arcname=rel)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    with path.open("rb") as fh:
        tar.addfile(info, fh)


def _remove(ssh: Ssh, folder: PurePosixPath) -> None:
    """Best effort: a connection that is gone leaves it to the next copy's clean-up."""
    with contextlib.suppress(OSError, subprocess.TimeoutExpired, MachineError):
        ssh.run(f"rm -rf {quote(str(folder))}", timeout=30)


def open_err() -> IO[bytes]:
    return tempfile.TemporaryFile()


class _Counting(io.RawIOBase):
    """The ssh process's stdin, counting what goes through it."""

    def __init__(self, out: IO[bytes], total: int, on_progress: CopyProgress | None) -> None:
        self._out = out
        self._total = total
        self._on_progress = on_progress
        self.sent = 0

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self._out.write(data)
        self.sent += len(data)
        if self._on_progress is not None:
            self._on_progress(min(self.sent, self._total), self._total)
        return len(data)


REMOTE_DATA_SCRIPT = r"""
import json, os, sys
root = sys.argv[1]
want = json.load(sys.stdin)
if not os.path.isdir(root):
    print(json.dumps({"root": False}))
    sys.exit(0)
bad = []
for rel, size in want.items():
    try:
        if os.path.getsize(os.path.join(root, rel)) != size:
            bad.append(rel)
    except OSError:
        bad.append(rel)
print(json.dumps({"root": True, "bad": bad[:5], "count": len(bad)}))
"""


def _check_remote_data(ssh: Ssh, root: str, scan: DatasetScan) -> PlacedDataset:
    """A folder on the host used as it is: every scanned file must be there with its size."""
    t0 = time.perf_counter()
    files = manifest(scan)
    command = f"{ssh.target.python} -c {quote(REMOTE_DATA_SCRIPT)} {quote(root)}"
    out = ssh.check(
        command, input=json.dumps(files).encode("utf-8"), timeout=120,
        step="remote_data_check",
    )
    host = ssh.target.host
    try:
        found = json.loads(out.decode("utf-8", errors="replace").strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        raise MachineError(MachineFailure.REMOTE_DATA_UNCHECKED, host=host, root=root) from None
    if not found.get("root"):
        raise MachineError(MachineFailure.REMOTE_DATA_MISSING, host=host, root=root)
    if found.get("count"):
        raise MachineError(MachineFailure.REMOTE_DATA_DIFFERS, host=host, root=root,
                           count=int(found["count"]), files=len(files),
                           examples=", ".join(found.get("bad") or []))
    return PlacedDataset(root=PurePosixPath(root), files=len(files),
                         seconds=time.perf_counter() - t0)
