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

def kind_words(kind: str) -> str:
    """A problem kind in words ("not images"); an unknown kind with its underscores as spaces."""
    return KIND_WORDS.get(kind, kind.replace("_", " "))


def problem_heading(severity: Severity, kind: str, count: int | None = None) -> str:
    """"Error: not images", and with `count` "Error: not images (3)"."""
    heading = f"{severity.capitalize()}: {kind_words(kind)}"
    return heading if count is None else f"{heading} ({count})"
