"""A procedural "African vs Asian elephant" image set, so the app can be tried without a dataset.

The article trains on photos of African and Asian elephants. We cannot ship those, so we draw
elephants with Pillow instead (`core/data/demo_drawing.py`: how the two kinds differ, and why a
classifier has to learn their shapes). Generation is deterministic: every image has its own
random stream derived from (seed, split, index), so the same seed gives byte-identical files.
The set is written once per seed into the cache folder and published atomically.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

from xlagui.core.files import paths
from xlagui.core.protocol.identity import Split

DEMO_VERSION = 1  # bump when the drawing changes, so cached sets are rebuilt
SPLITS = (Split.TRAIN.value, Split.TEST.value)
MARKER_NAME = "xlagui-demo.json"
MARKER_FORMAT = "xlagui-demo"
DEMO_NAME = "demo elephants"  # what a comparison, the window and the PNG call the demo set

DEFAULT_TRAIN_PER_CLASS = 300
DEFAULT_TEST_PER_CLASS = 100
DEFAULT_IMAGE_SIZE = 160

_JPEG_QUALITY = 90


# --------------------------------------------------------------------------------------------
# The dataset on disk


def read_demo_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a demo set in `folder`, or None if `folder` is not one (or is damaged)."""
    try:
        data = json.loads((Path(folder) / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != MARKER_FORMAT:
        return None
    return data


def _marker(
    seed: int, train_per_class: int, test_per_class: int, image_size: int, shuffle_labels: bool
) -> dict[str, Any]:
    # Lazy, as in `_write_split`: the drawing needs NumPy and Pillow, which the window's first
    # screen does not (the demo's module is imported on the window's way to its first show).
    from xlagui.core.data.demo_drawing import CLASSES

    return {
        "format": MARKER_FORMAT,
        "version": DEMO_VERSION,
        "seed": seed,
        "classes": list(CLASSES),
        "train_per_class": train_per_class,
        "test_per_class": test_per_class,
        "image_size": image_size,
        "shuffle_labels": shuffle_labels,
    }


def _check_target(dest: Path) -> None:
    if dest.is_symlink() or (dest.exists() and not dest.is_dir()):
        raise FileExistsError(f"{dest} exists and is not a folder; not writing a demo set there")
    if dest.is_dir() and any(dest.iterdir()) and read_demo_marker(dest) is None:
        raise FileExistsError(
            f"{dest} is a non-empty folder that is not an xlagui demo set; refusing to write "
            f"the demo images into it. Choose an empty or new folder."
        )


def _write_split(
    folder: Path,
    split: str,
    seed: int,
    per_class: int,
    image_size: int,
    shuffle_labels: bool,
) -> None:
    from xlagui.core.data.demo_drawing import CLASSES, draw_elephant

    order_rng = random.Random(f"xlagui-demo/{seed}/{split}/order")
    kinds = [kind for kind in CLASSES for _ in range(per_class)]
    order_rng.shuffle(kinds)  # so a file's index says nothing about what it shows
    labels = list(kinds)
    if shuffle_labels:
        # A separate stream: the drawings stay identical to the unshuffled set's.
        random.Random(f"xlagui-demo/{seed}/{split}/labels").shuffle(labels)
    for label in CLASSES:
        (folder / split / label).mkdir(parents=True)
    for index, (kind, label) in enumerate(zip(kinds, labels, strict=True)):
        rng = random.Random(f"xlagui-demo/{seed}/{split}/{index}")
        img = draw_elephant(rng, kind, image_size)
        # Pillow's JPEG encoder is deterministic for the same pixels and options.
        img.save(
            folder / split / label / f"elephant-{index:04d}.jpg", "JPEG", quality=_JPEG_QUALITY
        )


def _build(
    dest: Path,
    *,
    seed: int,
    train_per_class: int = DEFAULT_TRAIN_PER_CLASS,
    test_per_class: int = DEFAULT_TEST_PER_CLASS,
    image_size: int = DEFAULT_IMAGE_SIZE,
    shuffle_labels: bool = False,
    keep_same: bool = False,
) -> Path:
    """Generate into a hidden temporary sibling of `dest`, then rename it into place.

    With `keep_same`, an identical demo set that appeared at `dest` meanwhile (another process
    won the race) is kept and ours discarded; otherwise a previous demo set at `dest` is replaced.
    """
    if train_per_class < 1 or test_per_class < 1:
        raise ValueError("train_per_class and test_per_class must be at least 1")
    if image_size < 8:
        raise ValueError(f"image_size must be at least 8 pixels, got {image_size}")
    dest = Path(dest)
    _check_target(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    marker = _marker(seed, train_per_class, test_per_class, image_size, shuffle_labels)

    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
    try:
        for split, per_class in zip(SPLITS, (train_per_class, test_per_class), strict=True):
            _write_split(tmp, split, seed, per_class, image_size, shuffle_labels)
        # Written last: a folder with a marker is complete.
        (tmp / MARKER_NAME).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it private; the set is ordinary user data
        _publish(tmp, dest, marker if keep_same else None)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return dest


def _publish(tmp: Path, dest: Path, keep_if: dict[str, Any] | None) -> None:
    try:
        # Renaming onto an empty folder works on POSIX; on Windows the empty one must go first.
        with contextlib.suppress(OSError):
            dest.rmdir()
        os.rename(tmp, dest)
        return
    except OSError:
        if not dest.exists():
            raise
    # Something is at dest now.
    _check_target(dest)  # a foreign folder may have appeared meanwhile
    if keep_if is not None and read_demo_marker(dest) == keep_if:
        return
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=dest.parent))
    old.rmdir()
    os.rename(dest, old)
    try:
        os.rename(tmp, dest)
    except OSError:
        with contextlib.suppress(OSError):
            os.rename(old, dest)
        raise
    shutil.rmtree(old, ignore_errors=True)


def generate_demo_dataset(
    dest: Path,
    *,
    seed: int = 0,
    train_per_class: int = DEFAULT_TRAIN_PER_CLASS,
    test_per_class: int = DEFAULT_TEST_PER_CLASS,
    image_size: int = DEFAULT_IMAGE_SIZE,
    shuffle_labels: bool = False,
) -> Path:
    """Write the demo set as `dest/{train,test}/{african,asian}/elephant-NNNN.jpg` plus a
    `dest/xlagui-demo.json` marker, atomically, and return `dest`.

    A previous demo set at `dest` is replaced; any other non-empty folder raises
    FileExistsError. `shuffle_labels` keeps the same images but sorts them into class folders
    at random (seeded): a set that can only be learnt through its labels.
    """
    return _build(
        Path(dest),
        seed=seed,
        train_per_class=train_per_class,
        test_per_class=test_per_class,
        image_size=image_size,
        shuffle_labels=shuffle_labels,
    )


def ensure_demo_dataset(seed: int = 0) -> Path:
    """The default demo set for `seed`, generated into the cache on first use, reused after."""
    dest = paths.cache_dir() / f"demo-v{DEMO_VERSION}-seed{seed}"
    wanted = _marker(
        seed, DEFAULT_TRAIN_PER_CLASS, DEFAULT_TEST_PER_CLASS, DEFAULT_IMAGE_SIZE, False
    )
    if read_demo_marker(dest) == wanted:
        return dest
    # The sizes are read now, not as _build's defaults were bound (tests shrink them).
    train, test, size = DEFAULT_TRAIN_PER_CLASS, DEFAULT_TEST_PER_CLASS, DEFAULT_IMAGE_SIZE
    _build(dest, seed=seed, keep_same=True, train_per_class=train, test_per_class=test,
           image_size=size)  # fmt: skip
    return dest


def dataset_name(root: str, demo: bool = False) -> str:
    """What a comparison and the window call the dataset at `root`."""
    return DEMO_NAME if demo else Path(root).name
