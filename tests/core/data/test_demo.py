from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from xlagui.core.data import demo, demo_drawing

SMALL = {"train_per_class": 5, "test_per_class": 3, "image_size": 64}


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def _images_by_name(root: Path) -> dict[str, tuple[str, str, bytes]]:
    """Keyed "split/file name": (split, class folder, bytes)."""
    return {
        f"{p.parts[-3]}/{p.name}": (p.parts[-3], p.parts[-2], p.read_bytes())
        for p in root.rglob("*.jpg")
    }


@pytest.fixture
def small_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private cache folder, and default counts small enough to generate in a blink."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XLAGUI_CACHE_DIR", str(cache))
    monkeypatch.setattr(demo, "DEFAULT_TRAIN_PER_CLASS", 4)
    monkeypatch.setattr(demo, "DEFAULT_TEST_PER_CLASS", 2)
    monkeypatch.setattr(demo, "DEFAULT_IMAGE_SIZE", 48)
    return cache


def test_layout_counts_and_marker(tmp_path: Path) -> None:
    dest = tmp_path / "elephants"
    assert demo.generate_demo_dataset(dest, seed=3, **SMALL) == dest

    for split, per_class in (("train", 5), ("test", 3)):
        for kind in ("african", "asian"):
            files = list((dest / split / kind).iterdir())
            assert len(files) == per_class
            assert all(f.suffix == ".jpg" for f in files)
    assert sorted(p.name for p in dest.iterdir()) == ["test", "train", demo.MARKER_NAME]

    marker = json.loads((dest / demo.MARKER_NAME).read_text(encoding="utf-8"))
    assert marker["version"] == demo.DEMO_VERSION
    assert marker["seed"] == 3
    assert marker["train_per_class"] == 5
    assert marker["test_per_class"] == 3
    assert marker["image_size"] == 64
    assert marker["shuffle_labels"] is False
    assert demo.read_demo_marker(dest) == marker
    # The temporary build folder was renamed away, nothing is left beside the set.
    assert [p.name for p in tmp_path.iterdir()] == ["elephants"]


def test_images_are_decodable_rgb_jpegs(tmp_path: Path) -> None:
    dest = demo.generate_demo_dataset(tmp_path / "d", **SMALL)
    for path in dest.rglob("*.jpg"):
        with Image.open(path) as img:
            assert img.format == "JPEG"
            assert img.mode == "RGB"
            assert img.size == (64, 64)
            img.load()


def test_same_seed_gives_identical_files(tmp_path: Path) -> None:
    a = _files(demo.generate_demo_dataset(tmp_path / "a", seed=7, **SMALL))
    b = _files(demo.generate_demo_dataset(tmp_path / "b", seed=7, **SMALL))
    assert len(a) == 2 * (5 + 3) + 1
    assert a == b


def test_different_seed_gives_different_images(tmp_path: Path) -> None:
    a = _images_by_name(demo.generate_demo_dataset(tmp_path / "a", seed=1, **SMALL))
    b = _images_by_name(demo.generate_demo_dataset(tmp_path / "b", seed=2, **SMALL))
    assert a.keys() == b.keys()
    assert all(a[name][2] != b[name][2] for name in a)


def test_shuffled_labels_keep_the_images_and_move_them_between_classes(tmp_path: Path) -> None:
    counts = {"train_per_class": 20, "test_per_class": 10, "image_size": 48}
    plain = _images_by_name(demo.generate_demo_dataset(tmp_path / "p", seed=5, **counts))
    mixed = _images_by_name(
        demo.generate_demo_dataset(tmp_path / "s", seed=5, shuffle_labels=True, **counts)
    )
    assert plain.keys() == mixed.keys()
    assert all(plain[n][0] == mixed[n][0] and plain[n][2] == mixed[n][2] for n in plain)
    moved = sum(plain[n][1] != mixed[n][1] for n in plain)
    assert 0 < moved < len(plain)
    for split, per_class in (("train", 20), ("test", 10)):
        for kind in demo_drawing.CLASSES:
            assert sum(v[:2] == (split, kind) for v in mixed.values()) == per_class
    assert json.loads((tmp_path / "s" / demo.MARKER_NAME).read_text())["shuffle_labels"] is True


