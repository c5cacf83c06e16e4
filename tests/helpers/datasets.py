"""Tiny real datasets for the tests that run TensorFlow (48 px, a handful of files), and a
small photo-like folder with the problems a person can act on."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.images import copy, make_split_dataset


def tiny_split_dataset(root: Path, train: int = 16, test: int = 4) -> Path:
    make_split_dataset(
        root, {"african": train, "asian": train}, {"african": test, "asian": test}, size=(60, 52)
    )
    return root


def elephants_with_problems(root: Path, size: int = 96, train: int = 8, test: int = 3) -> Path:
    """Drawn elephants (the demo's pictures, small) in train/ and test/, plus one label
    conflict (an African picture also in asian/), one leak (a training picture also in test/)
    and one duplicate within a class."""
    from xlagui.core.data.demo import generate_demo_dataset

    generate_demo_dataset(root, train_per_class=train, test_per_class=test, image_size=size)
    (root / "xlagui-demo.json").unlink()  # a folder of the user's, not the demo set
    african = sorted((root / "train" / "african").iterdir())
    asian = sorted((root / "train" / "asian").iterdir())
    copy(african[0], root / "train" / "asian" / "maybe-african.jpg")
    copy(asian[1], root / "test" / "asian" / "seen-in-training.jpg")
    copy(african[2], root / "train" / "african" / "copy-of-one.jpg")
    return root
