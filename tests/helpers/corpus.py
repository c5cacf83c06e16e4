"""A corpus of bad (and merely unusual) datasets, each with the outcome xlagui must give.

Every case is built by the tests from nothing (Pillow, a few crafted bytes), never read from a
binary fixture. A case expects one of three outcomes:

- a refusal before any scan: the path is no folder of images (`raises`: `DatasetError` in the
  API, exit code 2 and the message on stderr from `xlagui scan`);
- a scan that refuses training (`refused`: an "error" problem; exit code 1);
- a usable scan (exit code 0) that names each bad file and leaves it out (`excluded`), keeps
  odd but valid images (`kept`, with the colour word the scan gives them), and has exactly
  `usable` files.

`problems` lists every problem the scan must report, no more and no fewer, each with words its
message must contain and, where it is about one path, that path (relative to the dataset).

What cannot be made real here is simulated by `Faults`, the same way in-process and in a CLI
subprocess (through a `sitecustomize` shim): a file or folder that cannot be read (root reads
everything; where permissions do apply to the tests, they chmod for real instead), and a
folder deleted just as the scan is about to list it. A read-only dataset is a real read-only
bind mount where mounting is allowed, and a tree made read-only with chmod otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from tests.helpers.images import (
    copy,
    make_animated_gif,
    make_class_folders,
    make_file,
    make_image,
    make_jpeg,
    make_png,
    make_png_header,
    make_rgb16_png,
    make_split_dataset,
    noise_image,
    truncate,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
FAULTS_ENV = "XLAGUI_TEST_FAULTS"


@dataclass(frozen=True)
class Expected:
    """One problem the scan must report."""

    kind: str
    severity: str
    says: str = ""  # words the message contains
    about: str = ""  # the path it names, relative to the dataset ("" when it names none)


@dataclass(frozen=True)
class Faults:
    """What the operating system would do to some paths (relative to the dataset)."""

    deny: tuple[str, ...] = ()  # reading the file or listing the folder: permission denied
    vanish: tuple[str, ...] = ()  # folders deleted just before the scan lists them


@dataclass(frozen=True)
class Case:
    name: str
    what: str  # the bad input, in a few words
    build: Callable[[Path], Path]  # (an empty folder) -> the path given to the scan
    problems: tuple[Expected, ...] = ()
    refused: bool = False  # the scan works but training is refused (an "error" problem)
    raises: str = ""  # no scan at all: DatasetError / exit code 2 with this message
    usable: int = 0
    excluded: tuple[str, ...] = ()  # files on disk the scan must leave out
    kept: Mapping[str, str] = field(default_factory=dict)  # rel path -> colour word
    classes: tuple[str, ...] | None = None
    faults: Faults = Faults()
    read_only: bool = False  # the dataset is mounted read-only (or, failing that, chmod a-w)
    # tree_snapshot cannot stat paths longer than the system allows.
    snapshot: bool = True

    @property
    def exit_code(self) -> int:
        return 2 if self.raises else 1 if self.refused else 0

    def outcome(self) -> str:
        """The expected outcome in words, for RELIABILITY.md."""
        if self.raises:
            return f'refused, exit 2: "{self.raises}"'
        found = ", ".join(f"{p.kind} ({p.severity})" for p in self.problems) or "no problem"
        verdict = "training refused, exit 1" if self.refused else "usable, exit 0"
        left_out = f"; {len(self.excluded)} left out" if self.excluded else ""
        kept = f"; kept as {', '.join(sorted(set(self.kept.values())))}" if self.kept else ""
        return f"{verdict}: {found}; {self.usable} usable{left_out}{kept}"


# -- building blocks --------------------------------------------------------------------------


def _data(base: Path) -> Path:
    root = base / "data"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _pets(base: Path, n: int = 5) -> Path:
    """cats/ and dogs/ with `n` good 8x8 JPEGs each (auto-split)."""
    root = _data(base)
    make_class_folders(root, {"cats": n, "dogs": n})
    return root


def _pets_split(base: Path) -> Path:
    """train/{cats,dogs} with 3 images each, test/{cats,dogs} with 1."""
    root = _data(base)
    make_split_dataset(root, {"cats": 3, "dogs": 3}, {"cats": 1, "dogs": 1})
    return root


def _pets_with(*makers: Callable[[Path], object]) -> Callable[[Path], Path]:
    """A builder: `_pets`, then each maker called with the dataset root."""

    def build(base: Path) -> Path:
        root = _pets(base)
        for make in makers:
            make(root)
        return root

    return build


def make_jpeg_header(path: Path, width: int, height: int) -> Path:
    """A complete 8x8 JPEG whose frame header claims `width` x `height` (a few hundred bytes)."""
    make_jpeg(path)
    data = bytearray(path.read_bytes())
    sof = data.index(b"\xff\xc0")  # baseline frame header: FFC0 len(2) precision(1) H(2) W(2)
    data[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    path.write_bytes(bytes(data))
    return path


def make_gif(path: Path, size: tuple[int, int] = (8, 8), frames: int = 1) -> Path:
    """A well-formed GIF: each frame is noise quantised to an adaptive palette."""
    path.parent.mkdir(parents=True, exist_ok=True)
    images = [
        noise_image(size, "RGB", seed=f"{path}:{i}").convert("P", palette=Image.Palette.ADAPTIVE)
        for i in range(frames)
    ]
    images[0].save(path, "GIF", save_all=True, append_images=images[1:], duration=100, loop=0)
    return path


def make_gif_past_palette(path: Path, size: tuple[int, int] = (8, 8)) -> Path:
    """A GIF whose pixels use colour indices up to 255 with a 2-entry colour table: what Pillow
    writes for a palette image without a palette. Pillow reads it; giflib-based decoders
    (TensorFlow's) refuse it, as they do some GIFs found in the wild."""
    path = make_image(path, size, "P", format="GIF")
    assert path.read_bytes()[10] & 0x87 == 0x80  # a global colour table of 2 entries
    return path


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _deep_dirs(root: Path, names: list[str]) -> int:
    """Create root/names[0]/names[1]/... one level at a time through folder descriptors, so the
    whole path may be longer than the system would accept in one piece; returns the deepest
    folder's descriptor."""
    fd = os.open(root, os.O_RDONLY)
    for name in names:
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    return fd


# -- the builders -----------------------------------------------------------------------------


def _empty(base: Path) -> Path:
    return _data(base)


def _missing(base: Path) -> Path:
    return base / "no such folder"


def _a_file(base: Path) -> Path:
    return make_jpeg(base / "photo.jpg")


def _dangling_link(base: Path) -> Path:
    link = base / "data"
    link.symlink_to(base / "was here", target_is_directory=True)
    return link


def _one_class(base: Path) -> Path:
    root = _data(base)
    make_class_folders(root, {"cats": 5})
    return root


def _class_folders_empty(base: Path) -> Path:
    root = _data(base)
    (root / "cats").mkdir()
    make_file(root / "dogs" / "notes.txt", "to do: take photos")
    return root


def _empty_class_among_good(base: Path) -> Path:
    root = _pets(base)
    (root / "birds").mkdir()
    return root


def _all_bad(base: Path) -> Path:
    root = _data(base)
    make_file(root / "cats" / "a.jpg", "not a picture")
    make_file(root / "dogs" / "b.jpg")
    return root


def _truncated_jpeg(root: Path) -> None:
    truncate(make_jpeg(root / "cats" / "cut.jpg", size=(64, 64)), keep=0.5)


def _truncated_png(root: Path) -> None:
    truncate(make_png(root / "dogs" / "cut.png", size=(64, 64)), keep=0.5)


def _png_bomb(root: Path) -> None:
    bomb = make_png_header(root / "cats" / "bomb.png", 20_000, 20_000)
    assert bomb.stat().st_size < 200  # crafted: the header claims it, no pixels are there


def _jpeg_bomb(root: Path) -> None:
    bomb = make_jpeg_header(root / "dogs" / "bomb.jpg", 20_000, 20_000)
    assert bomb.stat().st_size < 2000


def _self_link(root: Path) -> None:
    (root / "cats" / "me.jpg").symlink_to(root / "cats" / "me.jpg")


def _symlink_loops(root: Path) -> None:
    (root / "cats" / "again").symlink_to(root / "cats", target_is_directory=True)
    (root / "dogs" / "sub").mkdir()
    (root / "dogs" / "sub" / "up").symlink_to(root, target_is_directory=True)


def _deep(root: Path) -> None:
    deep = root / "cats"
    for i in range(100):
        deep = deep / f"level{i:03d}"
    make_jpeg(deep / "deep.jpg")


def _beyond_path_max(root: Path) -> None:
    # 25 levels of 200-character names: about 5,000 characters, more than PATH_MAX (4,096).
    fd = _deep_dirs(root / "cats", ["d" * 200] * 25)
    try:
        out = os.open("lost.jpg", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, (root / "cats" / "cats_0000.jpg").read_bytes()[::-1])
        os.close(out)
    finally:
        os.close(fd)


def _non_ascii(base: Path) -> Path:
    root = base / "my data (2024) ✓"
    make_jpeg(root / "chats été" / "ïmage 1.jpg")
    make_png(root / "chats été" / "日本 語.png")
    make_jpeg(root / "dogs & co" / "a b.jpeg")
    make_jpeg(root / "dogs & co" / " leading space.jpg")
    make_file(root / "dogs & co" / "ça ne va pas.jpg", "pas une image")
    return root


def _undecodable(base: Path) -> Path:
    """Names that are not valid UTF-8 (Latin-1 bytes, as old zip files leave them)."""
    root = _pets(base)
    latin = os.fsdecode(b"caf\xe9")
    make_jpeg(root / latin / os.fsdecode(b"cr\xe8me.jpg"), seed=1)
    make_jpeg(root / latin / "plain.jpg", seed=2)
    make_jpeg(root / latin / "plain 2.jpg", seed=3)
    make_file(root / "dogs" / os.fsdecode(b"d\xe9j\xe0.jpg"), "not a picture")
    return root


def make_seeded_class_folders(
    root: Path, counts: Mapping[str, int], size: tuple[int, int] = (8, 8)
) -> None:
    """`make_class_folders` for paths that are not valid UTF-8, which cannot seed the noise."""
    for label, n in counts.items():
        for i in range(n):
            make_jpeg(root / label / f"{label}_{i:04d}.jpg", size, seed=f"{label}:{i}")


def _undecodable_root(base: Path) -> Path:
    root = base / os.fsdecode(b"donn\xe9es")
    make_seeded_class_folders(root, {"cats": 5, "dogs": 5})
    return root


def _litter(root: Path) -> None:
    make_file(root / ".DS_Store", b"\0\0\0\1Bud1")
    make_file(root / "cats" / ".DS_Store", b"\0\0\0\1Bud1")
    make_file(root / "cats" / "Thumbs.db", b"\xd0\xcf\x11\xe0")
    make_file(root / "dogs" / "desktop.ini", "[.ShellClassInfo]")
    make_file(root / "dogs" / "._dogs_0000.jpg", b"\0\5\x16\7 AppleDouble")
    make_file(root / "__MACOSX" / "cats" / "._cats_0000.jpg", b"\0\5\x16\7")


def _stray(root: Path) -> None:
    make_jpeg(root / "loose.jpg")
    make_file(root / "README.md", "my photos")


def _class_mismatch(base: Path) -> Path:
    root = _data(base)
    make_split_dataset(root, {"cats": 3, "dogs": 3}, {"cats": 1, "wolves": 1})
    return root


def _empty_test(base: Path) -> Path:
    root = _data(base)
    make_class_folders(root / "train", {"cats": 3, "dogs": 3})
    (root / "test" / "cats").mkdir(parents=True)
    (root / "test" / "dogs").mkdir()
    return root


def _two_classes_same_image(base: Path) -> Path:
    root = _pets_split(base)
    copy(root / "train" / "cats" / "cats_0001.jpg", root / "train" / "dogs" / "who.jpg")
    return root


def _train_test_same_image(base: Path) -> Path:
    root = _pets_split(base)
    copy(root / "train" / "dogs" / "dogs_0002.jpg", root / "test" / "dogs" / "seen.jpg")
    return root


def _duplicate_in_class(base: Path) -> Path:
    root = _pets_split(base)
    copy(root / "train" / "cats" / "cats_0001.jpg", root / "train" / "cats" / "again.jpg")
    return root


def _imbalance(base: Path) -> Path:
    root = _data(base)
    make_split_dataset(root, {"many": 13, "few": 3}, {"many": 1, "few": 1})
    return root


def _read_only(base: Path) -> Path:
    root = _pets_split(base)
    make_file(root / "train" / "cats" / "bad.jpg", "not a picture")
    truncate(make_png(root / "test" / "dogs" / "cut.png", size=(32, 32)))
    return root


def _with_subfolder(base: Path) -> Path:
    root = _pets(base)
    make_class_folders(root / "cats" / "sub", {"x": 3})
    return root


def _three_classes(base: Path) -> Path:
    root = _pets(base)
    make_class_folders(root, {"birds": 3})
    return root


def _locked_file(root: Path) -> None:
    make_jpeg(root / "cats" / "locked.jpg")


def _locked_folder(root: Path) -> None:
    make_class_folders(root / "cats" / "private", {"x": 2})


# -- the corpus -------------------------------------------------------------------------------

E = Expected

CASES: list[Case] = [
    # Refused before scanning: not a folder of images at all.
    Case("missing_path", "a path that does not exist", _missing, raises="does not exist"),
    Case(
        "file_not_folder",
        "one image given instead of a folder",
        _a_file,
        raises="is a file, not a folder of images",
    ),
    Case(
        "dangling_root_link",
        "the dataset path is a link to a missing folder",
        _dangling_link,
        raises="is a link to something that does not exist",
    ),
    Case(
        "root_unreadable",
        "a dataset folder without read permission",
        _empty,
        raises="cannot read the folder",
        faults=Faults(deny=(".",)),
    ),
    # Scanned, training refused.
    Case(
        "empty_folder",
        "an empty folder",
        _empty,
        problems=(E("no_images", "error", "No usable images found"),),
        refused=True,
    ),
    Case(
        "one_class",
        "one class only",
        _one_class,
        problems=(E("too_few_classes", "error", "At least 2 classes", ""),),
        refused=True,
        usable=5,
        classes=("cats",),
    ),
    Case(
        "class_folders_empty",
        "class folders with no images (one holds only a .txt)",
        _class_folders_empty,
        problems=(
            E("empty_class", "warning", "cats/ holds no usable images", "cats"),
            E("empty_class", "warning", "dogs/ holds no usable images", "dogs"),
            E("no_images", "error", "No usable images found"),
        ),
        refused=True,
        classes=(),
    ),
    Case(
        "all_images_bad",
        "every file is a broken image",
        _all_bad,
        problems=(
            E("not_an_image", "warning", "cats/a.jpg is not an image", "cats/a.jpg"),
            E("not_an_image", "warning", "dogs/b.jpg is empty (0 bytes)", "dogs/b.jpg"),
            E("empty_class", "warning", "cats/ holds no usable images", "cats"),
            E("empty_class", "warning", "dogs/ holds no usable images", "dogs"),
            E("no_images", "error", "No usable images found"),
        ),
        refused=True,
        excluded=("cats/a.jpg", "dogs/b.jpg"),
        classes=(),
    ),
    Case(
        "class_mismatch",
        "train/ and test/ with different class names",
        _class_mismatch,
        problems=(
            E("class_mismatch", "error", "test/wolves/ has images", "test/wolves"),
            E("class_mismatch", "warning", "test/ has no dogs/ folder", "test"),
        ),
        refused=True,
        usable=7,
        excluded=("test/wolves/wolves_0000.jpg",),
        classes=("cats", "dogs"),
    ),
    Case(
        "test_folder_empty",
        "a test/ folder whose class folders are empty",
        _empty_test,
        problems=(
            E("empty_class", "warning", "test/cats/ holds no usable images", "test/cats"),
            E("empty_class", "warning", "test/dogs/ holds no usable images", "test/dogs"),
            E("no_images", "error", "The test folder test/ holds no usable images", "test"),
        ),
        refused=True,
        usable=6,
    ),
    # Usable: the bad files are named and left out.
    Case(
        "empty_class_among_good",
        "an empty class folder next to good ones",
        _empty_class_among_good,
        problems=(E("empty_class", "warning", "birds/ holds no usable images", "birds"),),
        usable=10,
        classes=("cats", "dogs"),
    ),
    Case(
        "zero_byte_jpg",
        "a zero-byte .jpg",
        _pets_with(lambda r: make_file(r / "cats" / "empty.jpg")),
        problems=(
            E("not_an_image", "warning", "cats/empty.jpg is empty (0 bytes)", "cats/empty.jpg"),
        ),
        usable=10,
        excluded=("cats/empty.jpg",),
    ),
    Case(
        "truncated_jpeg",
        "a JPEG cut in half",
        _pets_with(_truncated_jpeg),
        problems=(E("truncated", "warning", "JPEG end marker is missing", "cats/cut.jpg"),),
        usable=10,
        excluded=("cats/cut.jpg",),
    ),
    Case(
        "truncated_png",
        "a PNG cut in half",
        _pets_with(_truncated_png),
        problems=(E("truncated", "warning", "PNG end chunk is missing", "dogs/cut.png"),),
        usable=10,
        excluded=("dogs/cut.png",),
    ),
    Case(
        "text_named_jpg",
        "a text file named .jpg",
        _pets_with(lambda r: make_file(r / "cats" / "fake.jpg", "this is not a picture\n")),
        problems=(E("not_an_image", "warning", "cats/fake.jpg is not an image", "cats/fake.jpg"),),
        usable=10,
        excluded=("cats/fake.jpg",),
    ),
    Case(
        "png_bomb",
        "a 20,000x20,000 PNG (a crafted 68-byte file)",
        _pets_with(_png_bomb),
        problems=(E("too_large", "warning", "20000x20000 is 400,000,000 pixels", "cats/bomb.png"),),
        usable=10,
        excluded=("cats/bomb.png",),
    ),
    Case(
        "jpeg_bomb",
        "a 20,000x20,000 JPEG (an 8x8 one with its frame header rewritten)",
        _pets_with(_jpeg_bomb),
        problems=(E("too_large", "warning", "20000x20000 is 400,000,000 pixels", "dogs/bomb.jpg"),),
        usable=10,
        excluded=("dogs/bomb.jpg",),
    ),
    Case(
        "file_unreadable",
        "a file without read permission",
        _pets_with(_locked_file),
        problems=(E("unreadable", "warning", "permission denied", "cats/locked.jpg"),),
        usable=10,
        excluded=("cats/locked.jpg",),
        faults=Faults(deny=("cats/locked.jpg",)),
    ),
    Case(
        "folder_unreadable",
        "a sub-folder without read permission",
        _pets_with(_locked_folder),
        problems=(
            E("unreadable", "warning", "Folder cats/private/ cannot be read: permission denied"),
        ),
        usable=10,
        excluded=("cats/private/x/x_0000.jpg",),
        faults=Faults(deny=("cats/private",)),
    ),
    Case(
        "broken_symlink",
        "a link to a missing file",
        _pets_with(lambda r: (r / "cats" / "gone.jpg").symlink_to(r / "nowhere.jpg")),
        problems=(E("unreadable", "warning", "is a broken link", "cats/gone.jpg"),),
        usable=10,
        excluded=("cats/gone.jpg",),
    ),
    Case(
        "self_link",
        "a link that points to itself",
        _pets_with(_self_link),
        problems=(E("unreadable", "warning", "Too many levels of symbolic links", "cats/me.jpg"),),
        usable=10,
        excluded=("cats/me.jpg",),
    ),
    Case(
        "beyond_path_max",
        "folders nested past the system's path length limit",
        _pets_with(_beyond_path_max),
        problems=(E("unreadable", "warning", "cannot be read: File name too long"),),
        usable=10,
        snapshot=False,
    ),
    Case(
        "folder_vanishes",
        "a sub-folder deleted during the scan",
        _with_subfolder,
        problems=(
            E("vanished", "warning", "Folder cats/sub/ vanished during the scan", "cats/sub"),
        ),
        usable=10,
        faults=Faults(vanish=("cats/sub",)),
    ),
    Case(
        "class_folder_vanishes",
        "a whole class folder deleted during the scan",
        _three_classes,
        problems=(
            E("vanished", "warning", "Folder birds/ vanished during the scan", "birds"),
            E("empty_class", "warning", "birds/ holds no usable images", "birds"),
        ),
        usable=10,
        classes=("cats", "dogs"),
        faults=Faults(vanish=("birds",)),
    ),
    Case(
        "undecodable_names",
        "names that are not valid UTF-8 (Latin-1 bytes)",
        _undecodable,
        problems=(E("not_an_image", "warning", "dogs/d\ufffdj\ufffd.jpg is not an image"),),
        usable=13,
        excluded=(os.fsdecode(b"dogs/d\xe9j\xe0.jpg"),),
        kept={os.fsdecode(b"caf\xe9/cr\xe8me.jpg"): "RGB"},
        classes=(os.fsdecode(b"caf\xe9"), "cats", "dogs"),
    ),
    Case(
        "undecodable_root",
        "a dataset folder whose own name is not valid UTF-8",
        _undecodable_root,
        usable=10,
    ),
    Case(
        "non_ascii_and_spaces",
        "non-ASCII and space-containing folder and file names",
        _non_ascii,
        problems=(
            E(
                "not_an_image",
                "warning",
                "dogs & co/ça ne va pas.jpg",
                "dogs & co/ça ne va pas.jpg",
            ),
        ),
        usable=4,
        excluded=("dogs & co/ça ne va pas.jpg",),
        kept={"chats été/日本 語.png": "RGB", "dogs & co/ leading space.jpg": "RGB"},
        classes=("chats été", "dogs & co"),
    ),
    Case(
        "stray_files",
        "an image and a README directly in the dataset folder",
        _pets_with(_stray),
        problems=(E("stray_file", "info", "loose.jpg is ignored", "loose.jpg"),),
        usable=10,
        excluded=("loose.jpg",),
    ),
    Case(
        "same_image_two_classes",
        "the same image in two classes",
        _two_classes_same_image,
        problems=(
            E("label_conflict", "warning", "labelled 'cats' and 'dogs'", "train/dogs/who.jpg"),
        ),
        usable=9,
    ),
    Case(
        "same_image_train_test",
        "the same image in train/ and test/",
        _train_test_same_image,
        problems=(E("leakage", "warning", "in both training and test data", "test/dogs/seen.jpg"),),
        usable=9,
    ),
    Case(
        "duplicate_in_class",
        "the same image twice in one class",
        _duplicate_in_class,
        problems=(E("duplicate_in_class", "warning", "identical copies", "train/cats/again.jpg"),),
        usable=9,
    ),
    Case(
        "imbalance",
        "13 training images of one class, 3 of the other",
        _imbalance,
        problems=(E("imbalance", "warning", "'many' has 13 training images, 'few' only 3"),),
        usable=18,
    ),
    Case(
        "read_only_filesystem",
        "a dataset on a read-only filesystem (with two bad files)",
        _read_only,
        problems=(
            E(
                "not_an_image",
                "warning",
                "train/cats/bad.jpg is not an image",
                "train/cats/bad.jpg",
            ),
            E("truncated", "warning", "PNG end chunk is missing", "test/dogs/cut.png"),
        ),
        usable=8,
        excluded=("train/cats/bad.jpg", "test/dogs/cut.png"),
        read_only=True,
    ),
    # Usable: odd but valid files are kept.
    Case(
        "png_named_jpg",
        "a PNG named .jpg",
        _pets_with(lambda r: make_png(r / "cats" / "actually.jpg")),
        problems=(
            E("misnamed", "info", "is a PNG image despite its .jpg name", "cats/actually.jpg"),
        ),
        usable=11,
        kept={"cats/actually.jpg": "RGB"},
    ),
    Case(
        "cmyk_jpeg",
        "a CMYK JPEG",
        _pets_with(lambda r: make_jpeg(r / "cats" / "cmyk.jpg", mode="CMYK")),
        usable=11,
        kept={"cats/cmyk.jpg": "CMYK"},
    ),
    Case(
        "png_16bit",
        "16-bit PNGs (grayscale and RGB)",
        _pets_with(
            lambda r: make_png(r / "cats" / "gray16.png", mode="I;16"),
            lambda r: make_rgb16_png(r / "dogs" / "rgb16.png"),
        ),
        usable=12,
        kept={"cats/gray16.png": "16-bit", "dogs/rgb16.png": "16-bit"},
    ),
    Case(
        "png_alpha",
        "PNGs with alpha (RGBA, grayscale+alpha)",
        _pets_with(
            lambda r: make_png(r / "cats" / "rgba.png", mode="RGBA"),
            lambda r: make_png(r / "dogs" / "la.png", mode="LA"),
        ),
        usable=12,
        kept={"cats/rgba.png": "alpha", "dogs/la.png": "alpha"},
    ),
    Case(
        "grayscale",
        "grayscale images (8-bit JPEG, 1-bit PNG)",
        _pets_with(
            lambda r: make_jpeg(r / "cats" / "gray.jpg", mode="L"),
            lambda r: make_png(r / "dogs" / "bw.png", mode="1"),
        ),
        usable=12,
        kept={"cats/gray.jpg": "grayscale", "dogs/bw.png": "grayscale"},
    ),
    Case(
        "palette",
        "palette PNGs (one with a transparent colour)",
        _pets_with(
            lambda r: make_png(r / "cats" / "palette.png", mode="P"),
            lambda r: make_png(r / "dogs" / "clear.png", mode="P", transparency=0),
        ),
        usable=12,
        kept={"cats/palette.png": "palette", "dogs/clear.png": "alpha"},
    ),
    Case(
        "animated_gif",
        "an animated GIF (3 frames)",
        _pets_with(lambda r: make_animated_gif(r / "cats" / "wave.gif", frames=3)),
        problems=(E("animated", "info", "(3 frames); the first frame is used", "cats/wave.gif"),),
        usable=11,
        kept={"cats/wave.gif": "palette"},
    ),
    Case(
        "gif_indices_past_palette",
        "a GIF whose pixels index past its colour table (Pillow reads it, TensorFlow does not)",
        _pets_with(lambda r: make_gif_past_palette(r / "dogs" / "odd.gif")),
        usable=11,
        kept={"dogs/odd.gif": "palette"},
    ),
    Case(
        "one_pixel",
        "1x1 images",
        _pets_with(
            lambda r: make_jpeg(r / "cats" / "dot.jpg", size=(1, 1)),
            lambda r: make_png(r / "dogs" / "dot.png", size=(1, 1)),
        ),
        usable=12,
        kept={"cats/dot.jpg": "RGB", "dogs/dot.png": "RGB"},
    ),
    Case(
        "symlink_loop",
        "folder links back to a class folder and to the dataset",
        _pets_with(_symlink_loops),
        problems=(
            E(
                "symlink_loop",
                "info",
                "cats/again links back to a folder it is inside",
                "cats/again",
            ),
            E("symlink_loop", "info", "dogs/sub/up links back", "dogs/sub/up"),
        ),
        usable=10,
    ),
    Case(
        "deep_nesting",
        "an image 100 folders deep inside its class",
        _pets_with(_deep),
        usable=11,
        kept={"cats/" + "".join(f"level{i:03d}/" for i in range(100)) + "deep.jpg": "RGB"},
    ),
    # Usable: ignored without a word.
    Case(
        "os_litter",
        "OS litter: .DS_Store, Thumbs.db, desktop.ini, ._*, __MACOSX/",
        _pets_with(_litter),
        usable=10,
        excluded=("cats/Thumbs.db", "dogs/._dogs_0000.jpg"),
    ),
    Case(
        "named_pipe",
        "a named pipe called .jpg (opening it would block)",
        _pets_with(lambda r: make_fifo(r / "cats" / "pipe.jpg")),
        usable=10,
        excluded=("cats/pipe.jpg",),
    ),
]

CASES_BY_NAME = {case.name: case for case in CASES}
assert len(CASES_BY_NAME) == len(CASES), "case names must be unique"


# -- faults -----------------------------------------------------------------------------------


def install_faults(
    deny: set[str], vanish: set[str], setattr_: Callable[[Any, str, Any], None]
) -> None:
    """Make `os.open` and `os.scandir` refuse the absolute paths in `deny` (permission denied)
    and delete each folder in `vanish` the first time it is about to be listed."""
    real_open, real_scandir = os.open, os.scandir
    vanish = set(vanish)

    def key(path: Any) -> str | None:
        if isinstance(path, int):
            return None  # a folder descriptor: rmtree and friends, never the scan's own paths
        return os.path.abspath(os.fsdecode(path))

    def denied(path: Any) -> PermissionError:
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(path))

    def guarded_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if kwargs.get("dir_fd") is None and key(path) in deny:
            raise denied(path)
        return real_open(path, flags, *args, **kwargs)

    def guarded_scandir(path: Any = ".") -> Any:
        k = key(path)
        if k in deny:
            raise denied(path)
        if k in vanish:
            vanish.discard(k)
            shutil.rmtree(k)
        return real_scandir(path)

    setattr_(os, "open", guarded_open)
    setattr_(os, "scandir", guarded_scandir)


