"""Folders as archives, for what crosses between the sweep and a cluster's nodes: the dataset
(into Ray's object store once, unpacked on each node that runs a cell) and a cell's comparison
folder (back with its result).

`shutil` makes and unpacks the archives (an uncompressed tar: photographs do not compress, and a
node should spend its CPUs on the cell); unpacking refuses members that would land outside the
target (tarfile's "data" filter), and a folder is published by a rename, so a node that dies
halfway never leaves a half-unpacked dataset that a later cell would take for a whole one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FORMAT = "tar"


def pack_folder(folder: str | os.PathLike[str]) -> bytes:
    """The archive of everything under `folder` (its contents, not the folder's own name)."""
    with tempfile.TemporaryDirectory(prefix="xlagui-pack-") as tmp:
        base = os.path.join(tmp, "archive")
        made = shutil.make_archive(base, _FORMAT, root_dir=os.fspath(folder))
        return Path(made).read_bytes()


def unpack_folder(archive: bytes, target: str | os.PathLike[str]) -> Path:
    """Unpack `archive` into `target` (created, or replaced when it exists), all or nothing."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _unpack(archive, staging)
        if target.exists():
            shutil.rmtree(target)
        os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _unpack(archive: bytes, into: Path) -> None:
    fd, name = tempfile.mkstemp(suffix=f".{_FORMAT}", dir=into.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(archive)
        shutil.unpack_archive(name, into, _FORMAT, filter="data")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def digest(archive: bytes) -> str:
    """A short name for an archive's contents: the nodes' cache of unpacked datasets is keyed
    by it, so a dataset changed between two sweeps is never taken for the old one."""
    return hashlib.sha256(archive).hexdigest()[:16]


@dataclass(frozen=True)
class DatasetSource:
    """Where a node finds the sweep's dataset: `shared`, a path every node reads (the user's
    `--remote-data`); else `archive`, a Ray object reference to `pack_folder`'s bytes, and its
    `digest`; neither for the demo set, which each node draws itself."""

    shared: str = ""
    archive: Any = None  # a ray.ObjectRef: Ray is an optional dependency, so not typed here
    digest: str = ""

    def on_node(self, cache: Path, fetch: Any) -> str:
        """The dataset's folder on this node: the shared path, the cached copy of the archive,
        or the archive fetched (`fetch(ref) -> bytes`, `ray.get`) and unpacked into `cache`
        first; "" for the demo set."""
        if self.shared or self.archive is None:
            return self.shared
        folder = cache / self.digest
        if not folder.is_dir():
            unpack_folder(fetch(self.archive), folder)
        return str(folder)
