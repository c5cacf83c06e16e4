"""Look at an image folder before training on it: layout, classes, sizes, colour modes, problems.

`scan_dataset` reads file headers only (never pixels), so it is quick enough to run whenever a
folder is chosen, and it never writes anything. What it finds is a `DatasetScan`: the usable
files with their split and class, and a list of `Problem`s a person can act on. Anything odd in
the folder (a text file named `.jpg`, a cut-off download, a link that points nowhere, a file
deleted while we look) becomes a problem, never an exception; only a path that is not a folder
at all raises `DatasetError`.

Two layouts are understood:

- ``DIR/train/<class>/`` next to ``DIR/test/<class>/`` (or ``val/``, ``validation/``): "split".
- ``DIR/<class>/`` (or a ``train/`` with no test folder): "auto-split". The scan holds out a
  seeded, stratified share of each class for testing, the same one every time for a given seed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import stat
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from PIL import Image, UnidentifiedImageError

from xlagui.core.task import Cancelled, TaskState

DEFAULT_PIXEL_LIMIT = 89_478_485  # Pillow's own default for Image.MAX_IMAGE_PIXELS

TRAIN = "train"
TEST = "test"

TRAIN_FOLDER_NAMES = ("train", "training")
# When several are present the first in this order is the test folder; the others are ignored.
TEST_FOLDER_NAMES = ("test", "testing", "validation", "val", "valid")

# Files people keep next to their images. They are skipped without comment; any other file is
# opened, because an image is recognised by its content, not its name.
NON_IMAGE_EXTENSIONS = frozenset(
    {
        ".txt", ".csv", ".tsv", ".json", ".jsonl", ".md", ".rst", ".xml", ".html", ".htm",
        ".py", ".ipynb", ".sh", ".bat", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".log",
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".zip", ".tar", ".gz", ".tgz", ".bz2",
        ".xz", ".7z", ".rar", ".npy", ".npz", ".pkl", ".pickle", ".h5", ".hdf5", ".keras",
        ".pb", ".ckpt", ".mat", ".db", ".sqlite", ".lock", ".tmp", ".part", ".crdownload",
        ".mp4", ".mov", ".avi", ".mkv", ".webm", ".mp3", ".wav", ".flac", ".ogg",
    }
)  # fmt: skip
# Operating-system litter, compared in lower case. Names starting with "." are skipped anyway.
LITTER_NAMES = frozenset({"thumbs.db", "ehthumbs.db", "desktop.ini", "__macosx", "icon\r"})

# The formats an image extension promises; a mismatch is only worth a note.
EXTENSION_FORMATS: dict[str, frozenset[str]] = {
    ".jpg": frozenset({"JPEG", "MPO"}),
    ".jpeg": frozenset({"JPEG", "MPO"}),
    ".jpe": frozenset({"JPEG", "MPO"}),
    ".jfif": frozenset({"JPEG", "MPO"}),
    ".png": frozenset({"PNG"}),
    ".gif": frozenset({"GIF"}),
    ".bmp": frozenset({"BMP", "DIB"}),
    ".webp": frozenset({"WEBP"}),
    ".tif": frozenset({"TIFF"}),
    ".tiff": frozenset({"TIFF"}),
}
IMAGE_EXTENSIONS = frozenset(EXTENSION_FORMATS)
# The first bytes of the formats we check for truncation: a file that starts like an image but
# whose header cannot be read was cut short, not something else misnamed.
_SIGNATURES = (b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a")
_PNG_IEND = b"IEND\xaeB`\x82"
_JPEG_EOI = b"\xff\xd9"
# Some writers pad files to a block size after the end marker; a few bytes of that are fine.
_PADDING = b"\x00 \t\r\n\xff"
_TAIL_BYTES = 64
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows would otherwise translate line ends

SEVERITIES = ("error", "warning", "info")

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
    """Something about the dataset a person should know; "error" means training is refused."""

    kind: str  # see PROBLEM_KINDS
    severity: str  # "error", "warning" or "info"
    message: str  # one line a person understands, naming the file(s)
    paths: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PROBLEM_KINDS: dict[str, str] = {
    # one file, excluded from the dataset
    "not_an_image": "warning",
    "unreadable": "warning",
    "truncated": "warning",
    "too_large": "warning",
    "vanished": "warning",
    # one file, kept
    "misnamed": "info",
    "animated": "info",
    # the folder structure
    "stray_file": "info",
    "ignored_folder": "info",
    "symlink_loop": "info",
    "no_test_folder": "info",
    "empty_class": "warning",
    "class_mismatch": "error",  # or "warning" when the test folder merely lacks a class
    "too_few_classes": "error",
    "no_images": "error",
    # the contents as a whole
    "duplicate_in_class": "warning",
    "label_conflict": "warning",
    "leakage": "warning",
    "imbalance": "warning",
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
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def notes(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "info"]

    def files_for(self, split: str) -> list[ImageFile]:
        return [f for f in self.files if f.split == split]

    def counts(self) -> dict[str, dict[str, int]]:
        """split -> class -> number of usable images, with every class under both splits."""
        result = {s: dict.fromkeys(self.class_names, 0) for s in (TRAIN, TEST)}
        for f in self.files:
            result.setdefault(f.split, {}).setdefault(f.label, 0)
            result[f.split][f.label] += 1
        return result

    def size_range(self, split: str, label: str) -> tuple[int, int, int, int]:
        """(min width, min height, max width, max height); all zero when there are no images."""
        chosen = [f for f in self.files if f.split == split and f.label == label]
        if not chosen:
            return (0, 0, 0, 0)
        return (
            min(f.width for f in chosen),
            min(f.height for f in chosen),
            max(f.width for f in chosen),
            max(f.height for f in chosen),
        )

    def color_modes(self, split: str, label: str) -> dict[str, int]:
        """People's words for the colour modes met ("RGB", "grayscale", "16-bit", ...) -> count."""
        result: dict[str, int] = {}
        for f in self.files:
            if f.split == split and f.label == label:
                result[f.color] = result.get(f.color, 0) + 1
        return dict(sorted(result.items(), key=lambda kv: (-kv[1], kv[0])))

    def fingerprint(self) -> str:
        """A short stable hash of which files, in which split and class, a report ran on."""
        rows = sorted((f.rel, f.split, f.label, f.size_bytes) for f in self.files)
        # ensure_ascii keeps names that are not valid UTF-8 (surrogate escapes) hashable.
        blob = json.dumps(rows, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        return hashlib.blake2b(blob, digest_size=16).hexdigest()

    def summary_text(self, max_paths: int = 3) -> str:
        """A readable multi-line summary: layout, counts, sizes and colour modes, problems."""
        lines = [f"Dataset: {self.root}", f"Layout: {self._layout_words()}"]
        lines.append(f"Classes ({len(self.class_names)}): {', '.join(self.class_names) or 'none'}")
        counts = self.counts()
        for split in (TRAIN, TEST):
            per_class = counts.get(split, {})
            folder = self.train_folder if split == TRAIN else self.test_folder
            where = f" (from {folder}/)" if self.layout == "split" and folder else ""
            lines.append(f"{split}{where}: {_plural(sum(per_class.values()), 'image')}")
            width = max((len(c) for c in per_class), default=0)
            for label, n in per_class.items():
                if not n:
                    lines.append(f"  {label:<{width}}  no images")
                    continue
                min_w, min_h, max_w, max_h = self.size_range(split, label)
                sizes = (
                    f"{min_w}x{min_h}"
                    if (min_w, min_h) == (max_w, max_h)
                    else f"{min_w}x{min_h} to {max_w}x{max_h}"
                )
                modes = ", ".join(f"{w} {c}" for w, c in self.color_modes(split, label).items())
                lines.append(f"  {label:<{width}}  {_plural(n, 'image')}, {sizes}, {modes}")
        if self.problems:
            tally = ", ".join(
                _plural(n, word)
                for n, word in (
                    (len(self.errors), "error"),
                    (len(self.warnings), "warning"),
                    (len(self.notes), "note"),
                )
                if n
            )
            lines.append(f"Problems: {tally}")
            groups: dict[tuple[str, str], list[Problem]] = {}
            for p in self.problems:
                groups.setdefault((p.severity, p.kind), []).append(p)
            for (severity, kind), group in sorted(
                groups.items(), key=lambda kv: (SEVERITIES.index(kv[0][0]), kv[0][1])
            ):
                lines.append(f"  {severity} {kind} ({len(group)}):")
                lines.extend(f"    {p.message}" for p in group[:max_paths])
                if len(group) > max_paths:
                    lines.append(f"    ... and {len(group) - max_paths} more")
        else:
            lines.append("Problems: none")
        verdict = "ready to train" if self.ok else "training refused until the errors are fixed"
        lines.append(
            f"Scanned {_plural(self.scanned_files, 'file')} in {self.seconds:.2f} s: {verdict}."
        )
        return _printable("\n".join(lines))

    def _layout_words(self) -> str:
        if self.layout == "split":
            return (
                f"{self.train_folder or TRAIN}/ and {self.test_folder}/ folders, "
                "each with one sub-folder per class"
            )
        held_out = (
            f"the scan held out {self.holdout_percent}% of each class for testing "
            f"(seed {self.seed}, the same files every time; at least one per class of two or more)"
        )
        if self.train_folder:
            return f"{self.train_folder}/ with no test folder next to it: {held_out}"
        return f"one folder per class, no test folder: {held_out}"

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
    scanner = _Scanner(os.path.abspath(os.fspath(root)), pixel_limit, state)
    return scanner.run(holdout_percent, seed, started)


# ---------------------------------------------------------------------------------------------
# The scan itself


@dataclass
class _Candidate:
    path: str
    rel: str
    split: str  # "train", "test", or "" until an auto-split assigns one
    label: str
    ext: str


class _Scanner:
    def __init__(self, root: str, pixel_limit: int, state: TaskState | None) -> None:
        self.root = root
        self.pixel_limit = pixel_limit
        self.state = state
        self.problems: list[Problem] = []
        # path -> the file's last bytes, read anyway for the truncation check; with the size
        # they tell most different files apart without hashing them.
        self.tails: dict[str, bytes] = {}

    def problem(self, kind: str, message: str, paths: list[str], severity: str = "") -> None:
        # `paths` keep names exactly as on disk; the message is for people and any terminal.
        message = _printable(message)
        self.problems.append(Problem(kind, severity or PROBLEM_KINDS[kind], message, paths))

    def check_stop(self) -> None:
        if self.state is not None and self.state.is_interruption_requested():
            raise Cancelled()

    def progress(self, fraction: float) -> None:
        if self.state is not None:
            self.state.set_progress(fraction)

    def rel(self, path: str) -> str:
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    # -- layout -----------------------------------------------------------------------------

    def run(self, holdout_percent: int, seed: int, started: float) -> DatasetScan:
        self.progress(0.0)
        top_dirs, top_files = self.list_root()
        for _name, path in top_files:
            self.stray(path, "the dataset folder")

        train_dir = _pick(top_dirs, TRAIN_FOLDER_NAMES)
        test_dir = _pick(top_dirs, TEST_FOLDER_NAMES) if train_dir else None
        classes: dict[str, dict[str, str]] = {TRAIN: {}, TEST: {}}  # split -> label -> folder
        if train_dir is not None:
            layout = "split" if test_dir is not None else "auto-split"
            for path in sorted(top_dirs.values()):
                if path not in (train_dir, test_dir):
                    self.problem(
                        "ignored_folder",
                        f"Folder {self.rel(path)}/ is ignored: only "
                        f"{os.path.basename(train_dir)}/"
                        + (f" and {os.path.basename(test_dir)}/" if test_dir else "")
                        + " are read next to each other",
                        [path],
                    )
            classes[TRAIN] = self.class_folders(train_dir)
            if test_dir is not None:
                classes[TEST] = self.class_folders(test_dir)
            else:
                self.problem(
                    "no_test_folder",
                    f"{self.rel(train_dir)}/ has no test/ (or val/, validation/) folder next to "
                    f"it, so {holdout_percent}% of each class is held out for testing instead",
                    [train_dir],
                )
        else:
            layout = "auto-split"
            classes[TRAIN] = dict(top_dirs)

        candidates: list[_Candidate] = []
        for split, folders in classes.items():
            # An auto-split assigns the split later; until then the split is left blank.
            walk_split = split if layout == "split" else ""
            for label, folder in folders.items():
                candidates.extend(self.walk_class(folder, walk_split, label))
        candidates.sort(key=lambda c: (c.split, c.label, c.rel))

        files = self.probe_all(candidates)
        digests = self.find_identical(files)
        files = [f for f in files if f.path not in digests or digests[f.path]]
        if layout == "auto-split":
            _auto_split(files, digests, holdout_percent, seed)
        class_names = self.check_classes(layout, classes, files, test_dir)
        # Files of a class that is not trained on cannot be used; the mismatch was reported.
        files = [f for f in files if f.label in class_names]
        files.sort(key=lambda f: (f.split, f.label, f.rel))
        self.report_identical(files, digests)
        self.check_balance(files, class_names)

        self.progress(1.0)
        order = {s: i for i, s in enumerate(SEVERITIES)}
        problems = sorted(self.problems, key=lambda p: order.get(p.severity, len(order)))
        return DatasetScan(
            root=self.root,
            layout=layout,
            test_folder=os.path.basename(test_dir) if test_dir else None,
            holdout_percent=holdout_percent,
            seed=seed,
            class_names=class_names,
            files=files,
            problems=problems,
            scanned_files=len(candidates),
            seconds=time.perf_counter() - started,
            train_folder=os.path.basename(train_dir) if train_dir else None,
        )

    def list_root(self) -> tuple[dict[str, str], list[tuple[str, str]]]:
        if not os.path.exists(self.root):
            if os.path.islink(self.root):
                raise DatasetError(f"{self.root} is a link to something that does not exist")
            raise DatasetError(f"{self.root} does not exist")
        if not os.path.isdir(self.root):
            raise DatasetError(f"{self.root} is a file, not a folder of images")
        try:
            dirs, files = self.list_dir(self.root, strict=True, all_files=True)
        except OSError as exc:
            raise DatasetError(f"cannot read the folder {self.root}: {_reason(exc)}") from None
        return dict(dirs), files

    def list_dir(
        self, path: str, strict: bool = False, all_files: bool = False
    ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(name, path) of the sub-folders and of the candidate files, sorted by name.

        Hidden entries, OS litter and (unless `all_files`) files with a known non-image
        extension are left out. An unreadable or vanished folder becomes a problem (or raises,
        when `strict`).
        """
        dirs: list[tuple[str, str]] = []
        files: list[tuple[str, str]] = []
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if strict:
                raise
            if isinstance(exc, FileNotFoundError | NotADirectoryError):
                self.problem(
                    "vanished", f"Folder {self.rel(path)}/ vanished during the scan", [path]
                )
            else:
                self.problem(
                    "unreadable",
                    f"Folder {self.rel(path)}/ cannot be read: {_reason(exc)}",
                    [path],
                )
            return dirs, files
        for entry in entries:
            self.check_stop()
            name = entry.name
            if name.startswith(".") or name.lower() in LITTER_NAMES:
                continue
            is_link = False
            try:
                # Asked first: a link to itself (or a chain too long) fails the other two, and
                # must still reach the probe, which reports it as unreadable.
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
                is_file = not is_dir and entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir:
                dirs.append((name, entry.path))
            elif not all_files and os.path.splitext(name)[1].lower() in NON_IMAGE_EXTENSIONS:
                continue
            elif is_file or is_link:
                # A link whose target is missing is neither file nor folder; the probe says so.
                files.append((name, entry.path))
            # Sockets, pipes and devices are not images, and opening a pipe would block.
        return dirs, files

    def class_folders(self, split_dir: str) -> dict[str, str]:
        dirs, files = self.list_dir(split_dir, all_files=True)
        for _name, path in files:
            self.stray(path, f"{self.rel(split_dir)}/")
        return dict(dirs)

    def stray(self, path: str, where: str) -> None:
        if os.path.splitext(path)[1].lower() in NON_IMAGE_EXTENSIONS:
            return  # a README or a labels file next to the data is normal, not a problem
        self.problem(
            "stray_file",
            f"{self.rel(path)} is ignored: files directly in {where} belong to no class "
            "(put each image in a folder named after its class)",
            [path],
        )

    def walk_class(self, folder: str, split: str, label: str) -> list[_Candidate]:
        """Every candidate file under a class folder, at any depth, following folder links but
        never into a folder that contains the link (which would loop forever)."""
        found: list[_Candidate] = []
        # The folders above the class folder count as ancestors: a link back to the dataset
        # root or the split folder is a loop as well.
        chain = [self.root]
        if os.path.dirname(folder) != self.root:
            chain.append(os.path.dirname(folder))
        chain.append(folder)
        ancestors: set[tuple[int, int]] = set()
        for path in chain:
            key = _dir_key(path)
            if key is not None:
                ancestors.add(key)
        stack = [(folder, self.rel(folder) + "/", frozenset(ancestors))]
        while stack:
            path, prefix, above = stack.pop()
            dirs, files = self.list_dir(path)
            found.extend(
                _Candidate(
                    file_path, prefix + name, split, label, os.path.splitext(name)[1].lower()
                )
                for name, file_path in files
            )
            for name, sub in reversed(dirs):
                try:
                    st = os.stat(sub)
                except FileNotFoundError:
                    continue  # gone already; nothing in it to report
                except OSError as exc:  # a path longer than the system allows, for one
                    self.problem(
                        "unreadable",
                        f"Folder {prefix}{name}/ cannot be read: {_reason(exc)}",
                        [sub],
                    )
                    continue
                key = (st.st_dev, st.st_ino)
                if key in above:
                    self.problem(
                        "symlink_loop",
                        f"{prefix}{name} links back to a folder it is inside; not followed",
                        [sub],
                    )
                    continue
                stack.append((sub, f"{prefix}{name}/", above | {key}))
        return found

    # -- files ------------------------------------------------------------------------------

    def probe_all(self, candidates: list[_Candidate]) -> list[ImageFile]:
        files: list[ImageFile] = []
        total = max(1, len(candidates))
        with _pillow_bomb_check_off():
            for i, cand in enumerate(candidates):
                self.check_stop()
                image = self.probe(cand)
                if image is not None:
                    files.append(image)
                self.progress(0.9 * (i + 1) / total)
        return files

    def probe(self, cand: _Candidate) -> ImageFile | None:
        path, rel = cand.path, cand.rel
        try:
            # Non-blocking, so that a pipe put in place of a listed file cannot hang the scan;
            # it changes nothing for regular files.
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | _O_BINARY)
        except FileNotFoundError:
            if os.path.islink(path):
                self.problem(
                    "unreadable",
                    f"{rel} is a broken link (to {_readlink(path)}, which is missing)",
                    [path],
                )
            else:
                self.problem("vanished", f"{rel} vanished during the scan", [path])
            return None
        except OSError as exc:
            self.problem("unreadable", f"{rel} cannot be read: {_reason(exc)}", [path])
            return None
        with os.fdopen(fd, "rb") as fh:
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    return None  # replaced by a folder or a pipe since it was listed
                if st.st_size == 0:
                    self.problem("not_an_image", f"{rel} is empty (0 bytes)", [path])
                    return None
                return self.probe_open(cand, fh, st.st_size)
            except OSError as exc:
                self.problem("unreadable", f"{rel} cannot be read: {_reason(exc)}", [path])
                return None

    def probe_open(self, cand: _Candidate, fh: BinaryIO, size: int) -> ImageFile | None:
        path, rel = cand.path, cand.rel
        fh.seek(0)
        header = self.pillow_header(cand, fh)
        if header is None:
            return None
        width, height, fmt, mode, frames, color = header
        if width * height > self.pixel_limit:
            self.problem(
                "too_large",
                f"{rel} is refused: {width}x{height} is {width * height:,} pixels, more than the "
                f"limit of {self.pixel_limit:,} (a possible decompression bomb)",
                [path],
            )
            return None
        fh.seek(max(0, size - _TAIL_BYTES))
        tail = fh.read(_TAIL_BYTES)
        if fmt in ("JPEG", "MPO") and not _jpeg_is_complete(fh, tail):
            self.problem("truncated", f"{rel} is truncated: its JPEG end marker is missing", [path])
            return None
        if fmt == "PNG" and not _png_is_complete(fh, size, tail):
            self.problem("truncated", f"{rel} is truncated: its PNG end chunk is missing", [path])
            return None
        if cand.ext in EXTENSION_FORMATS and fmt not in EXTENSION_FORMATS[cand.ext]:
            self.problem(
                "misnamed",
                f"{rel} is a {fmt} image despite its {cand.ext} name; it is used as such",
                [path],
            )
        self.tails[path] = tail
        if frames > 1:
            self.problem(
                "animated", f"{rel} is animated ({frames} frames); the first frame is used", [path]
            )
        return ImageFile(
            path=path,
            rel=rel,
            split=cand.split,
            label=cand.label,
            width=width,
            height=height,
            format=fmt,
            mode=mode,
            size_bytes=size,
            frames=frames,
            color=color,
        )

    def pillow_header(
        self, cand: _Candidate, fh: BinaryIO
    ) -> tuple[int, int, str, str, int, str] | None:
        """(width, height, format, mode, frames, colour word) as Pillow reads them from the
        header, or None after reporting why the file is unusable."""
        path, rel = cand.path, cand.rel
        try:
            im = Image.open(fh)
        except Image.DecompressionBombError as exc:
            self.problem("too_large", f"{rel} is refused: {exc}", [path])
            return None
        except Exception as exc:  # any failure to read a header means "unusable"
            fh.seek(0)
            head = fh.read(16)
            if head.startswith(_SIGNATURES):
                self.problem(
                    "truncated", f"{rel} is cut short or damaged: its header cannot be read", [path]
                )
            elif isinstance(exc, UnidentifiedImageError):
                self.problem("not_an_image", f"{rel} is not an image", [path])
            else:
                self.problem("not_an_image", f"{rel} is not a readable image: {exc}", [path])
            return None
        with im:
            width, height = im.size
            fmt = im.format or "unknown"
            mode = im.mode
            color = color_word(
                mode,
                sixteen_bit=_is_sixteen_bit(im),
                transparency="transparency" in im.info,
            )
            frames = 1
            try:
                # MPO is a JPEG with extra pictures (depth maps, previews), not an animation.
                if fmt != "MPO" and getattr(im, "is_animated", False):
                    frames = int(getattr(im, "n_frames", 1))
            except Exception:  # counting frames reads past the header, which may be cut
                self.problem(
                    "truncated", f"{rel} is cut short or damaged: its frames cannot be read", [path]
                )
                return None
        return width, height, fmt, mode, frames, color

    # -- duplicates -------------------------------------------------------------------------

    def find_identical(self, files: list[ImageFile]) -> dict[str, str]:
        """path -> content digest for every file whose size and last bytes equal another's (""
        if it could not be read again). Only those can have a twin, so only those are read."""
        by_size: dict[tuple[int, bytes], list[ImageFile]] = defaultdict(list)
        for f in files:
            by_size[(f.size_bytes, self.tails.get(f.path, b""))].append(f)
        to_hash = [f for group in by_size.values() if len(group) > 1 for f in group]
        digests: dict[str, str] = {}
        total = max(1, len(to_hash))
        for i, f in enumerate(to_hash):
            self.check_stop()
            try:
                digests[f.path] = _digest(f.path)
            except FileNotFoundError:
                self.problem("vanished", f"{f.rel} vanished during the scan", [f.path])
                digests[f.path] = ""
            except OSError as exc:
                self.problem("unreadable", f"{f.rel} cannot be read: {_reason(exc)}", [f.path])
                digests[f.path] = ""
            self.progress(0.9 + 0.1 * (i + 1) / total)
        return digests

    def report_identical(self, files: list[ImageFile], digests: dict[str, str]) -> None:
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
                    self.problem(
                        "duplicate_in_class",
                        f"{_names(same)} are identical copies within class {same[0].label!r}",
                        [f.path for f in same],
                    )
            labels = sorted({f.label for f in group})
            if len(labels) > 1:
                self.problem(
                    "label_conflict",
                    f"The same image is labelled {' and '.join(map(repr, labels))}: "
                    f"{_names(group)}",
                    [f.path for f in group],
                )
            if len({f.split for f in group}) > 1:
                self.problem(
                    "leakage",
                    f"The same image is in both training and test data, so the test accuracy "
                    f"flatters the model: {_names(group)}",
                    [f.path for f in group],
                )

    # -- classes ----------------------------------------------------------------------------

    def check_classes(
        self,
        layout: str,
        classes: dict[str, dict[str, str]],
        files: list[ImageFile],
        test_dir: str | None,
    ) -> list[str]:
        counts: dict[tuple[str, str], int] = defaultdict(int)
        for f in files:
            counts[(f.split, f.label)] += 1

        def n_images(split: str, label: str) -> int:
            if layout == "split":
                return counts[(split, label)]
            return counts[(TRAIN, label)] + counts[(TEST, label)]

        for split in (TRAIN, TEST) if layout == "split" else (TRAIN,):
            for label, folder in classes[split].items():
                if not n_images(split, label):
                    self.problem(
                        "empty_class",
                        f"Class folder {self.rel(folder)}/ holds no usable images and is left out",
                        [folder],
                    )
        class_names = sorted(label for label in classes[TRAIN] if n_images(TRAIN, label))

        if not files:
            self.problem(
                "no_images",
                f"No usable images found in {self.root}: put them in one folder per class "
                "(for example cats/ and dogs/), or in train/<class>/ and test/<class>/",
                [self.root],
            )
            return class_names
        if layout == "split" and test_dir is not None:
            test_name = os.path.basename(test_dir)
            extra = sorted(
                label
                for label in classes[TEST]
                if counts[(TEST, label)] and label not in class_names
            )
            for label in extra:
                self.problem(
                    "class_mismatch",
                    f"{test_name}/{label}/ has images but there is no {label!r} class to train on "
                    f"(class folders in {test_name}/ must match those in the training folder)",
                    [classes[TEST][label]],
                    severity="error",
                )
            for label in class_names:
                if label not in classes[TEST]:
                    self.problem(
                        "class_mismatch",
                        f"{test_name}/ has no {label}/ folder: class {label!r} is trained but "
                        "never tested",
                        [test_dir],
                        severity="warning",
                    )
            if not any(counts[(TEST, label)] for label in class_names) and not extra:
                self.problem(
                    "no_images",
                    f"The test folder {test_name}/ holds no usable images of the trained classes",
                    [test_dir],
                )
        if len(class_names) < 2:
            found = f"only {class_names[0]!r}" if class_names else "none"
            self.problem(
                "too_few_classes",
                f"At least 2 classes with images are needed to train a classifier; found {found}",
                [self.root],
            )
        return class_names

    def check_balance(self, files: list[ImageFile], class_names: list[str]) -> None:
        train = {label: 0 for label in class_names}
        for f in files:
            if f.split == TRAIN:
                train[f.label] += 1
        present = {k: v for k, v in train.items() if v}
        if len(present) < 2:
            return
        big = max(present, key=lambda k: (present[k], k))
        small = min(present, key=lambda k: (present[k], k))
        if present[big] > 3 * present[small]:
            self.problem(
                "imbalance",
                f"Classes are strongly imbalanced: {big!r} has {present[big]} training images, "
                f"{small!r} only {present[small]} (more than 3 times fewer); accuracy will favour "
                f"{big!r}",
                [],
            )


# ---------------------------------------------------------------------------------------------
# Helpers


def _pick(dirs: dict[str, str], names: tuple[str, ...]) -> str | None:
    lowered: dict[str, str] = {}
    for name in sorted(dirs):
        lowered.setdefault(name.lower(), dirs[name])
    for wanted in names:
        if wanted in lowered:
            return lowered[wanted]
    return None


def _auto_split(
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


def _is_sixteen_bit(im: Image.Image) -> bool:
    if im.mode.startswith("I;16"):
        return True
    if im.format not in ("PNG", "TIFF"):
        return False  # BMP's "BGR;16" is 16 bits per pixel, not per channel
    for tile in getattr(im, "tile", None) or []:
        args = tile[3] if len(tile) > 3 else None
        rawmode = args[0] if isinstance(args, tuple) and args else args
        if isinstance(rawmode, str) and ";16" in rawmode:
            return True
    return False


def _jpeg_is_complete(fh: BinaryIO, tail: bytes) -> bool:
    """Whether the JPEG's end-of-image marker is there, read from the last bytes only.

    Phones append data after the marker (motion photos, trailers); only then is the file read
    once, to look for the marker after the start of the main image's compressed data.
    """
    if tail.rstrip(_PADDING).endswith(_JPEG_EOI):
        return True
    fh.seek(0)
    data = fh.read()
    scan_start = _jpeg_scan_start(data)
    return scan_start is not None and data.find(_JPEG_EOI, scan_start) != -1


def _jpeg_scan_start(data: bytes) -> int | None:
    """Offset just after the first start-of-scan segment header, walking the marker segments
    so that an embedded thumbnail's markers (inside APP1) are skipped."""
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:  # fill byte
            pos += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            pos += 2
            continue
        length = int.from_bytes(data[pos + 2 : pos + 4], "big")
        if marker == 0xDA:
            return pos + 2 + length
        pos += 2 + length
    return None


def _png_is_complete(fh: BinaryIO, size: int, tail: bytes) -> bool:
    """Whether the PNG's IEND chunk is there: at the very end, or (when something follows it)
    found by hopping over the chunks by their lengths, which reads 8 bytes per chunk."""
    if tail.rstrip(_PADDING).endswith(_PNG_IEND):
        return True
    pos = 8
    while pos + 8 <= size:
        fh.seek(pos)
        head = fh.read(8)
        if len(head) < 8:
            return False
        length = int.from_bytes(head[:4], "big")
        if head[4:8] == b"IEND":
            return pos + 12 <= size
        pos += 12 + length
    return False


def _dir_key(path: str) -> tuple[int, int] | None:
    """What identifies a folder whatever link led to it: its device and inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _digest(path: str) -> str:
    h = hashlib.blake2b(digest_size=20)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc) or type(exc).__name__


def _readlink(path: str) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _names(files: list[ImageFile], limit: int = 4) -> str:
    shown = ", ".join(f.rel for f in files[:limit])
    return shown if len(files) <= limit else f"{shown} and {len(files) - limit} more"


def _printable(text: str) -> str:
    """`text` with each byte of a name that is not valid UTF-8 (which Python keeps as a lone
    surrogate) shown as U+FFFD: a strict UTF-8 terminal or file cannot encode a surrogate."""
    return _SURROGATES.sub("\ufffd", text)


_SURROGATES = re.compile("[\ud800-\udfff]")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n:,} {word}s"


_bomb_check_lock = threading.Lock()
_bomb_check_users = 0
_bomb_check_saved: int | None = None


@contextmanager
def _pillow_bomb_check_off() -> Iterator[None]:
    """Let Pillow open any header, so the scan can name the size of an oversized image itself.

    Pillow would otherwise raise (or warn) in `Image.open` before we see the size. The check
    is process-wide, so concurrent scans share one switch-off and the last one restores it.
    Pixels are never decoded here, so nothing of the protection is lost for the scan.
    """
    global _bomb_check_users, _bomb_check_saved
    with _bomb_check_lock:
        if _bomb_check_users == 0:
            _bomb_check_saved = Image.MAX_IMAGE_PIXELS
            Image.MAX_IMAGE_PIXELS = None
        _bomb_check_users += 1
    try:
        yield
    finally:
        with _bomb_check_lock:
            _bomb_check_users -= 1
            if _bomb_check_users == 0:
                Image.MAX_IMAGE_PIXELS = _bomb_check_saved
