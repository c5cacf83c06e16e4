"""What a scan finds: `DatasetScan`, its `ImageFile`s and `Problem`s (`xlagui.present.scan` words
the report).

Nothing here touches the disk; `xlagui.core.data.scan.scanner.scan_dataset` fills these in.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from xlagui.core.protocol.identity import Severity, Split

TRAIN, TEST = Split.TRAIN.value, Split.TEST.value  # what `ImageFile.split` holds

SEVERITIES = tuple(Severity)  # most serious first

# People's words for Pillow's modes; "16-bit" and "alpha" depend on more than the mode.
COLOR_WORDS: dict[str, str] = {
    "1": "grayscale",
    "L": "grayscale",
    "I": "grayscale",
    "F": "grayscale",
    "P": "palette",
    "PA": "alpha",
    "LA": "alpha",
    "La": "alpha",
    "RGBA": "alpha",
    "RGBa": "alpha",
    "CMYK": "CMYK",
    "RGB": "RGB",
    "RGBX": "RGB",
    "YCbCr": "RGB",
}


class DatasetError(Exception):
    """The chosen path cannot be scanned at all (it does not exist, or is not a folder)."""


@dataclass
class ImageFile:
    """One usable image: where it is, which split and class it belongs to, what its header says."""

    path: str  # absolute path as a string
    rel: str  # relative to the dataset root, '/'-separated, for display
    split: str  # "train" or "test"
    label: str  # class name
    width: int
    height: int
    format: str  # Pillow's format: "JPEG", "PNG", "GIF", ...
    mode: str  # Pillow's mode: "RGB", "L", "P", "I;16", ...
    size_bytes: int
    frames: int = 1
    color: str = ""  # people's word for the colour mode (see COLOR_WORDS); from `mode` if empty

    def __post_init__(self) -> None:
        if not self.color:
            self.color = color_word(self.mode)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class Problem:
    """Something about the dataset a person should know; an ERROR means training is refused.
    The core says what it is, as data: its `kind`, which of the kind's sentences says it
    (`said`: the kind's own, or `kind.variant`) and the `facts` that sentence names (the file
    relative to the dataset, counts, class names); `xlagui.present.scan_problems` words it."""

    kind: str  # see PROBLEM_KINDS
    severity: Severity
    paths: list[str] = field(default_factory=list)
    said: str = ""  # "" for the kind's own sentence
    facts: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.severity = Severity(self.severity)  # a saved scan's string
        self.said = self.said or self.kind

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PROBLEM_KINDS: dict[str, Severity] = {
    # one file, excluded from the dataset
    "not_an_image": Severity.WARNING,
    "unreadable": Severity.WARNING,
    "truncated": Severity.WARNING,
    "too_large": Severity.WARNING,
    "vanished": Severity.WARNING,
    # one file, kept
    "misnamed": Severity.INFO,
    "animated": Severity.INFO,
    # the folder structure
    "stray_file": Severity.INFO,
    "ignored_folder": Severity.INFO,
    "symlink_loop": Severity.INFO,
    "no_test_folder": Severity.INFO,
    "empty_class": Severity.WARNING,
    "class_mismatch": Severity.ERROR,  # or a WARNING when the test folder merely lacks a class
    "too_few_classes": Severity.ERROR,
    "no_images": Severity.ERROR,
    # the contents as a whole
    "duplicate_in_class": Severity.WARNING,
    "label_conflict": Severity.WARNING,
    "leakage": Severity.WARNING,
    "imbalance": Severity.WARNING,
}


@dataclass
class DatasetScan:
    """What `scan_dataset` found: the usable files with their split and class, and the problems."""

    root: str
    layout: str  # "split" (train and test folders) or "auto-split" (the scan chose the test set)
    test_folder: str | None  # the test folder's name as on disk ("test", "val", ...), if any
    holdout_percent: int
    seed: int
    class_names: list[str]
    files: list[ImageFile]  # usable files only, sorted by (split, label, rel)
    problems: list[Problem]
    scanned_files: int  # candidate files opened and looked at
    seconds: float
    train_folder: str | None = None  # the train folder's name as on disk, if any

    @property
    def ok(self) -> bool:
        """True when nothing stops a training on this data."""
        return not self.errors

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.WARNING]

    @property
    def notes(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == Severity.INFO]

    def files_for(self, split: str) -> list[ImageFile]:
        return [f for f in self.files if f.split == split]

    def counts(self) -> dict[str, dict[str, int]]:
        """split -> class -> number of usable images, with every class under both splits."""
        result = {s: dict.fromkeys(self.class_names, 0) for s in (TRAIN, TEST)}
        for f in self.files:
            result.setdefault(f.split, {}).setdefault(f.label, 0)
            result[f.split][f.label] += 1
        return result

    def _chosen(self, label: str, split: str | None) -> list[ImageFile]:
        return [f for f in self.files if f.label == label and split in (None, f.split)]

    def size_extremes(
        self, label: str, split: str | None = None
    ) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """The (width, height) of the smallest and of the largest of `label`'s images by area
        (ties by width), in `split` or in both splits when None: two real images, never the
        smallest width paired with another image's smallest height. None when there are none."""
        chosen = [(f.width * f.height, f.width, f.height) for f in self._chosen(label, split)]
        if not chosen:
            return None
        _, lo_w, lo_h = min(chosen)
        _, hi_w, hi_h = max(chosen)
        return (lo_w, lo_h), (hi_w, hi_h)

    def color_modes(self, label: str, split: str | None = None) -> dict[str, int]:
        """People's words for the colour modes met ("RGB", "grayscale", "16-bit", ...) -> count,
        among `label`'s images in `split`, or in both splits when None."""
        result: dict[str, int] = {}
        for f in self._chosen(label, split):
            result[f.color] = result.get(f.color, 0) + 1
        return dict(sorted(result.items(), key=lambda kv: (-kv[1], kv[0])))

    def fingerprint(self) -> str:
        """A short stable hash of which files, in which split and class, a report ran on."""
        rows = sorted((f.rel, f.split, f.label, f.size_bytes) for f in self.files)
        # ensure_ascii keeps names that are not valid UTF-8 (surrogate escapes) hashable.
        blob = json.dumps(rows, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return hashlib.blake2b(blob, digest_size=16).hexdigest()

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatasetScan:
        d = dict(data)
        d["files"] = [ImageFile(**f) for f in d.get("files", [])]
        d["problems"] = [Problem(**p) for p in d.get("problems", [])]
        d["class_names"] = list(d.get("class_names", []))
        return cls(**d)


def color_word(mode: str, *, sixteen_bit: bool = False, transparency: bool = False) -> str:
    """People's word for a Pillow mode: grayscale, palette, alpha, CMYK, 16-bit or RGB."""
    if sixteen_bit or mode.startswith("I;16"):
        return "16-bit"
    if mode == "P" and transparency:
        return "alpha"
    return COLOR_WORDS.get(mode, mode)


def printable(text: str) -> str:
    """`text` with each byte of a name that is not valid UTF-8 (which Python keeps as a lone
    surrogate) shown as U+FFFD: a strict UTF-8 terminal or file cannot encode a surrogate."""
    return _SURROGATES.sub("\ufffd", text)


_SURROGATES = re.compile("[\ud800-\udfff]")
