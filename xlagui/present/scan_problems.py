"""The dataset scan's problems in words: each `Problem` (`xlagui.core.data.scan.model`) is a
kind, the sentence that says it (`said`) and its facts; `problem_text` is the one line a person
reads, naming the file(s), as the Dataset tab, `xlagui scan`, `xlagui compare` and a sweep's
refused cell show it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from xlagui.core.data.scan.model import Problem, printable

Facts = dict[str, Any]


def _files(f: Facts, limit: int = 4) -> str:
    """The files of a problem about several ("a.jpg, b.jpg and 3 more")."""
    files = [str(x) for x in f.get("files", [])]
    shown = ", ".join(files[:limit])
    return shown if len(files) <= limit else f"{shown} and {len(files) - limit} more"


def _too_few(f: Facts) -> str:
    classes = list(f.get("classes", []))
    found = f"only {classes[0]!r}" if classes else "none"
    return f"At least 2 classes with images are needed to train a classifier; found {found}"


def _ignored(f: Facts) -> str:
    test = f" and {f['test']}/" if f.get("test") else ""
    return f"Folder {f['rel']}/ is ignored: only {f['train']}/{test} are read next to each other"


def _stray(f: Facts) -> str:
    where = f"{f['folder']}/" if f.get("folder") else "the dataset folder"
    return (f"{f['rel']} is ignored: files directly in {where} belong to no class "
            "(put each image in a folder named after its class)")


def _too_large(f: Facts) -> str:
    width, height, limit = int(f["width"]), int(f["height"]), int(f["limit"])
    return (f"{f['rel']} is refused: {width}x{height} is {width * height:,} pixels, more than "
            f"the limit of {limit:,} (a possible decompression bomb)")


# Each sentence by the `said` that picks it (a kind's own, or `kind.variant`).
SENTENCES: dict[str, Callable[[Facts], str]] = {
    # one file, excluded from the dataset
    "not_an_image": lambda f: f"{f['rel']} is not an image",
    "not_an_image.empty": lambda f: f"{f['rel']} is empty (0 bytes)",
    "not_an_image.unreadable": lambda f: f"{f['rel']} is not a readable image: {f['said_by']}",
    "unreadable": lambda f: f"{f['rel']} cannot be read: {f['reason']}",
    "unreadable.broken_link": lambda f: f"{f['rel']} is a broken link (to {f['target']}, "
    "which is missing)",
    "unreadable.folder": lambda f: f"Folder {f['rel']}/ cannot be read: {f['reason']}",
    "truncated.jpeg": lambda f: f"{f['rel']} is truncated: its JPEG end marker is missing",
    "truncated.png": lambda f: f"{f['rel']} is truncated: its PNG end chunk is missing",
    "truncated.header": lambda f: f"{f['rel']} is cut short or damaged: its header cannot be "
    "read",
    "truncated.frames": lambda f: f"{f['rel']} is cut short or damaged: its frames cannot be "
    "read",
    "too_large": _too_large,
    "too_large.refused": lambda f: f"{f['rel']} is refused: {f['said_by']}",
    "vanished": lambda f: f"{f['rel']} vanished during the scan",
    "vanished.folder": lambda f: f"Folder {f['rel']}/ vanished during the scan",
    # one file, kept
    "misnamed": lambda f: f"{f['rel']} is a {f['format']} image despite its {f['ext']} name; "
    "it is used as such",
    "animated": lambda f: f"{f['rel']} is animated ({f['frames']} frames); the first frame is "
    "used",
    # the folder structure
    "stray_file": _stray,
    "ignored_folder": _ignored,
    "symlink_loop": lambda f: f"{f['rel']} links back to a folder it is inside; not followed",
    "no_test_folder": lambda f: f"{f['rel']}/ has no test/ (or val/, validation/) folder next "
    f"to it, so {f['holdout_percent']}% of each class is held out for testing instead",
    "empty_class": lambda f: f"Class folder {f['rel']}/ holds no usable images and is left out",
    "class_mismatch.untrained": lambda f: f"{f['test']}/{f['label']}/ has images but there is "
    f"no {f['label']!r} class to train on (class folders in {f['test']}/ must match those in "
    "the training folder)",
    "class_mismatch.untested": lambda f: f"{f['test']}/ has no {f['label']}/ folder: class "
    f"{f['label']!r} is trained but never tested",
    "too_few_classes": _too_few,
    "no_images": lambda f: f"No usable images found in {f['root']}: put them in one folder per "
    "class (for example cats/ and dogs/), or in train/<class>/ and test/<class>/",
    "no_images.test": lambda f: f"The test folder {f['test']}/ holds no usable images of the "
    "trained classes",
    # the contents as a whole
    "duplicate_in_class": lambda f: f"{_files(f)} are identical copies within class "
    f"{f['label']!r}",
    "label_conflict": lambda f: "The same image is labelled "
    f"{' and '.join(map(repr, f.get('labels', [])))}: {_files(f)}",
    "leakage": lambda f: "The same image is in both training and test data, so the test "
    f"accuracy flatters the model: {_files(f)}",
    "imbalance": lambda f: f"Classes are strongly imbalanced: {f['big']!r} has "
    f"{f['big_count']} training images, {f['small']!r} only {f['small_count']} (more than "
    f"{f['ratio']} times fewer); accuracy will favour {f['big']!r}",
}


def problem_text(problem: Problem) -> str:
    """The one line that says `problem`, fit for any terminal (a name that is not valid UTF-8
    shows U+FFFD); a sentence this version lacks, or facts it misses, say the kind and facts."""
    sentence = SENTENCES.get(problem.said)
    try:
        text = sentence(problem.facts) if sentence else ""
    except (KeyError, ValueError, TypeError):
        text = ""
    if not text:
        facts = ", ".join(f"{k}={v}" for k, v in problem.facts.items())
        text = f"{problem.kind.replace('_', ' ')}" + (f": {facts}" if facts else "")
    return printable(text)


def problems_text(problems: Iterable[Problem]) -> str:
    """Several problems in one line, joined by "; " (why a dataset cannot be trained on)."""
    return "; ".join(problem_text(p) for p in problems)
