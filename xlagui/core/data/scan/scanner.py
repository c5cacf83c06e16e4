"""`scan_dataset`: the steps of a scan in order, from the folder walk to the finished
`DatasetScan`."""

from __future__ import annotations

import os
import time

from xlagui.core.data.scan.classes import check_balance, check_classes
from xlagui.core.data.scan.context import ScanContext
from xlagui.core.data.scan.duplicates import find_identical, report_identical
from xlagui.core.data.scan.model import SEVERITIES, DatasetScan
from xlagui.core.data.scan.probe import DEFAULT_PIXEL_LIMIT, probe_all
from xlagui.core.data.scan.split import auto_split
from xlagui.core.data.scan.walk import find_layout, walk_classes
from xlagui.core.protocol.task import TaskState


def scan_dataset(
    root: str | os.PathLike[str],
    *,
    holdout_percent: int = 20,
    seed: int = 0,
    pixel_limit: int = DEFAULT_PIXEL_LIMIT,
    state: TaskState | None = None,
) -> DatasetScan:
    """Scan the image folder `root` (headers only, nothing written) and say what is in it.

    Raises `DatasetError` when `root` is not an existing folder and `Cancelled` when `state`
    asks to stop; every other oddity becomes a `Problem` in the result.
    """
    if not 0 < holdout_percent < 100:
        raise ValueError(f"holdout_percent must be between 1 and 99, got {holdout_percent}")
    started = time.perf_counter()
    ctx = ScanContext(os.path.abspath(os.fspath(root)), pixel_limit, state)
    ctx.progress(0.0)
    layout = find_layout(ctx, holdout_percent)
    candidates = walk_classes(ctx, layout)

    files, tails = probe_all(ctx, candidates)
    digests = find_identical(ctx, files, tails)
    files = [f for f in files if f.path not in digests or digests[f.path]]
    if layout.kind == "auto-split":
        auto_split(files, digests, holdout_percent, seed)
    class_names = check_classes(ctx, layout, files)
    # Files of a class that is not trained on cannot be used; the mismatch was reported.
    files = [f for f in files if f.label in class_names]
    files.sort(key=lambda f: (f.split, f.label, f.rel))
    report_identical(ctx, files, digests)
    check_balance(ctx, files, class_names)

    ctx.progress(1.0)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    problems = sorted(ctx.problems, key=lambda p: order.get(p.severity, len(order)))
    return DatasetScan(
        root=ctx.root,
        layout=layout.kind,
        test_folder=os.path.basename(layout.test_dir) if layout.test_dir else None,
        holdout_percent=holdout_percent,
        seed=seed,
        class_names=class_names,
        files=files,
        problems=problems,
        scanned_files=len(candidates),
        seconds=time.perf_counter() - started,
        train_folder=os.path.basename(layout.train_dir) if layout.train_dir else None,
    )
