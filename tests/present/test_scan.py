"""A dataset scan in words: whether it can be trained on (and at which level), and the class
table's rows, whose sizes are real images and whose sizes and colours cover both splits."""

from __future__ import annotations

from xlagui.core.data.scan import DatasetScan, ImageFile, Problem
from xlagui.core.protocol.identity import Severity
from xlagui.present.levels import Level
from xlagui.present.scan import CLASS_COLUMNS, class_row, readiness, size_words, summary_text


def image(split: str, label: str, size: tuple[int, int], mode: str = "RGB") -> ImageFile:
    name = f"{split}/{label}/{size[0]}x{size[1]}.jpg"
    return ImageFile(path=f"/data/{name}", rel=name, split=split, label=label, width=size[0],
                     height=size[1], format="JPEG", mode=mode, size_bytes=1)


def problem(kind: str, severity: Severity = Severity.WARNING, n: int = 0) -> Problem:
    return Problem(kind, severity, [f"/data/{kind}-{n}.jpg"], facts={"n": n})


def scan_of(files: list[ImageFile], problems: list[Problem] | None = None) -> DatasetScan:
    return DatasetScan(root="/data", layout="split", test_folder="test", holdout_percent=20,
                       seed=0, class_names=sorted({f.label for f in files}), files=files,
                       problems=problems or [], scanned_files=len(files), seconds=0.1,
                       train_folder="train")


ELEPHANTS = [
    image("train", "african", (100, 100)),
    image("train", "african", (348, 145)),  # the widest
    image("train", "african", (200, 278)),  # the tallest, and the largest by area
    image("test", "african", (90, 90), mode="L"),  # the smallest is a test image
    image("train", "asian", (64, 64)),
    image("test", "asian", (64, 64)),
]


def test_sizes_are_the_smallest_and_largest_real_images_of_both_splits() -> None:
    scan = scan_of(ELEPHANTS)
    # Not "90×90 to 348×278" (the widest width with the tallest height: no such image).
    assert size_words(scan, "african") == "90×90 to 200×278"
    assert size_words(scan, "african", "train") == "100×100 to 200×278"
    assert size_words(scan, "asian") == "64×64"
    assert size_words(scan, "nobody") == "no images"
    assert class_row(scan, "african") == ["african", "3", "1", "90×90 to 200×278",
                                          "3 RGB, 1 grayscale"]
    # The headings say what the sizes and colours cover.
    headings = [heading for heading, _ in CLASS_COLUMNS]
    assert headings[3:] == ["Sizes, train + test (px)", "Colour, train + test"]
    assert "training and test images" in CLASS_COLUMNS[3][1]


def test_ready_to_train_only_without_warnings() -> None:
    notes = [problem("stray_file", Severity.INFO)]
    assert readiness(scan_of(ELEPHANTS, notes)) == (Level.OK, "ready to train")


def test_warnings_make_it_can_train_with_what_to_look_at() -> None:
    problems = [problem("label_conflict", n=i) for i in range(28)]
    problems += [problem("leakage", n=i) for i in range(2)]
    scan = scan_of(ELEPHANTS, problems)
    level, words = readiness(scan)
    assert level is Level.WARNING
    assert words == "can train; 28 cross-class duplicates and 2 train/test leaks to look at"
    assert summary_text(scan).endswith(f": {words}.")
    one = readiness(scan_of(ELEPHANTS, [problem("leakage")]))
    assert one == (Level.WARNING, "can train; 1 train/test leak to look at")


def test_many_kinds_name_the_commonest_and_count_the_rest() -> None:
    problems = [problem("label_conflict", n=i) for i in range(3)]
    problems += [problem("leakage", n=i) for i in range(2)]
    problems += [problem("duplicate_in_class"), problem("imbalance"), problem("empty_class")]
    assert readiness(scan_of(ELEPHANTS, problems)) == (
        Level.WARNING,
        "can train; 3 cross-class duplicates, 2 train/test leaks, 1 duplicate within a class "
        "and 2 other warnings to look at",
    )


def test_problems_left_out_no_longer_need_a_look() -> None:
    leak, conflict = problem("leakage"), problem("label_conflict")
    scan = scan_of(ELEPHANTS, [leak, conflict])
    assert readiness(scan, lambda p: p is leak) == (
        Level.WARNING, "can train; 1 cross-class duplicate to look at")
    assert readiness(scan, lambda p: True) == (Level.OK, "ready to train")


def test_errors_refuse_whatever_else() -> None:
    scan = scan_of(ELEPHANTS, [problem("leakage"), problem("too_few_classes", Severity.ERROR)])
    assert readiness(scan) == (Level.ERROR, "training refused until the errors are fixed")
