"""Atomic file writes: a temporary file in the same folder, flushed, then renamed over the target.

A failed write (read-only folder, full disk) raises and leaves neither a partial target nor the
temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

# mkstemp creates files readable by the owner only; an export should get the permissions any
# other new file would. Read the umask once (setting it is the only way to read it).
_UMASK = os.umask(0o022)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike[str], mode: str = "w", **kwargs: object
) -> Iterator[IO[Any]]:
    """Open a temporary sibling of `path` for writing; rename it to `path` when the block ends
    without an exception, delete it otherwise."""
    if "w" not in mode:
        raise ValueError("atomic_open only writes")
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, mode, **kwargs) as fh:  # type: ignore[call-overload]
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as fh:
        fh.write(data)
