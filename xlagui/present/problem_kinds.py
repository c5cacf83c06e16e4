"""The kinds of dataset problems in words: how the Dataset tab's problem list names each kind
(`core.data.scan.PROBLEM_KINDS`) in its headings, and how the settings name what is left out."""

from __future__ import annotations

from xlagui.core.protocol.identity import Severity

KIND_WORDS = {
    "not_an_image": "not images",
    "unreadable": "unreadable files",
    "truncated": "cut-off files",
    "too_large": "images too large to load",
    "vanished": "files that disappeared",
    "misnamed": "extension does not match the content",
    "animated": "animated images (first frame used)",
    "stray_file": "stray files",
    "ignored_folder": "ignored folders",
    "symlink_loop": "link loops",
    "no_test_folder": "no test folder",
    "empty_class": "empty classes",
    "class_mismatch": "classes differ between train and test",
    "too_few_classes": "too few classes",
    "no_images": "no images",
    "duplicate_in_class": "duplicates within a class",
    "label_conflict": "same image in different classes",
    "leakage": "train/test leakage",
    "imbalance": "class imbalance",
}

# One problem of each kind counted in a sentence: (one, several) — "2 train/test leaks".
KIND_NOUNS: dict[str, tuple[str, str]] = {
    "not_an_image": ("file that is not an image", "files that are not images"),
    "unreadable": ("unreadable file", "unreadable files"),
    "truncated": ("cut-off file", "cut-off files"),
    "too_large": ("image too large to load", "images too large to load"),
    "vanished": ("file that disappeared", "files that disappeared"),
    "misnamed": ("misnamed file", "misnamed files"),
    "animated": ("animated image", "animated images"),
    "stray_file": ("stray file", "stray files"),
    "ignored_folder": ("ignored folder", "ignored folders"),
    "symlink_loop": ("link loop", "link loops"),
    "no_test_folder": ("missing test folder", "missing test folders"),
    "empty_class": ("empty class", "empty classes"),
    "class_mismatch": ("class mismatch", "class mismatches"),
    "too_few_classes": ("too few classes", "too few classes"),
    "no_images": ("folder without images", "folders without images"),
    "duplicate_in_class": ("duplicate within a class", "duplicates within a class"),
    "label_conflict": ("cross-class duplicate", "cross-class duplicates"),
    "leakage": ("train/test leak", "train/test leaks"),
    "imbalance": ("class imbalance", "class imbalances"),
}


def kind_count(kind: str, count: int) -> str:
    """`count` problems of `kind` in words: "1 train/test leak", "28 cross-class duplicates"."""
    one, several = KIND_NOUNS.get(kind, (kind_words(kind), kind_words(kind)))
    return f"{count:,} {one if count == 1 else several}"


def kind_words(kind: str) -> str:
    """A problem kind in words ("not images"); an unknown kind with its underscores as spaces."""
    return KIND_WORDS.get(kind, kind.replace("_", " "))


def problem_heading(severity: Severity, kind: str, count: int | None = None) -> str:
    """"Error: not images", and with `count` "Error: not images (3)"."""
    heading = f"{severity.capitalize()}: {kind_words(kind)}"
    return heading if count is None else f"{heading} ({count})"
