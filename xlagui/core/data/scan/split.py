"""The auto-split: which files of a folder without a test folder are held out for testing."""

from __future__ import annotations

import hashlib
from collections import defaultdict

from xlagui.core.data.scan.model import TEST, TRAIN, ImageFile


def auto_split(
    files: list[ImageFile], digests: dict[str, str], holdout_percent: int, seed: int
) -> None:
    """Hold out `holdout_percent` of each class (at least one when it has two or more).

    Files are ranked by a seeded hash of their relative path, so the choice does not depend on
    the order files were listed in and adding one file moves at most a few others. Identical
    copies within a class travel together, so the split itself never causes leakage.
    """
    by_class: dict[str, list[ImageFile]] = defaultdict(list)
    for f in files:
        by_class[f.label].append(f)
    for group in by_class.values():
        units: dict[str, list[ImageFile]] = defaultdict(list)
        for f in group:
            units[digests.get(f.path) or "path:" + f.rel].append(f)

        def rank(unit: list[ImageFile]) -> bytes:
            rel = min(f.rel for f in unit)
            return hashlib.blake2b(f"{seed}\0{rel}".encode(errors="surrogateescape")).digest()

        n = len(group)
        wanted = (n * holdout_percent + 50) // 100
        wanted = max(wanted, 1) if n >= 2 else 0
        wanted = min(wanted, n - 1)
        held = 0
        for unit in sorted(units.values(), key=rank):
            if held < wanted and held + len(unit) < n:
                split, held = TEST, held + len(unit)
            else:
                split = TRAIN
            for f in unit:
                f.split = split
