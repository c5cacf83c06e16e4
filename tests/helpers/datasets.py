"""Tiny real datasets for the tests that run TensorFlow (48 px, a handful of files)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.images import make_split_dataset


def tiny_split_dataset(root: Path, train: int = 16, test: int = 4) -> Path:
    make_split_dataset(
        root, {"african": train, "asian": train}, {"african": test, "asian": test}, size=(60, 52)
    )
    return root
