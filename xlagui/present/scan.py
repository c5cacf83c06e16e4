"""A dataset scan in words: the report `xlagui scan` prints and the window's "Scan report"
(`summary_text`), the folder layout in one sentence (`layout_description`), whether the data
can be trained on (`readiness`), and the Dataset tab's class table (`CLASS_COLUMNS`,
`class_row`).

The scan (`xlagui.core.data.scan`) finds the files, classes and problems; this module only says
them. Names that are not valid UTF-8 are shown with U+FFFD (`printable`), so that any terminal
or file takes the text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from xlagui.core.data.scan.model import SEVERITIES, TEST, TRAIN, DatasetScan, Problem, printable
from xlagui.core.protocol.identity import Severity
from xlagui.present.levels import Level
from xlagui.present.problem_kinds import kind_count
from xlagui.present.scan_problems import problem_text

# The class table's columns, with what each covers (the tooltip of its heading): sizes and
# colours cover both splits, and the heading says so.
CLASS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Class", "The class: a folder of images"),
    ("Train", "Training images of the class"),
    ("Test", "Test images of the class"),
    (
        "Sizes, train + test (px)",
        "The smallest and the largest image of the class by area (width × height), among its "
        "training and test images",
    ),
    (
        "Colour, train + test",
        "How many of the class's training and test images are in each colour mode",
    ),
)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n:,} {word}s"


def summary_text(scan: DatasetScan, max_paths: int = 3) -> str:
    """A readable multi-line summary: layout, counts, sizes and colour modes, problems."""
    lines = [f"Dataset: {scan.root}", f"Layout: {layout_description(scan)}"]
    lines.append(f"Classes ({len(scan.class_names)}): {', '.join(scan.class_names) or 'none'}")
    lines += _split_lines(scan)
    lines += _problem_lines(scan, max_paths)
    _, verdict = readiness(scan)
    lines.append(
        f"Scanned {plural(scan.scanned_files, 'file')} in {scan.seconds:.2f} s: {verdict}."
    )
    return printable("\n".join(lines))


def readiness(
    scan: DatasetScan, settled: Callable[[Problem], bool] | None = None, most: int = 3
) -> tuple[Level, str]:
    """Whether this data can be trained on, at its level: refused while there are errors;
    "can train; 28 cross-class duplicates and 2 train/test leaks to look at" (a warning) while
    warnings remain that `settled` (the problems whose files are left out) does not settle;
    otherwise "ready to train". The `most` commonest kinds are named, the rest counted."""
    if not scan.ok:
        return Level.ERROR, "training refused until the errors are fixed"
    kinds = Counter(p.kind for p in scan.warnings if settled is None or not settled(p))
    if not kinds:
        return Level.OK, "ready to train"
    ordered = sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
    parts = [kind_count(kind, n) for kind, n in ordered[:most]]
    rest = sum(n for _, n in ordered[most:])
    if rest:
        parts.append(plural(rest, "other warning"))
    named = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return Level.WARNING, f"can train; {named} to look at"


def size_words(scan: DatasetScan, label: str, split: str | None = None, by: str = "×") -> str:
    """The smallest and the largest of `label`'s images in `split` (both when None), each a
    real image: "40×30", or "100×100 to 348×145"; "no images" when there are none."""
    extremes = scan.size_extremes(label, split)
    if extremes is None:
        return "no images"
    (lo_w, lo_h), (hi_w, hi_h) = extremes
    small, large = f"{lo_w}{by}{lo_h}", f"{hi_w}{by}{hi_h}"
    return small if small == large else f"{small} to {large}"


def colour_words(scan: DatasetScan, label: str, split: str | None = None) -> str:
    """How many of `label`'s images in `split` (both when None) are in each colour mode,
    commonest first: "12 RGB, 1 grayscale"."""
    return ", ".join(f"{n:,} {word}" for word, n in scan.color_modes(label, split).items())


def class_row(scan: DatasetScan, label: str) -> list[str]:
    """A class in the Dataset tab's table (`CLASS_COLUMNS`): its name, its training and test
    images, then the sizes and colours of both splits together."""
    counts = scan.counts()
    return [
        printable(label),
        f"{counts[TRAIN].get(label, 0):,}",
        f"{counts[TEST].get(label, 0):,}",
        size_words(scan, label),
        colour_words(scan, label),
    ]


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
            sizes = size_words(scan, label, split, by="x")
            modes = colour_words(scan, label, split)
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
        lines.extend(f"    {problem_text(p)}" for p in group[:max_paths])
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
