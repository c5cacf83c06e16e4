"""A dataset scan in words: the report `xlagui scan` prints and the window's "Scan report"
(`summary_text`), and the folder layout in one sentence (`layout_description`).

The scan (`xlagui.core.data.scan`) finds the files, classes and problems; this module only says
them. Names that are not valid UTF-8 are shown with U+FFFD (`printable`), so that any terminal
or file takes the text.
"""

from __future__ import annotations

from xlagui.core.data.scan.model import SEVERITIES, TEST, TRAIN, DatasetScan, Problem, printable
from xlagui.core.protocol.identity import Severity


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n:,} {word}s"


def summary_text(scan: DatasetScan, max_paths: int = 3) -> str:
    """A readable multi-line summary: layout, counts, sizes and colour modes, problems."""
    lines = [f"Dataset: {scan.root}", f"Layout: {layout_description(scan)}"]
    lines.append(f"Classes ({len(scan.class_names)}): {', '.join(scan.class_names) or 'none'}")
    lines += _split_lines(scan)
    lines += _problem_lines(scan, max_paths)
    verdict = "ready to train" if scan.ok else "training refused until the errors are fixed"
    lines.append(
        f"Scanned {plural(scan.scanned_files, 'file')} in {scan.seconds:.2f} s: {verdict}."
    )
    return printable("\n".join(lines))


def _split_lines(scan: DatasetScan) -> list[str]:
    """Each split's images, then per class their count, sizes and colour modes."""
    lines = []
    counts = scan.counts()
    for split in (TRAIN, TEST):
        per_class = counts.get(split, {})
        folder = scan.train_folder if split == TRAIN else scan.test_folder
        where = f" (from {folder}/)" if scan.layout == "split" and folder else ""
        lines.append(f"{split}{where}: {plural(sum(per_class.values()), 'image')}")
        width = max((len(c) for c in per_class), default=0)
        for label, n in per_class.items():
            if not n:
                lines.append(f"  {label:<{width}}  no images")
                continue
            min_w, min_h, max_w, max_h = scan.size_range(split, label)
            sizes = (
                f"{min_w}x{min_h}"
                if (min_w, min_h) == (max_w, max_h)
                else f"{min_w}x{min_h} to {max_w}x{max_h}"
            )
            modes = ", ".join(f"{w} {c}" for w, c in scan.color_modes(split, label).items())
            lines.append(f"  {label:<{width}}  {plural(n, 'image')}, {sizes}, {modes}")
    return lines


def _problem_lines(scan: DatasetScan, max_paths: int) -> list[str]:
    """The problems tallied by severity, then grouped by severity and kind with their first
    `max_paths` messages."""
    if not scan.problems:
        return ["Problems: none"]
    tally = ", ".join(
        plural(n, word)
        for n, word in (
            (len(scan.errors), Severity.ERROR.value),
            (len(scan.warnings), Severity.WARNING.value),
            (len(scan.notes), "note"),
        )
        if n
    )
    lines = [f"Problems: {tally}"]
    groups: dict[tuple[Severity, str], list[Problem]] = {}
    for p in scan.problems:
        groups.setdefault((p.severity, p.kind), []).append(p)
    for (severity, kind), group in sorted(
        groups.items(), key=lambda kv: (SEVERITIES.index(kv[0][0]), kv[0][1])
    ):
        lines.append(f"  {severity} {kind} ({len(group)}):")
        lines.extend(f"    {p.message}" for p in group[:max_paths])
        if len(group) > max_paths:
            lines.append(f"    ... and {len(group) - max_paths} more")
    return lines


def layout_description(scan: DatasetScan) -> str:
    """How the folder is laid out and where the test images come from, in one sentence (the
    summary's "Layout:" line), with undecodable bytes of folder names shown as U+FFFD."""
    if scan.layout == "split":
        words = (
            f"{scan.train_folder or TRAIN}/ and {scan.test_folder}/ folders, "
            "each with one sub-folder per class"
        )
    else:
        held_out = (
            f"the scan held out {scan.holdout_percent}% of each class for testing "
            f"(seed {scan.seed}, the same files every time; at least one per class of two or "
            "more)"
        )
        if scan.train_folder:
            words = f"{scan.train_folder}/ with no test folder next to it: {held_out}"
        else:
            words = f"one folder per class, no test folder: {held_out}"
    return printable(words)
