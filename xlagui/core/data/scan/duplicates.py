"""Identical files: copies within a class, one image under two labels, and test images that
are also training images (leakage). Only files whose size and last bytes match are hashed."""

from __future__ import annotations

import hashlib
from collections import defaultdict

from xlagui.core.data.scan.context import ScanContext, reason
from xlagui.core.data.scan.model import ImageFile


def find_identical(
    ctx: ScanContext, files: list[ImageFile], tails: dict[str, bytes]
) -> dict[str, str]:
    """path -> content digest for every file whose size and last bytes equal another's (""
    if it could not be read again). Only those can have a twin, so only those are read."""
    by_size: dict[tuple[int, bytes], list[ImageFile]] = defaultdict(list)
    for f in files:
        by_size[(f.size_bytes, tails.get(f.path, b""))].append(f)
    to_hash = [f for group in by_size.values() if len(group) > 1 for f in group]
    digests: dict[str, str] = {}
    total = max(1, len(to_hash))
    for i, f in enumerate(to_hash):
        ctx.check_stop()
        try:
            digests[f.path] = _digest(f.path)
        except FileNotFoundError:
            ctx.problem("vanished", [f.path], rel=f.rel)
            digests[f.path] = ""
        except OSError as exc:
            ctx.problem("unreadable", [f.path], rel=f.rel, reason=reason(exc))
            digests[f.path] = ""
        ctx.progress(0.9 + 0.1 * (i + 1) / total)
    return digests


def report_identical(ctx: ScanContext, files: list[ImageFile], digests: dict[str, str]) -> None:
    groups: dict[str, list[ImageFile]] = defaultdict(list)
    for f in files:
        if digests.get(f.path):
            groups[digests[f.path]].append(f)
    for group in groups.values():
        if len(group) < 2:
            continue
        per_class: dict[tuple[str, str], list[ImageFile]] = defaultdict(list)
        for f in group:
            per_class[(f.split, f.label)].append(f)
        for same in per_class.values():
            if len(same) > 1:
                ctx.problem("duplicate_in_class", [f.path for f in same],
                            files=[f.rel for f in same], label=same[0].label)
        labels = sorted({f.label for f in group})
        if len(labels) > 1:
            ctx.problem("label_conflict", [f.path for f in group], labels=labels,
                        files=[f.rel for f in group])
        if len({f.split for f in group}) > 1:
            ctx.problem("leakage", [f.path for f in group], files=[f.rel for f in group])


def _digest(path: str) -> str:
    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()

