"""The dataset scan: layouts, classes, colour modes, every kind of problem, and its guarantees
(headers only, never a crash, never a write, cancellable)."""

from __future__ import annotations

import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
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
    tree_snapshot,
    truncate,
)
from xlagui.core.data.scan import (
    PROBLEM_KINDS,
    DatasetError,
    DatasetScan,
    ImageFile,
    Problem,
    scan_dataset,
)
from xlagui.core.data.scan import duplicates as scan_duplicates
from xlagui.core.data.scan import probe as scan_probe
from xlagui.core.data.scan import walk as scan_walk
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.present.scan import layout_description, summary_text
from xlagui.present.scan_problems import problem_text


def kinds(scan: DatasetScan) -> list[str]:
    return [p.kind for p in scan.problems]


def only(scan: DatasetScan, kind: str) -> Problem:
    found = [p for p in scan.problems if p.kind == kind]
    assert len(found) == 1, f"expected one {kind!r} problem, got {scan.problems}"
    return found[0]


def rels(scan: DatasetScan, split: str | None = None) -> list[str]:
    return [f.rel for f in scan.files if split is None or f.split == split]


def two_classes(root: Path, n: int = 5, ext: str = ".jpg") -> None:
    make_class_folders(root, {"cats": n, "dogs": n}, ext=ext)


# -- layouts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("test_folder", ["test", "val", "validation", "VAL", "Test"])
def test_split_layout_uses_the_train_and_test_folders(tmp_path: Path, test_folder: str) -> None:
    make_split_dataset(
        tmp_path, {"cats": 4, "dogs": 3}, {"cats": 2, "dogs": 1}, test_folder=test_folder
    )

    scan = scan_dataset(tmp_path)

    assert scan.layout == "split"
    assert scan.test_folder == test_folder
    assert scan.train_folder == "train"
    assert scan.class_names == ["cats", "dogs"]
    assert scan.counts() == {"train": {"cats": 4, "dogs": 3}, "test": {"cats": 2, "dogs": 1}}
    assert scan.ok and scan.problems == []
    assert all(
        f.rel.startswith(f"{f.split if f.split == 'train' else test_folder}/{f.label}/")
        for f in scan.files
    )
    assert f"{test_folder}/" in summary_text(scan)


def test_split_layout_prefers_test_over_val_and_notes_the_other(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"a": 2, "b": 2}, {"a": 1, "b": 1}, test_folder="test")
    make_class_folders(tmp_path / "val", {"a": 1, "b": 1})

    scan = scan_dataset(tmp_path)

    assert scan.test_folder == "test"
    assert "val/" in problem_text(only(scan, "ignored_folder"))
    assert not any(f.rel.startswith("val/") for f in scan.files)


def test_class_folders_alone_are_auto_split_20_percent_per_class(tmp_path: Path) -> None:
    make_class_folders(tmp_path, {"cats": 10, "dogs": 25, "owls": 2, "rare": 1})

    scan = scan_dataset(tmp_path)

    assert scan.layout == "auto-split"
    assert scan.test_folder is None and scan.train_folder is None
    assert scan.holdout_percent == 20
    assert scan.counts() == {
        "train": {"cats": 8, "dogs": 20, "owls": 1, "rare": 1},
        "test": {"cats": 2, "dogs": 5, "owls": 1, "rare": 0},
    }
    assert "held out 20% of each class" in summary_text(scan)


def test_auto_split_holdout_percent_is_honoured(tmp_path: Path) -> None:
    two_classes(tmp_path, 10)

    scan = scan_dataset(tmp_path, holdout_percent=50)

    assert scan.counts()["test"] == {"cats": 5, "dogs": 5}


def test_auto_split_is_deterministic_and_depends_on_the_seed(tmp_path: Path) -> None:
    two_classes(tmp_path, 20)

    first = scan_dataset(tmp_path, seed=7)
    again = scan_dataset(tmp_path, seed=7)
    other = scan_dataset(tmp_path, seed=8)

    assert rels(first, "test") == rels(again, "test")
    assert first.fingerprint() == again.fingerprint()
    assert rels(first, "test") != rels(other, "test")
    assert first.fingerprint() != other.fingerprint()
    assert first.counts() == other.counts()  # stratified the same way, whatever the seed


def test_auto_split_keeps_identical_copies_on_one_side(tmp_path: Path) -> None:
    two_classes(tmp_path, 10)
    for i in range(3):
        copy(tmp_path / "cats" / "cats_0000.jpg", tmp_path / "cats" / f"again_{i}.jpg")

    for seed in range(10):
        scan = scan_dataset(tmp_path, seed=seed)
        sides = {
            f.split
            for f in scan.files
            if f.rel
            in ("cats/cats_0000.jpg", "cats/again_0.jpg", "cats/again_1.jpg", "cats/again_2.jpg")
        }
        assert len(sides) == 1
        assert "leakage" not in kinds(scan)
        assert "duplicate_in_class" in kinds(scan)