def test_refuses_a_foreign_non_empty_folder(tmp_path: Path) -> None:
    dest = tmp_path / "photos"
    dest.mkdir()
    (dest / "holiday.jpg").write_bytes(b"not ours")
    with pytest.raises(FileExistsError, match="not an xlagui demo set"):
        demo.generate_demo_dataset(dest, **SMALL)
    assert [p.name for p in dest.iterdir()] == ["holiday.jpg"]
    assert (dest / "holiday.jpg").read_bytes() == b"not ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]


def test_refuses_a_file_in_the_way(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    dest.write_text("a file")
    with pytest.raises(FileExistsError):
        demo.generate_demo_dataset(dest, **SMALL)
    assert dest.read_text() == "a file"


def test_writes_into_an_empty_folder_and_replaces_a_previous_demo_set(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    dest.mkdir()
    demo.generate_demo_dataset(dest, seed=1, **SMALL)
    first = _files(dest)
    demo.generate_demo_dataset(dest, seed=2, **SMALL)
    assert demo.read_demo_marker(dest) is not None
    assert demo.read_demo_marker(dest)["seed"] == 2  # type: ignore[index]
    assert _files(dest) != first
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_a_folder_with_a_damaged_marker_is_foreign(tmp_path: Path) -> None:
    dest = demo.generate_demo_dataset(tmp_path / "demo", **SMALL)
    (dest / demo.MARKER_NAME).write_text("{not json")
    assert demo.read_demo_marker(dest) is None
    with pytest.raises(FileExistsError):
        demo.generate_demo_dataset(dest, **SMALL)


def test_ensure_generates_once_then_reuses(
    small_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = demo.ensure_demo_dataset(seed=4)
    assert path == small_cache / f"demo-v{demo.DEMO_VERSION}-seed4"
    marker = demo.read_demo_marker(path)
    assert marker is not None and marker["seed"] == 4
    assert len(list(path.rglob("*.jpg"))) == 2 * (4 + 2)
    stamp = (path / demo.MARKER_NAME).stat().st_mtime_ns

    def must_not_build(*args: Any, **kwargs: Any) -> Path:
        raise AssertionError("the cached demo set was generated again")

    monkeypatch.setattr(demo, "_build", must_not_build)
    assert demo.ensure_demo_dataset(seed=4) == path
    assert (path / demo.MARKER_NAME).stat().st_mtime_ns == stamp


def test_ensure_regenerates_an_incomplete_cache(small_cache: Path) -> None:
    # A set generated with other counts (or by an older release) does not match the marker.
    path = small_cache / f"demo-v{demo.DEMO_VERSION}-seed0"
    demo.generate_demo_dataset(path, train_per_class=1, test_per_class=1, image_size=48)
    assert demo.ensure_demo_dataset() == path
    assert demo.read_demo_marker(path)["train_per_class"] == 4  # type: ignore[index]
    assert len(list(path.rglob("*.jpg"))) == 2 * (4 + 2)


def test_ensure_keeps_a_set_another_process_finished_first(
    small_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = small_cache / f"demo-v{demo.DEMO_VERSION}-seed0"
    real_write_split = demo._write_split
    theirs: dict[str, int] = {}

    def racing_write_split(*args: Any, **kwargs: Any) -> None:
        if not theirs:
            # The other process publishes its set while we are still drawing ours.
            theirs["inode"] = -1
            demo.generate_demo_dataset(path, train_per_class=4, test_per_class=2, image_size=48)
            theirs["inode"] = (path / demo.MARKER_NAME).stat().st_ino
        real_write_split(*args, **kwargs)

    monkeypatch.setattr(demo, "_write_split", racing_write_split)
    assert demo.ensure_demo_dataset() == path
    assert (path / demo.MARKER_NAME).stat().st_ino == theirs["inode"]
    assert [p.name for p in small_cache.iterdir()] == [path.name]


def test_draw_elephant_is_reproducible_and_checks_its_arguments() -> None:
    a = demo_drawing.draw_elephant(random.Random(11), "asian", 96)
    b = demo_drawing.draw_elephant(random.Random(11), "asian", 96)
    assert a.mode == "RGB" and a.size == (96, 96)
    assert a.tobytes() == b.tobytes()
    assert demo_drawing.draw_elephant(random.Random(11), "african", 96).tobytes() != a.tobytes()
    with pytest.raises(ValueError, match="kind"):
        demo_drawing.draw_elephant(random.Random(0), "indian", 96)


def test_the_classes_do_not_differ_in_mean_colour() -> None:
    # A nearest-centroid classifier on each picture's mean RGB must be near chance: whatever
    # tells the kinds apart has to be shape, not colour.
    def mean_rgb(kind: str, i: int, split: str) -> np.ndarray:
        img = demo_drawing.draw_elephant(random.Random(f"{split}-{kind}-{i}"), kind, 48)
        return np.asarray(img, dtype=np.float64).mean(axis=(0, 1))

    n = 150
    centroids = {
        k: np.mean([mean_rgb(k, i, "fit") for i in range(n)], axis=0) for k in demo_drawing.CLASSES
    }
    correct = 0
    for kind in demo_drawing.CLASSES:
        for i in range(n):
            x = mean_rgb(kind, i, "check")
            nearest = min(demo_drawing.CLASSES,
                          key=lambda k: float(np.sum((x - centroids[k]) ** 2)))
            correct += nearest == kind
    assert correct / (2 * n) < 0.62


def _load(root: Path, split: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    images, labels = [], []
    for label, kind in enumerate(demo_drawing.CLASSES):
        for path in sorted((root / split / kind).glob("*.jpg")):
            with Image.open(path) as img:
                small = img.convert("RGB").resize((size, size), Image.Resampling.BILINEAR)
            images.append(np.asarray(small, dtype=np.float32) / 255.0)
            labels.append(label)
    return np.stack(images), np.asarray(labels, dtype=np.float32)


def _fit_article_cnn(root: Path, epochs: int) -> list[float]:
    import keras

    from xlagui.core.model.cnn import build_model, compile_model

    x_train, y_train = _load(root, "train", 48)
    x_test, y_test = _load(root, "test", 48)
    keras.utils.set_random_seed(0)
    model = build_model(48, 2, seed=0)
    compile_model(model, 2, jit_compile=False)
    history = model.fit(
        x_train,
        y_train,
        validation_data=(x_test, y_test),
        epochs=epochs,
        batch_size=32,
        verbose=0,
    )
    return [float(a) for a in history.history["val_accuracy"]]


@pytest.mark.tf
def test_the_article_cnn_learns_the_kinds_but_not_shuffled_labels(tmp_path: Path) -> None:
    # Drawn at 64 px (fast) and loaded at 48 px, the smallest size the tests train at.
    counts = {"train_per_class": 200, "test_per_class": 100, "image_size": 64}
    real = demo.generate_demo_dataset(tmp_path / "real", seed=0, **counts)
    shuffled = demo.generate_demo_dataset(
        tmp_path / "shuffled", seed=0, shuffle_labels=True, **counts
    )

    learnt = _fit_article_cnn(real, epochs=8)
    # Adam at batch 32 on 400 pictures wobbles by a few points from one epoch to the next once
    # it has learnt; the better of the last two epochs keeps a single wobble from failing this.
    assert max(learnt[-2:]) >= 0.80, learnt

    # The same pictures with their labels dealt at random: nothing to learn but the labels, so
    # validation (whose labels are dealt at random too) must stay near chance in every epoch.
    chance = _fit_article_cnn(shuffled, epochs=8)
    assert max(chance) < 0.70, chance