def install_faults_from_env() -> None:
    """Called by the `sitecustomize` shim that `Prepared.cli_env` puts on the path."""
    spec = json.loads(os.environ[FAULTS_ENV])
    install_faults(set(spec["deny"]), set(spec["vanish"]), setattr)


_SHIM = f"""\
import os

if os.environ.get({FAULTS_ENV!r}):
    from tests.helpers.corpus import install_faults_from_env

    install_faults_from_env()
"""


# -- preparing a case -------------------------------------------------------------------------


@dataclass
class Prepared:
    """A built case: the path to give xlagui, and how to reproduce its faults."""

    case: Case
    base: Path
    root: Path
    simulate: Faults  # the faults still to simulate (those chmod could not make real)
    mounted: bool = False  # read_only: a real read-only bind mount, not just chmod a-w

    def abs(self, rel: str) -> str:
        return os.path.normpath(os.path.join(self.root, rel))

    def patch(self, setattr_: Callable[[Any, str, Any], None]) -> None:
        """Simulate the faults in this process."""
        if self.simulate != Faults():
            install_faults(
                {self.abs(r) for r in self.simulate.deny},
                {self.abs(r) for r in self.simulate.vanish},
                setattr_,
            )

    def cli_env(self) -> dict[str, str]:
        """The environment for `python -m xlagui` in a subprocess: this checkout's code first,
        the fault shim when there are faults to simulate, and a strict UTF-8 terminal (a
        desktop's locale) rather than this container's forgiving C.UTF-8."""
        env = dict(os.environ)
        paths = [str(REPO_ROOT)]
        if self.simulate != Faults():
            shim = self.base / "shim"
            shim.mkdir(exist_ok=True)
            (shim / "sitecustomize.py").write_text(_SHIM)
            paths.insert(0, str(shim))
            env[FAULTS_ENV] = json.dumps(
                {
                    "deny": [self.abs(r) for r in self.simulate.deny],
                    "vanish": [self.abs(r) for r in self.simulate.vanish],
                }
            )
        env["PYTHONPATH"] = os.pathsep.join(paths)
        env["PYTHONIOENCODING"] = "utf-8:strict"
        env["COLUMNS"] = "1000"  # rich would otherwise wrap long lines at 80
        return env

    def vanished(self) -> list[str]:
        return [self.abs(r) for r in self.case.faults.vanish]

    def restore(self) -> None:
        """Undo the mount and the permission changes, so the folder can be deleted."""
        if self.mounted:
            subprocess.run(["umount", str(self.root)], check=True)
            self.mounted = False
        for dirpath, dirnames, filenames in os.walk(self.base):
            for name in dirnames + filenames:
                _chmod_add(os.path.join(dirpath, name), stat.S_IRWXU)
        _chmod_add(str(self.base), stat.S_IRWXU)