def test_train_without_test_folder_is_auto_split_and_said_so(tmp_path: Path) -> None:
    make_class_folders(tmp_path / "train", {"cats": 5, "dogs": 5})

    scan = scan_dataset(tmp_path)

    assert scan.layout == "auto-split"
    assert scan.train_folder == "train"
    assert scan.counts()["test"] == {"cats": 1, "dogs": 1}
    assert only(scan, "no_test_folder").severity == "info"
    assert "train/ with no test folder" in summary_text(scan)


def test_the_layout_description_is_the_summarys_layout_line(tmp_path: Path) -> None:
    make_split_dataset(tmp_path / "split", {"a": 2, "b": 2}, {"a": 1, "b": 1}, test_folder="Val")
    make_class_folders(tmp_path / "train_only" / "Training", {"a": 2, "b": 2})
    make_class_folders(tmp_path / "flat", {"a": 2, "b": 2})
    expected = {
        "split": "train/ and Val/ folders, each with one sub-folder per class",
        "train_only": "Training/ with no test folder next to it: the scan held out 25%",
        "flat": "one folder per class, no test folder: the scan held out 25%",
    }

    for name, words in expected.items():
        scan = scan_dataset(tmp_path / name, holdout_percent=25, seed=7)

        assert layout_description(scan).startswith(words)
        assert ("(seed 7," in layout_description(scan)) == (scan.layout == "auto-split")
        assert f"\nLayout: {layout_description(scan)}\n" in summary_text(scan)


