"""The folder walk: which layout the dataset has, its class folders, and every candidate file
under them (followed through folder links, never round a loop). Nothing is opened here."""

from __future__ import annotations

import os
from dataclasses import dataclass

from xlagui.core.data.scan.context import ScanContext, reason
from xlagui.core.data.scan.model import TEST, TRAIN, DatasetError

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


@dataclass
class FolderLayout:
    """Where the classes are: "split" (train and test folders) or "auto-split"."""

    kind: str
    train_dir: str | None  # absolute paths of the split folders, when there are any
    test_dir: str | None
    classes: dict[str, dict[str, str]]  # split -> class name -> folder


@dataclass
class Candidate:
    """A file under a class folder that may be an image; the probe decides."""

    path: str
    rel: str
    split: str  # "train", "test", or "" until an auto-split assigns one
    label: str
    ext: str


def find_layout(ctx: ScanContext, holdout_percent: int) -> FolderLayout:
    """Read the dataset folder and the split folders in it; raise `DatasetError` when the root
    is not a readable folder."""
    top_dirs, top_files = list_root(ctx)
    for _name, path in top_files:
        stray(ctx, path, "")

    train_dir = _pick(top_dirs, TRAIN_FOLDER_NAMES)
    test_dir = _pick(top_dirs, TEST_FOLDER_NAMES) if train_dir else None
    classes: dict[str, dict[str, str]] = {TRAIN: {}, TEST: {}}
    if train_dir is None:
        classes[TRAIN] = dict(top_dirs)
        return FolderLayout("auto-split", None, None, classes)
    for path in sorted(top_dirs.values()):
        if path not in (train_dir, test_dir):
            ctx.problem("ignored_folder", [path], rel=ctx.rel(path),
                        train=os.path.basename(train_dir),
                        test=os.path.basename(test_dir) if test_dir else "")
    classes[TRAIN] = class_folders(ctx, train_dir)
    if test_dir is not None:
        classes[TEST] = class_folders(ctx, test_dir)
    else:
        ctx.problem("no_test_folder", [train_dir], rel=ctx.rel(train_dir),
                    holdout_percent=holdout_percent)
    return FolderLayout(
        "split" if test_dir is not None else "auto-split", train_dir, test_dir, classes
    )


def walk_classes(ctx: ScanContext, layout: FolderLayout) -> list[Candidate]:
    """Every candidate file of every class folder, sorted by (split, class, relative path)."""
    candidates: list[Candidate] = []
    for split, folders in layout.classes.items():
        # An auto-split assigns the split later; until then the split is left blank.
        walk_split = split if layout.kind == "split" else ""
        for label, folder in folders.items():
            candidates.extend(walk_class(ctx, folder, walk_split, label))
    candidates.sort(key=lambda c: (c.split, c.label, c.rel))
    return candidates


def list_root(ctx: ScanContext) -> tuple[dict[str, str], list[tuple[str, str]]]:
    root = ctx.root
    if not os.path.exists(root):
        if os.path.islink(root):
            raise DatasetError(f"{root} is a link to something that does not exist")
        raise DatasetError(f"{root} does not exist")
    if not os.path.isdir(root):
        raise DatasetError(f"{root} is a file, not a folder of images")
    try:
        dirs, files = list_dir(ctx, root, strict=True, all_files=True)
    except OSError as exc:
        raise DatasetError(f"cannot read the folder {root}: {reason(exc)}") from None
    return dict(dirs), files


def list_dir(
    ctx: ScanContext, path: str, strict: bool = False, all_files: bool = False
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
            ctx.problem("vanished", [path], said="vanished.folder", rel=ctx.rel(path))
        else:
            ctx.problem("unreadable", [path], said="unreadable.folder", rel=ctx.rel(path),
                        reason=reason(exc))
        return dirs, files
    for entry in entries:
        ctx.check_stop()
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


def class_folders(ctx: ScanContext, split_dir: str) -> dict[str, str]:
    dirs, files = list_dir(ctx, split_dir, all_files=True)
    for _name, path in files:
        stray(ctx, path, ctx.rel(split_dir))
    return dict(dirs)


def stray(ctx: ScanContext, path: str, folder: str) -> None:
    """A file directly in `folder` (relative to the dataset; "" for the dataset's own), where
    files belong to no class."""
    if os.path.splitext(path)[1].lower() in NON_IMAGE_EXTENSIONS:
        return  # a README or a labels file next to the data is normal, not a problem
    ctx.problem("stray_file", [path], rel=ctx.rel(path), folder=folder)


def walk_class(ctx: ScanContext, folder: str, split: str, label: str) -> list[Candidate]:
    """Every candidate file under a class folder, at any depth, following folder links but
    never into a folder that contains the link (which would loop forever)."""
    found: list[Candidate] = []
    # The folders above the class folder count as ancestors: a link back to the dataset
    # root or the split folder is a loop as well.
    chain = [ctx.root]
    if os.path.dirname(folder) != ctx.root:
        chain.append(os.path.dirname(folder))
    chain.append(folder)
    ancestors: set[tuple[int, int]] = set()
    for path in chain:
        key = _dir_key(path)
        if key is not None:
            ancestors.add(key)
    stack = [(folder, ctx.rel(folder) + "/", frozenset(ancestors))]
    while stack:
        path, prefix, above = stack.pop()
        dirs, files = list_dir(ctx, path)
        found.extend(
            Candidate(file_path, prefix + name, split, label, os.path.splitext(name)[1].lower())
            for name, file_path in files
        )
        for name, sub in reversed(dirs):
            try:
                st = os.stat(sub)
            except FileNotFoundError:
                continue  # gone already; nothing in it to report
            except OSError as exc:  # a path longer than the system allows, for one
                ctx.problem("unreadable", [sub], said="unreadable.folder", rel=f"{prefix}{name}",
                            reason=reason(exc))
                continue
            key = (st.st_dev, st.st_ino)
            if key in above:
                ctx.problem("symlink_loop", [sub], rel=f"{prefix}{name}")
                continue
            stack.append((sub, f"{prefix}{name}/", above | {key}))
    return found


def _pick(dirs: dict[str, str], names: tuple[str, ...]) -> str | None:
    lowered: dict[str, str] = {}
    for name in sorted(dirs):
        lowered.setdefault(name.lower(), dirs[name])
    for wanted in names:
        if wanted in lowered:
            return lowered[wanted]
    return None


def _dir_key(path: str) -> tuple[int, int] | None:
    """What identifies a folder whatever link led to it: its device and inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)
