"""Files a comparison leaves out because of a dataset problem; the folder itself is never touched.

A scan reports problems; for three kinds of them a person may decide that the files involved
should not be trained or validated on. Which files that means depends on the kind:

- ``label_conflict`` (``conflict`` on the command line): the same image in two or more classes.
  Every copy is left out: nothing here can tell which label is right.
- ``leakage`` (``leakage``): the same image in the training and the test data. The test copies
  are left out, so validation measures images the model has not seen; the training copy stays.
- ``duplicate_in_class`` (``duplicate``): identical copies within one class. All but the first
  (by path) are left out.

An `Exclusions` is a set of problems (named by kind and paths, so it survives a rescan that
finds the same problem again). `apply` returns a copy of the scan without the files; the CLI and
the window both train on that copy and record `record()` in the comparison's JSON.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from xlagui.core.protocol.identity import Split

if TYPE_CHECKING:  # types only: `xlagui.core.data.scan` loads Pillow, and the window imports us
    from xlagui.core.data.scan import DatasetScan, ImageFile, Problem

# What `--exclude-problems` accepts -> the problem kind it names.
KIND_WORDS: dict[str, str] = {
    "conflict": "label_conflict",
    "leakage": "leakage",
    "duplicate": "duplicate_in_class",
}
WORD_OF_KIND = {kind: word for word, kind in KIND_WORDS.items()}

ProblemKey = tuple[str, tuple[str, ...]]


def parse_kinds(text: str) -> tuple[str, ...]:
    """`"conflict,leakage"` -> `("label_conflict", "leakage")`; ValueError names a bad word."""
    kinds: list[str] = []
    for word in (w.strip().lower() for w in text.split(",")):
        if not word:
            continue
        kind = KIND_WORDS.get(word) or (word if word in WORD_OF_KIND else None)
        if kind is None:
            raise ValueError(f"unknown problem kind {word!r}: choose from {', '.join(KIND_WORDS)}")
        if kind not in kinds:
            kinds.append(kind)
    return tuple(kinds)


def can_leave_out(problem: Problem) -> bool:
    """Whether a comparison can leave this problem's files out (its kind is one of the three)."""
    return problem.kind in WORD_OF_KIND


def problem_key(problem: Problem) -> ProblemKey:
    return (problem.kind, tuple(sorted(problem.paths)))


def files_left_out(problem: Problem, scan: DatasetScan) -> list[ImageFile]:
    """The usable files of `scan` that leaving `problem` out removes (none for other kinds)."""
    if not can_leave_out(problem):
        return []
    by_path = {f.path: f for f in scan.files}
    named = sorted((by_path[p] for p in set(problem.paths) if p in by_path), key=_order)
    if problem.kind == "label_conflict":
        return named
    if problem.kind == "leakage":
        return [f for f in named if f.split == Split.TEST]
    return named[1:]  # duplicate_in_class: keep the first copy


def _order(f: ImageFile) -> tuple[int, str]:
    return (0 if f.split == Split.TRAIN else 1, f.rel)


