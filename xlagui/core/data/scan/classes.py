"""Checks on the classes as a whole: empty class folders, test classes that do not match the
training classes, too few classes to train, and strong imbalance."""

from __future__ import annotations

import os
from collections import defaultdict

from xlagui.core.data.scan.context import ScanContext
from xlagui.core.data.scan.model import TEST, TRAIN, ImageFile
from xlagui.core.data.scan.walk import FolderLayout
from xlagui.core.protocol.identity import Severity


def check_classes(ctx: ScanContext, layout: FolderLayout, files: list[ImageFile]) -> list[str]:
    """The classes to train on (those with training images), after reporting what is wrong
    with the class folders."""
    classes, test_dir = layout.classes, layout.test_dir
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for f in files:
        counts[(f.split, f.label)] += 1

    def n_images(split: str, label: str) -> int:
        if layout.kind == "split":
            return counts[(split, label)]
        return counts[(TRAIN, label)] + counts[(TEST, label)]

    for split in (TRAIN, TEST) if layout.kind == "split" else (TRAIN,):
        for label, folder in classes[split].items():
            if not n_images(split, label):
                ctx.problem("empty_class", [folder], rel=ctx.rel(folder))
    class_names = sorted(label for label in classes[TRAIN] if n_images(TRAIN, label))

    if not files:
        ctx.problem("no_images", [ctx.root], root=ctx.root)
        return class_names
    if layout.kind == "split" and test_dir is not None:
        _check_test_classes(ctx, layout.classes[TEST], test_dir, class_names, counts)
    if len(class_names) < 2:
        ctx.problem("too_few_classes", [ctx.root], classes=list(class_names))
    return class_names


def check_balance(ctx: ScanContext, files: list[ImageFile], class_names: list[str]) -> None:
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
        ctx.problem("imbalance", [], big=big, big_count=present[big], small=small,
                    small_count=present[small], ratio=3)


def _check_test_classes(
    ctx: ScanContext,
    test_classes: dict[str, str],
    test_dir: str,
    class_names: list[str],
    counts: dict[tuple[str, str], int],
) -> None:
    """A split layout's test folder against the training classes: a test class with no
    training class is refused, a trained class with no test folder is warned of, and a test
    folder with none of the trained classes' images has no images at all."""
    test_name = os.path.basename(test_dir)
    extra = sorted(
        label for label in test_classes if counts[(TEST, label)] and label not in class_names
    )
    for label in extra:
        ctx.problem("class_mismatch", [test_classes[label]], said="class_mismatch.untrained",
                    severity=Severity.ERROR, test=test_name, label=label)
    for label in class_names:
        if label not in test_classes:
            ctx.problem("class_mismatch", [test_dir], said="class_mismatch.untested",
                        severity=Severity.WARNING, test=test_name, label=label)
    if not any(counts[(TEST, label)] for label in class_names) and not extra:
        ctx.problem("no_images", [test_dir], said="no_images.test", test=test_name)