def _chmod_add(path: str, bits: int) -> None:
    with contextlib.suppress(OSError):
        st = os.lstat(path)
        if not stat.S_ISLNK(st.st_mode):
            os.chmod(path, stat.S_IMODE(st.st_mode) | bits)


def _chmod_remove(path: str, bits: int) -> None:
    st = os.lstat(path)
    if not stat.S_ISLNK(st.st_mode):
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~bits)


@functools.cache
def permissions_apply() -> bool:
    """Whether this process is refused what it has no permission to read (root is not, unless
    it runs without the capability to override permissions)."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_bytes(b"")
        probe.chmod(0)
        try:
            probe.open("rb").close()
        except PermissionError:
            return True
        finally:
            probe.chmod(0o600)
    return False


def _bind_read_only(source: Path, target: Path) -> bool:
    """Mount `source` read-only at `target`; False where mounting is not allowed."""
    if sys.platform != "linux" or shutil.which("mount") is None:
        return False
    target.mkdir()
    if subprocess.run(
        ["mount", "--bind", str(source), str(target)], capture_output=True
    ).returncode:
        target.rmdir()
        return False
    remount = ["mount", "-o", "remount,ro,bind", str(target)]
    if subprocess.run(remount, capture_output=True).returncode:
        subprocess.run(["umount", str(target)], check=True)
        target.rmdir()
        return False
    return True


@contextlib.contextmanager
def prepared(case: Case, base: Path) -> Iterator[Prepared]:
    """Build `case` under the empty folder `base`; undo mounts and chmods afterwards."""
    base.mkdir(parents=True, exist_ok=True)
    root = case.build(base / "build" if case.read_only else base)
    missing = [rel for rel in case.excluded if not os.path.lexists(root / rel)]
    assert not missing, f"{case.name}: the files to leave out were not made: {missing}"
    prep = Prepared(case, base, root, case.faults)
    try:
        if case.read_only:
            target = base / "data"
            prep.mounted = _bind_read_only(root, target)
            if prep.mounted:
                prep.root = target
            else:
                for dirpath, dirnames, filenames in os.walk(root):
                    for name in dirnames + filenames:
                        _chmod_remove(os.path.join(dirpath, name), 0o222)
                _chmod_remove(str(root), 0o222)
        if case.faults.deny and permissions_apply():
            # Permissions are enforced for this process, so make the denial real.
            for rel in case.faults.deny:
                _chmod_remove(prep.abs(rel), 0o777)
            prep.simulate = Faults(vanish=case.faults.vanish)
        yield prep
    finally:
        prep.restore()