@dataclass(frozen=True)
class Exclusions:
    """The problems whose files a comparison leaves out.

    Immutable: `leave_out` and `put_back` return a new one. Problems are named by kind and
    paths, so the same list applies to a rescan of the same folder.
    """

    keys: frozenset[ProblemKey] = field(default_factory=frozenset)

    @classmethod
    def of_kinds(cls, scan: DatasetScan, kinds: Iterable[str]) -> Exclusions:
        """Every problem of `scan` of the given kinds (problem kinds or command-line words)."""
        wanted = {KIND_WORDS.get(k, k) for k in kinds}
        return cls(
            frozenset(
                problem_key(p) for p in scan.problems if p.kind in wanted and can_leave_out(p)
            )
        )

    def __len__(self) -> int:
        return len(self.keys)

    def leaves_out(self, problem: Problem) -> bool:
        return problem_key(problem) in self.keys

    def leave_out(self, *problems: Problem) -> Exclusions:
        return Exclusions(self.keys | {problem_key(p) for p in problems if can_leave_out(p)})

    def put_back(self, *problems: Problem) -> Exclusions:
        return Exclusions(self.keys - {problem_key(p) for p in problems})

    def problems(self, scan: DatasetScan) -> list[Problem]:
        """The problems of `scan` this list leaves out, in the scan's order."""
        return [p for p in scan.problems if problem_key(p) in self.keys]

    def restricted_to(self, scan: DatasetScan) -> Exclusions:
        """Only the problems `scan` still has (after a rescan, some may be gone)."""
        return Exclusions(frozenset(problem_key(p) for p in self.problems(scan)))

    def files(self, scan: DatasetScan) -> list[ImageFile]:
        """The usable files of `scan` left out, each once, training files first."""
        chosen: dict[str, ImageFile] = {}
        for p in self.problems(scan):
            for f in files_left_out(p, scan):
                chosen.setdefault(f.path, f)
        return sorted(chosen.values(), key=_order)

    def apply(self, scan: DatasetScan) -> DatasetScan:
        """A copy of `scan` without the files left out (the same object when none are)."""
        gone = {f.path for f in self.files(scan)}
        if not gone:
            return scan
        return dataclasses.replace(scan, files=[f for f in scan.files if f.path not in gone])

    def complete_kinds(self, scan: DatasetScan) -> list[str]:
        """The command-line words of the kinds whose every problem in `scan` is left out."""
        words = []
        for kind, word in WORD_OF_KIND.items():
            of_kind = [p for p in scan.problems if p.kind == kind]
            if of_kind and all(self.leaves_out(p) for p in of_kind):
                words.append(word)
        return words

    def portable(self, root: str) -> tuple[ProblemKey, ...]:
        """The problems with their paths relative to the dataset folder `root`, sorted: what a
        sweep's cells take to their own scans of the folder, here or in another copy of it
        (`under`)."""
        return tuple(sorted((kind, tuple(sorted(os.path.relpath(p, root) for p in paths)))
                            for kind, paths in self.keys))

    @classmethod
    def under(cls, root: str, keys: Iterable[ProblemKey]) -> Exclusions:
        """`portable`'s problems as they are in the copy of the folder at `root`."""
        return cls(frozenset((kind, tuple(sorted(os.path.join(root, p) for p in paths)))
                             for kind, paths in keys))

    def record(self, scan: DatasetScan) -> dict[str, Any]:
        """What the comparison's JSON says was left out: the kinds (as `--exclude-problems`
        takes them) when whole kinds were, the number of problems, and every file."""
        problems = self.problems(scan)
        files: dict[str, dict[str, str]] = {}
        for p in problems:
            for f in files_left_out(p, scan):
                files.setdefault(
                    f.path, {"path": f.rel, "split": f.split, "label": f.label, "problem": p.kind}
                )
        kinds = self.complete_kinds(scan)
        return {
            "kinds": kinds,
            "problems": len(problems),
            # Whether `--exclude-problems` with `kinds` leaves out exactly these files.
            "reproducible": Exclusions.of_kinds(scan, kinds).keys == self.restricted_to(scan).keys,
            "files": sorted(files.values(), key=lambda d: (d["split"] != Split.TRAIN, d["path"])),
        }


def empty_after(scan: DatasetScan) -> str:
    """Why a scan with files left out cannot be trained on, in words; "" when it can."""
    train = {label: 0 for label in scan.class_names}
    test = 0
    for f in scan.files:
        if f.split == Split.TRAIN:
            train[f.label] = train.get(f.label, 0) + 1
        else:
            test += 1
    bare = [label for label, n in train.items() if not n]
    if bare:
        which = ", ".join(repr(b) for b in bare)
        return f"leaving these files out leaves no training images of class {which}"
    if not test:
        return "leaving these files out leaves no test images"
    return ""


def without_recorded(scan: DatasetScan, dataset: dict[str, Any]) -> DatasetScan:
    """`scan` less the files a report's `dataset` record lists as excluded (by relative path),
    so a comparison trains on exactly what its JSON says, whichever scan it is handed."""
    excluded = dataset.get("excluded") or {}
    gone = {str(d.get("path")) for d in excluded.get("files", []) if isinstance(d, dict)}
    if not gone or not any(f.rel in gone for f in scan.files):
        return scan
    return dataclasses.replace(scan, files=[f for f in scan.files if f.rel not in gone])