def test_images_directly_in_the_dataset_folder_are_ignored_with_a_note(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_jpeg(tmp_path / "loose.jpg")
    make_file(tmp_path / "README.md", "my data")

    scan = scan_dataset(tmp_path)

    stray = [p for p in scan.problems if p.kind == "stray_file"]
    assert sorted(Path(p.paths[0]).name for p in stray) == ["loose.jpg"]  # README.md is normal
    assert all(p.severity == "info" for p in stray)
    assert scan.ok and len(scan.files) == 10


def test_images_in_nested_folders_belong_to_their_class(tmp_path: Path) -> None:
    two_classes(tmp_path)
    deep = tmp_path / "cats"
    for i in range(60):
        deep = deep / f"level{i}"
    make_jpeg(deep / "deep.jpg")
    make_png(tmp_path / "dogs" / "2023" / "may" / "walk.png")

    scan = scan_dataset(tmp_path, holdout_percent=10)

    labels = {Path(f.rel).name: f.label for f in scan.files}
    assert labels["deep.jpg"] == "cats" and labels["walk.png"] == "dogs"
    assert scan.counts()["train"]["cats"] + scan.counts()["test"]["cats"] == 6


def test_class_names_are_sorted_folder_names(tmp_path: Path) -> None:
    make_class_folders(tmp_path, {"zebra": 2, "Ant": 2, "mole": 2})

    assert scan_dataset(tmp_path).class_names == ["Ant", "mole", "zebra"]


def test_files_are_in_a_deterministic_order(tmp_path: Path) -> None:
    make_class_folders(tmp_path, {"b": 6, "a": 6})

    scan = scan_dataset(tmp_path)

    keys = [(f.split, f.label, f.rel) for f in scan.files]
    assert keys == sorted(keys)


# -- recognising images -----------------------------------------------------------------------


def test_png_named_jpg_is_used_with_a_note(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_image(tmp_path / "cats" / "actually.jpg", format="PNG")

    scan = scan_dataset(tmp_path)

    assert "cats/actually.jpg" in rels(scan)
    assert next(f for f in scan.files if f.rel == "cats/actually.jpg").format == "PNG"
    assert only(scan, "misnamed").severity == "info"
    assert scan.ok


def test_image_without_an_image_extension_is_recognised_by_content(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_image(tmp_path / "dogs" / "photo.data", format="BMP")
    make_image(tmp_path / "dogs" / "noext", format="GIF")

    scan = scan_dataset(tmp_path)

    formats = {f.rel: f.format for f in scan.files}
    assert formats["dogs/photo.data"] == "BMP" and formats["dogs/noext"] == "GIF"
    assert "misnamed" not in kinds(scan)


def test_text_named_jpg_is_not_an_image(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_file(tmp_path / "cats" / "fake.jpg", "this is not a picture\n")

    scan = scan_dataset(tmp_path)

    problem = only(scan, "not_an_image")
    assert problem.severity == "warning"
    assert "cats/fake.jpg" in problem_text(problem)
    assert problem.paths == [str(tmp_path / "cats" / "fake.jpg")]
    assert "cats/fake.jpg" not in rels(scan)
    assert scan.ok  # one bad file is excluded, not a reason to refuse training


def test_zero_byte_jpg_is_reported_as_empty(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_file(tmp_path / "cats" / "empty.jpg")

    scan = scan_dataset(tmp_path)

    assert "0 bytes" in problem_text(only(scan, "not_an_image"))
    assert "cats/empty.jpg" not in rels(scan)


def test_known_non_image_files_are_skipped_silently(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_file(tmp_path / "cats" / "labels.csv", "a,b\n")
    make_file(tmp_path / "cats" / "notes.TXT", "hello")

    scan = scan_dataset(tmp_path)

    assert scan.problems == []
    assert scan.scanned_files == 10


def test_truncated_jpeg_is_excluded(tmp_path: Path) -> None:
    two_classes(tmp_path)
    truncate(make_jpeg(tmp_path / "cats" / "cut.jpg", size=(64, 64)), keep=0.5)
    truncate(make_jpeg(tmp_path / "cats" / "stub.jpg", size=(64, 64)), keep=0.02)

    scan = scan_dataset(tmp_path)

    truncated = sorted(Path(p.paths[0]).name for p in scan.problems if p.kind == "truncated")
    assert truncated == ["cut.jpg", "stub.jpg"]
    assert not {"cats/cut.jpg", "cats/stub.jpg"} & set(rels(scan))


def test_truncated_png_is_excluded(tmp_path: Path) -> None:
    two_classes(tmp_path)
    truncate(make_png(tmp_path / "dogs" / "cut.png", size=(64, 64)), keep=0.5)

    scan = scan_dataset(tmp_path)

    assert "dogs/cut.png" in problem_text(only(scan, "truncated"))
    assert "dogs/cut.png" not in rels(scan)


def test_complete_files_with_padding_or_trailing_data_are_not_truncated(tmp_path: Path) -> None:
    two_classes(tmp_path)
    padded = make_jpeg(tmp_path / "cats" / "padded.jpg")
    padded.write_bytes(padded.read_bytes() + b"\0\0\0\0\n")
    # Phones append a video after the JPEG's end marker ("motion photos").
    motion = make_jpeg(tmp_path / "cats" / "motion.jpg", size=(32, 32))
    motion.write_bytes(motion.read_bytes() + b"ftypmp42" + os.urandom(5000))
    trailing_png = make_png(tmp_path / "dogs" / "trailing.png")
    trailing_png.write_bytes(trailing_png.read_bytes() + b"extra bytes after IEND" * 10)

    scan = scan_dataset(tmp_path)

    assert "truncated" not in kinds(scan)
    assert {"cats/padded.jpg", "cats/motion.jpg", "dogs/trailing.png"} <= set(rels(scan))


def test_fifo_named_jpg_does_not_block(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    two_classes(tmp_path)
    os.mkfifo(tmp_path / "cats" / "pipe.jpg")

    scan = scan_dataset(tmp_path)

    assert "cats/pipe.jpg" not in rels(scan) and len(scan.files) == 10


def _jpeg_variants(tmp_path: Path) -> list[Path]:
    exif = Image.Exif()
    exif[0x010F] = "Camera maker"
    exif[0x0112] = 6  # orientation: the scan reports the stored size, as Pillow does
    icc = b"\0" * 70000  # larger than one APP2 segment: split over several
    variants: list[tuple[str, str, dict[str, Any]]] = [
        ("rgb", "RGB", {}),
        ("gray", "L", {}),
        ("cmyk", "CMYK", {}),
        ("progressive", "RGB", {"progressive": True}),
        ("optimized", "RGB", {"optimize": True, "quality": 30}),
        ("no_subsampling", "RGB", {"subsampling": 0}),
        ("exif", "RGB", {"exif": exif.tobytes()}),
        ("icc", "RGB", {"icc_profile": icc}),
        ("comment", "RGB", {"comment": b"made for a test"}),
        ("restarts", "RGB", {"restart_marker_blocks": 1}),
    ]
    paths = [
        make_jpeg(tmp_path / f"{name}.jpg", size=(33, 17), mode=mode, **options)
        for name, mode, options in variants
    ]
    paths.append(make_jpeg(tmp_path / "one_pixel.jpg", size=(1, 1)))
    mpo = tmp_path / "stereo.jpg"
    first, second = (make_jpeg(tmp_path / f"half{i}.jpg", size=(9, 9)) for i in range(2))
    with Image.open(first) as a, Image.open(second) as b:
        a.save(mpo, "MPO", save_all=True, append_images=[b])
    paths.append(mpo)
    return paths


def test_jpeg_variants_are_scanned_like_pillow_sees_them(tmp_path: Path) -> None:
    _jpeg_variants(tmp_path / "a")
    _jpeg_variants(tmp_path / "b")  # noise seeded from the path: no duplicates of a/

    scan = scan_dataset(tmp_path)

    assert scan.ok and scan.problems == []  # none truncated, misnamed or animated
    assert len(scan.files) == 28  # 12 variants and the 2 halves of the MPO, in each class
    for f in scan.files:
        with Image.open(f.path) as im:
            assert (f.width, f.height, f.mode, f.format) == (
                im.width,
                im.height,
                im.mode,
                im.format,
            )


# -- colour modes, sizes, frames --------------------------------------------------------------


def test_colour_modes_are_counted_in_peoples_words(tmp_path: Path) -> None:
    make_class_folders(tmp_path / "train", {"b": 2})
    make_class_folders(tmp_path / "test", {"b": 1})
    cls = tmp_path / "train" / "a"
    make_jpeg(cls / "rgb.jpg")
    make_jpeg(cls / "cmyk.jpg", mode="CMYK")
    make_jpeg(cls / "gray.jpg", mode="L")
    make_png(cls / "bw.png", mode="1")
    make_png(cls / "gray16.png", mode="I;16")
    make_rgb16_png(cls / "rgb16.png")
    make_png(cls / "rgba.png", mode="RGBA")
    make_png(cls / "la.png", mode="LA")
    make_png(cls / "palette.png", mode="P")
    make_png(cls / "palette_transparent.png", mode="P", transparency=0)
    make_class_folders(tmp_path / "test", {"a": 1})

    scan = scan_dataset(tmp_path)

    color = {Path(f.rel).name: f.color for f in scan.files if f.label == "a"}
    assert color == {
        "rgb.jpg": "RGB",
        "cmyk.jpg": "CMYK",
        "gray.jpg": "grayscale",
        "bw.png": "grayscale",
        "gray16.png": "16-bit",
        "rgb16.png": "16-bit",
        "rgba.png": "alpha",
        "la.png": "alpha",
        "palette.png": "palette",
        "palette_transparent.png": "alpha",
        "a_0000.jpg": "RGB",
    }
    assert scan.color_modes("a", "train") == {
        "alpha": 3,
        "16-bit": 2,
        "grayscale": 2,
        "CMYK": 1,
        "RGB": 1,
        "palette": 1,
    }
    modes = {Path(f.rel).name: f.mode for f in scan.files}
    assert modes["cmyk.jpg"] == "CMYK" and modes["gray16.png"].startswith("I;16")
    assert "16-bit" in summary_text(scan)


def test_size_extremes_are_real_images_per_split_and_class(tmp_path: Path) -> None:
    # The narrowest image is not the shortest: independent minima and maxima would make up
    # "10x20 to 200x30", two images that do not exist.
    make_jpeg(tmp_path / "train" / "a" / "narrow.jpg", size=(10, 30))
    make_jpeg(tmp_path / "train" / "a" / "wide.jpg", size=(200, 20))
    make_jpeg(tmp_path / "train" / "a" / "middle.jpg", size=(50, 25))
    make_jpeg(tmp_path / "train" / "b" / "b.jpg", size=(5, 6))
    make_jpeg(tmp_path / "test" / "a" / "a.jpg", size=(7, 8), mode="L")
    make_jpeg(tmp_path / "test" / "b" / "b.jpg", size=(7, 8))

    scan = scan_dataset(tmp_path)

    assert scan.size_extremes("a", "train") == ((10, 30), (200, 20))
    assert scan.size_extremes("b", "train") == ((5, 6), (5, 6))
    assert scan.size_extremes("a", "test") == ((7, 8), (7, 8))
    assert scan.size_extremes("nope", "test") is None
    # Both splits together.
    assert scan.size_extremes("a") == ((7, 8), (200, 20))
    assert scan.color_modes("a", "train") == {"RGB": 3}
    assert scan.color_modes("a") == {"RGB": 3, "grayscale": 1}
    text = summary_text(scan)
    assert "a  3 images, 10x30 to 200x20, 3 RGB" in text
    assert "a  1 image, 7x8, 1 grayscale" in text


def test_one_pixel_images_are_fine(tmp_path: Path) -> None:
    make_class_folders(tmp_path, {"a": 3, "b": 3}, size=(1, 1))

    scan = scan_dataset(tmp_path)

    assert scan.ok and len(scan.files) == 6
    assert {(f.width, f.height) for f in scan.files} == {(1, 1)}


def test_animated_gif_is_used_with_a_note(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_animated_gif(tmp_path / "cats" / "wave.gif", frames=3)

    scan = scan_dataset(tmp_path)

    wave = next(f for f in scan.files if f.rel == "cats/wave.gif")
    assert wave.frames == 3 and wave.format == "GIF"
    assert "first frame" in problem_text(only(scan, "animated"))
    assert scan.ok


def test_decompression_bomb_is_refused_without_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_classes(tmp_path)
    bomb = make_png_header(tmp_path / "cats" / "bomb.png", 20000, 20000)
    assert bomb.stat().st_size < 200
    limit_before = Image.MAX_IMAGE_PIXELS

    def no_decoding(self: Image.Image, *args: Any) -> Any:
        raise AssertionError("the scan decoded pixels")

    monkeypatch.setattr(Image.Image, "load", no_decoding)
    monkeypatch.setattr(Image.Image, "getdata", no_decoding)

    scan = scan_dataset(tmp_path)

    problem = only(scan, "too_large")
    assert "20000x20000" in problem_text(problem) and "cats/bomb.png" in problem_text(problem)
    assert "cats/bomb.png" not in rels(scan)
    assert len(scan.files) == 10  # every other file was scanned without decoding, too
    assert Image.MAX_IMAGE_PIXELS == limit_before


def test_other_threads_keep_pillows_limit_while_a_scan_reads_headers(tmp_path: Path) -> None:
    """The scan reads a bomb's header without Pillow's check, but only for itself: a thumbnail
    decoded in another thread during the scan (the window's pool) is still refused by Pillow.
    Switching the process-wide `Image.MAX_IMAGE_PIXELS` off for the scan let it through."""
    two_classes(tmp_path)
    make_png_header(tmp_path / "cats" / "bomb.png", 20000, 20000)
    other = make_png_header(tmp_path.parent / f"{tmp_path.name}-elsewhere.png", 20000, 20000)
    seen: list[str] = []

    def decode_elsewhere() -> str:
        try:
            with Image.open(other) as im:
                return f"opened {im.size}"
        except Image.DecompressionBombError:
            return "refused"

    def on_progress(fraction: float) -> None:
        if 0 < fraction < 0.9:  # while the headers are read
            with ThreadPoolExecutor(max_workers=1) as pool:
                seen.append(pool.submit(decode_elsewhere).result())

    scan = scan_dataset(tmp_path, state=TaskState(on_progress=on_progress))

    assert "20000x20000" in problem_text(only(scan, "too_large"))
    assert seen and set(seen) == {"refused"}


def test_pixel_limit_is_configurable(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_jpeg(tmp_path / "dogs" / "big.jpg", size=(30, 30))

    scan = scan_dataset(tmp_path, pixel_limit=899)

    assert "dogs/big.jpg" in problem_text(only(scan, "too_large"))
    assert len(scan.files) == 10


# -- unreadable, vanished, links --------------------------------------------------------------


def test_permission_denied_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    two_classes(tmp_path)
    locked = make_jpeg(tmp_path / "cats" / "locked.jpg")
    real_open = os.open

    def guarded_open(path: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    # We run as root here, where chmod alone would not stop the read.
    monkeypatch.setattr(os, "open", guarded_open)

    scan = scan_dataset(tmp_path)

    problem = only(scan, "unreadable")
    said = problem_text(problem)
    assert "permission denied" in said and "cats/locked.jpg" in said
    assert "cats/locked.jpg" not in rels(scan) and len(scan.files) == 10


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file anyway"
)
def test_file_without_read_permission_is_reported(tmp_path: Path) -> None:
    two_classes(tmp_path)
    locked = make_jpeg(tmp_path / "cats" / "locked.jpg")
    locked.chmod(0)
    try:
        scan = scan_dataset(tmp_path)
    finally:
        locked.chmod(0o644)

    assert "permission denied" in problem_text(only(scan, "unreadable"))


def test_broken_symlink_is_reported(tmp_path: Path) -> None:
    two_classes(tmp_path)
    (tmp_path / "cats" / "gone.jpg").symlink_to(tmp_path / "nowhere.jpg")

    scan = scan_dataset(tmp_path)

    assert "broken link" in problem_text(only(scan, "unreadable"))


def test_symlink_loops_do_not_hang(tmp_path: Path) -> None:
    two_classes(tmp_path)
    (tmp_path / "cats" / "again").symlink_to(tmp_path / "cats", target_is_directory=True)
    (tmp_path / "dogs" / "sub").mkdir()
    (tmp_path / "dogs" / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)

    scan = scan_dataset(tmp_path)

    loops = sorted(problem_text(p).split(" ")[0] for p in scan.problems if p.kind == "symlink_loop")
    assert loops == ["cats/again", "dogs/sub/up"]
    assert scan.counts()["train"]["cats"] + scan.counts()["test"]["cats"] == 5


def test_symlinked_class_folder_is_followed(tmp_path: Path) -> None:
    make_class_folders(tmp_path / "elsewhere", {"cats": 3})
    data = tmp_path / "data"
    make_class_folders(data, {"dogs": 3})
    (data / "cats").symlink_to(tmp_path / "elsewhere" / "cats", target_is_directory=True)

    scan = scan_dataset(data)

    assert scan.class_names == ["cats", "dogs"] and len(scan.files) == 6


def test_file_vanishing_between_listing_and_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_classes(tmp_path)
    doomed = tmp_path / "cats" / "cats_0002.jpg"
    real_probe = scan_probe.probe

    def probe_after_deleting(ctx: Any, cand: Any) -> Any:
        if cand.path == str(doomed):
            doomed.unlink()
        return real_probe(ctx, cand)

    monkeypatch.setattr(scan_probe, "probe", probe_after_deleting)

    scan = scan_dataset(tmp_path)

    assert "cats/cats_0002.jpg" in problem_text(only(scan, "vanished"))
    assert len(scan.files) == 9


def test_file_vanishing_before_it_is_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    two_classes(tmp_path)
    copy(tmp_path / "cats" / "cats_0000.jpg", tmp_path / "cats" / "twin.jpg")
    real_digest = scan_duplicates._digest

    def digest_after_deleting(path: str) -> str:
        if path.endswith("twin.jpg"):
            os.unlink(path)
        return real_digest(path)

    monkeypatch.setattr(scan_duplicates, "_digest", digest_after_deleting)

    scan = scan_dataset(tmp_path)

    assert "cats/twin.jpg" in problem_text(only(scan, "vanished"))
    assert "cats/twin.jpg" not in rels(scan)
    assert "duplicate_in_class" not in kinds(scan)


def test_folder_vanishing_during_the_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    two_classes(tmp_path)
    make_class_folders(tmp_path / "cats" / "sub", {"x": 3})
    doomed = tmp_path / "cats" / "sub"
    real_list_dir = scan_walk.list_dir

    def list_after_deleting(ctx: Any, path: str, *args: Any, **kwargs: Any) -> Any:
        if path == str(doomed):
            shutil.rmtree(doomed)
        return real_list_dir(ctx, path, *args, **kwargs)

    monkeypatch.setattr(scan_walk, "list_dir", list_after_deleting)

    scan = scan_dataset(tmp_path)

    assert "cats/sub/" in problem_text(only(scan, "vanished"))
    assert len(scan.files) == 10


def test_non_ascii_and_space_paths(tmp_path: Path) -> None:
    make_jpeg(tmp_path / "chats été" / "ïmage 1.jpg")
    make_png(tmp_path / "chats été" / "日本 語.png")
    make_jpeg(tmp_path / "dogs & co" / "a b.jpeg")

    scan = scan_dataset(tmp_path)

    assert scan.class_names == ["chats été", "dogs & co"]
    assert sorted(rels(scan)) == [
        "chats été/ïmage 1.jpg",
        "chats été/日本 語.png",
        "dogs & co/a b.jpeg",
    ]
    assert all(Path(f.path).is_file() for f in scan.files)
    json.dumps(scan.to_dict())


def test_os_litter_is_ignored(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_file(tmp_path / ".DS_Store", b"\0\0\0\1Bud1")
    make_file(tmp_path / "cats" / ".DS_Store", b"\0\0\0\1Bud1")
    make_file(tmp_path / "cats" / "Thumbs.db", b"\xd0\xcf\x11\xe0")
    make_file(tmp_path / "dogs" / "desktop.ini", "[.ShellClassInfo]")
    make_file(tmp_path / "dogs" / "._dogs_0000.jpg", b"\0\5\x16\7 AppleDouble")
    make_file(tmp_path / "__MACOSX" / "cats" / "._cats_0000.jpg", b"\0\5\x16\7")
    make_jpeg(tmp_path / ".thumbnails" / "cats_0000.jpg")
    make_jpeg(tmp_path / "cats" / ".cache" / "x.jpg")

    scan = scan_dataset(tmp_path)

    assert scan.problems == []
    assert scan.class_names == ["cats", "dogs"]
    assert scan.scanned_files == 10


# -- classes ----------------------------------------------------------------------------------


def test_train_and_test_with_different_class_names(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"cats": 3, "dogs": 3}, {"cats": 1, "wolves": 1})

    scan = scan_dataset(tmp_path)

    mismatches = {p.severity: problem_text(p) for p in scan.problems if p.kind == "class_mismatch"}
    assert "wolves" in mismatches["error"]
    assert "dogs" in mismatches["warning"]
    assert not scan.ok
    assert scan.class_names == ["cats", "dogs"]
    assert all(f.label in scan.class_names for f in scan.files)


def test_one_class_only_is_an_error(tmp_path: Path) -> None:
    make_class_folders(tmp_path, {"cats": 5})

    scan = scan_dataset(tmp_path)

    assert only(scan, "too_few_classes").severity == "error"
    assert not scan.ok


def test_class_folder_without_images_is_dropped(tmp_path: Path) -> None:
    two_classes(tmp_path)
    (tmp_path / "empty").mkdir()
    make_file(tmp_path / "bad" / "x.jpg", "not an image")

    scan = scan_dataset(tmp_path)

    empty = sorted(Path(p.paths[0]).name for p in scan.problems if p.kind == "empty_class")
    assert empty == ["bad", "empty"]
    assert scan.class_names == ["cats", "dogs"]
    assert scan.ok


def test_empty_folder_is_a_scan_with_an_error(tmp_path: Path) -> None:
    scan = scan_dataset(tmp_path)

    assert kinds(scan) == ["no_images"]
    assert not scan.ok and scan.files == [] and scan.class_names == []
    assert "No usable images" in summary_text(scan)


def test_test_folder_without_images_is_an_error(tmp_path: Path) -> None:
    make_class_folders(tmp_path / "train", {"a": 2, "b": 2})
    (tmp_path / "test").mkdir()

    scan = scan_dataset(tmp_path)

    assert "no_images" in [p.kind for p in scan.errors]


def test_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="does not exist"):
        scan_dataset(tmp_path / "nope")


def test_file_instead_of_folder_raises(tmp_path: Path) -> None:
    image = make_jpeg(tmp_path / "one.jpg")
    with pytest.raises(DatasetError, match="not a folder"):
        scan_dataset(image)


def test_holdout_percent_out_of_range_raises(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="holdout_percent"):
        scan_dataset(tmp_path, holdout_percent=100)


# -- duplicates and balance -------------------------------------------------------------------


def test_duplicate_within_a_class(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"cats": 3, "dogs": 3}, {"cats": 1, "dogs": 1})
    copy(tmp_path / "train" / "cats" / "cats_0001.jpg", tmp_path / "train" / "cats" / "copy.jpg")

    scan = scan_dataset(tmp_path)

    problem = only(scan, "duplicate_in_class")
    assert problem.severity == "warning"
    assert sorted(Path(p).name for p in problem.paths) == ["cats_0001.jpg", "copy.jpg"]
    assert kinds(scan) == ["duplicate_in_class"]


def test_same_image_in_two_classes_is_a_label_conflict(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"cats": 3, "dogs": 3}, {"cats": 1, "dogs": 1})
    copy(tmp_path / "train" / "cats" / "cats_0001.jpg", tmp_path / "train" / "dogs" / "who.jpg")

    scan = scan_dataset(tmp_path)

    problem = only(scan, "label_conflict")
    assert "'cats' and 'dogs'" in problem_text(problem)
    assert "leakage" not in kinds(scan) and "duplicate_in_class" not in kinds(scan)


def test_same_image_in_train_and_test_is_leakage(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"cats": 3, "dogs": 3}, {"cats": 1, "dogs": 1})
    copy(tmp_path / "train" / "dogs" / "dogs_0002.jpg", tmp_path / "test" / "dogs" / "seen.jpg")

    scan = scan_dataset(tmp_path)

    problem = only(scan, "leakage")
    said = problem_text(problem)
    assert "train/dogs/dogs_0002.jpg" in said and "test/dogs/seen.jpg" in said


def test_same_size_different_content_is_not_a_duplicate(tmp_path: Path) -> None:
    a = make_file(tmp_path / "cats" / "a.bin", make_png(tmp_path / "x.png").read_bytes())
    data = bytearray(a.read_bytes())
    data[40] ^= 0xFF  # same length, one byte different (inside the image data)
    make_file(tmp_path / "dogs" / "b.bin", bytes(data))
    make_class_folders(tmp_path, {"cats": 2, "dogs": 2})
    (tmp_path / "x.png").unlink()

    scan = scan_dataset(tmp_path)

    assert not {"duplicate_in_class", "label_conflict", "leakage"} & set(kinds(scan))


def test_strong_imbalance_is_a_warning(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"many": 13, "few": 4}, {"many": 1, "few": 1})

    problem = only(scan_dataset(tmp_path), "imbalance")

    assert problem.severity == "warning"
    assert "'many' has 13" in problem_text(problem) and "'few' only 4" in problem_text(problem)


def test_threefold_is_not_yet_imbalance(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"many": 12, "few": 4}, {"many": 1, "few": 1})

    assert "imbalance" not in kinds(scan_dataset(tmp_path))


# -- the result -------------------------------------------------------------------------------


def test_round_trip_through_json(tmp_path: Path) -> None:
    two_classes(tmp_path)
    make_file(tmp_path / "cats" / "bad.jpg", "nope")
    make_animated_gif(tmp_path / "dogs" / "anim.gif")

    scan = scan_dataset(tmp_path)
    again = DatasetScan.from_dict(json.loads(json.dumps(scan.to_dict())))

    assert again == scan
    assert isinstance(again.files[0], ImageFile) and isinstance(again.problems[0], Problem)
    assert again.fingerprint() == scan.fingerprint()
    assert summary_text(again) == summary_text(scan)


def test_fingerprint_changes_with_the_data(tmp_path: Path) -> None:
    two_classes(tmp_path)
    before = scan_dataset(tmp_path).fingerprint()
    make_jpeg(tmp_path / "dogs" / "new.jpg")

    assert scan_dataset(tmp_path).fingerprint() != before


def test_problem_kinds_and_severities_are_known(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"a": 13, "b": 2}, {"a": 1, "c": 1})
    make_file(tmp_path / "train" / "a" / "x.jpg", "text")
    copy(tmp_path / "train" / "a" / "a_0000.jpg", tmp_path / "train" / "b" / "dup.jpg")

    scan = scan_dataset(tmp_path)

    assert {"class_mismatch", "not_an_image", "label_conflict", "imbalance"} <= set(kinds(scan))
    assert all(p.kind in PROBLEM_KINDS for p in scan.problems)
    assert all(p.severity in ("error", "warning", "info") for p in scan.problems)
    order = ["error", "warning", "info"]
    severities = [order.index(p.severity) for p in scan.problems]
    assert severities == sorted(severities)  # errors first


def test_summary_text_groups_problems_with_the_first_paths(tmp_path: Path) -> None:
    two_classes(tmp_path)
    for i in range(5):
        make_file(tmp_path / "cats" / f"bad{i}.jpg", "text")

    text = summary_text(scan_dataset(tmp_path))

    assert "warning not_an_image (5):" in text
    assert "cats/bad0.jpg" in text and "cats/bad4.jpg" not in text
    assert "... and 2 more" in text
    assert "cats  4 images" in text
    assert "Scanned 15 files" in text


def test_cancellation_stops_the_scan(tmp_path: Path) -> None:
    two_classes(tmp_path, 20)
    seen: list[float] = []

    def on_progress(fraction: float) -> None:
        seen.append(fraction)
        if fraction > 0.1:
            state.request_interruption()

    state = TaskState(on_progress=on_progress)

    with pytest.raises(Cancelled):
        scan_dataset(tmp_path, state=state)
    assert seen and max(seen) < 0.5


def test_cancel_requested_before_start(tmp_path: Path) -> None:
    two_classes(tmp_path)
    state = TaskState()
    state.request_interruption()

    with pytest.raises(Cancelled):
        scan_dataset(tmp_path, state=state)


def test_progress_rises_to_one(tmp_path: Path) -> None:
    two_classes(tmp_path, 30)
    copy(tmp_path / "cats" / "cats_0000.jpg", tmp_path / "cats" / "twin.jpg")
    seen: list[float] = []

    scan_dataset(tmp_path, state=TaskState(on_progress=seen.append))

    assert seen[0] == 0.0 and seen[-1] == 1.0
    assert seen == sorted(seen)
    assert len(seen) > 10


def test_scan_never_writes(tmp_path: Path) -> None:
    make_split_dataset(tmp_path, {"cats": 4, "dogs": 4}, {"cats": 1, "dogs": 1})
    make_file(tmp_path / "train" / "cats" / "bad.jpg", "x")
    truncate(make_png(tmp_path / "train" / "dogs" / "cut.png", size=(32, 32)))
    copy(tmp_path / "train" / "cats" / "cats_0000.jpg", tmp_path / "test" / "cats" / "leak.jpg")
    before = tree_snapshot(tmp_path)

    scan_dataset(tmp_path)

    assert tree_snapshot(tmp_path) == before
