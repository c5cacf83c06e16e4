from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.helpers.images import make_image, make_rgb16_png
from xlagui.core.data.pipeline import build_datasets, cache_bytes, choose_cache, warm_cache
from xlagui.core.protocol.spec import Sample

pytestmark = pytest.mark.tf


def palette_png(path: Path) -> Path:
    rgb = Image.open(make_image(path.with_suffix(".src.png"), (20, 20)))
    rgb.convert("P", palette=Image.Palette.ADAPTIVE).save(path)
    return path


@pytest.fixture
def samples(tmp_path: Path) -> list[Sample]:
    out = []
    for i in range(20):
        p = make_image(tmp_path / f"{i}.jpg", (40 + i, 30 + 2 * i))
        out.append(Sample(str(p), i % 2, "JPEG", "RGB"))
    odd = [
        (make_image(tmp_path / "cmyk.jpg", (20, 20), "CMYK"), "JPEG", "CMYK"),
        (make_rgb16_png(tmp_path / "deep.png", (20, 20)), "PNG", "RGB"),
        (make_image(tmp_path / "grey16.png", (20, 20), "I;16"), "PNG", "I;16"),
        (palette_png(tmp_path / "pal.png"), "PNG", "P"),
        (make_image(tmp_path / "alpha.png", (20, 20), "RGBA"), "PNG", "RGBA"),
        (make_image(tmp_path / "misnamed.jpg", (20, 20), format="PNG"), "PNG", "RGB"),
    ]
    out += [Sample(str(p), 1, f, m) for p, f, m in odd]
    return out


def batches(ds: object) -> list[tuple[np.ndarray, np.ndarray]]:
    return [(x.numpy(), y.numpy()) for x, y in ds]  # type: ignore[attr-defined]


def test_shapes_ranges_and_full_batches(samples: list[Sample]) -> None:
    d = build_datasets(
        samples, samples[:5], num_classes=2, image_size=48, batch_size=8, seed=0, augment=True
    )
    assert d.steps_per_epoch == len(samples) // 8 == 3
    train = batches(d.train)
    assert len(train) == 3  # the partial last batch is dropped
    for x, y in train:
        assert x.shape == (8, 48, 48, 3) and x.dtype == np.float32 and y.dtype == np.float32
        assert 0.0 <= x.min() and x.max() <= 1.0
    val = batches(d.val)
    assert sum(len(y) for _, y in val) == 5  # validation keeps every image


@pytest.mark.parametrize("drop", [False, True])
def test_validation_batches_are_the_sizes_the_datasets_say(
    samples: list[Sample], drop: bool
) -> None:
    d = build_datasets(samples, samples[:11], num_classes=2, image_size=48, batch_size=4,
                       seed=0, augment=False, drop_remainder=drop)
    assert [len(y) for _, y in batches(d.val)] == list(d.val_batch_sizes)
    assert d.val_batch_sizes == ((4, 4) if drop else (4, 4, 3))
    assert d.train_batch_sizes == (4,) * d.steps_per_epoch
    # A set smaller than one batch stays one batch with drop_remainder: it is never empty.
    small = build_datasets(samples, samples[:3], num_classes=2, image_size=48, batch_size=4,
                           seed=0, augment=False, drop_remainder=drop)
    assert [len(y) for _, y in batches(small.val)] == [3] == list(small.val_batch_sizes)


def test_seeded_order_is_reproducible_and_reshuffled_each_epoch(samples: list[Sample]) -> None:
    def labels(seed: int) -> list[list[float]]:
        d = build_datasets(
            samples, [], num_classes=2, image_size=40, batch_size=26, seed=seed, augment=False
        )
        return [batches(d.train)[0][0].sum(axis=(1, 2, 3)).round(3).tolist() for _ in range(2)]

    a, b, c = labels(1), labels(1), labels(2)
    assert a == b
    assert a[0] != a[1]  # a new order every epoch
    assert a != c


def test_every_colour_mode_decodes_to_rgb(samples: list[Sample]) -> None:
    d = build_datasets(
        samples[-6:], [], num_classes=2, image_size=36, batch_size=6, seed=0, augment=False
    )
    ((x, _),) = batches(d.train)
    assert x.shape == (6, 36, 36, 3)
    assert all(img.std() > 0 for img in x)  # noise images: not blank after conversion


def test_16_bit_grey_is_scaled_not_clipped(tmp_path: Path) -> None:
    p = tmp_path / "mid.png"
    Image.new("I;16", (8, 8), 32768).save(p)
    d = build_datasets(
        [Sample(str(p), 0, "PNG", "I;16")] * 2,
        [],
        num_classes=2,
        image_size=36,
        batch_size=2,
        seed=0,
        augment=False,
    )
    ((x, _),) = batches(d.train)
    assert x.mean() == pytest.approx(0.5, abs=0.02)


def test_softmax_labels_are_integers(samples: list[Sample]) -> None:
    three = [Sample(s.path, i % 3, s.format, s.mode) for i, s in enumerate(samples)]
    d = build_datasets(three, [], num_classes=3, image_size=36, batch_size=4, seed=0, augment=False)
    _, y = batches(d.train)[0]
    assert y.dtype == np.int32 and set(y.tolist()) <= {0, 1, 2}


def test_batch_larger_than_the_set_is_explained(samples: list[Sample]) -> None:
    with pytest.raises(ValueError, match="larger than the training set"):
        build_datasets(
            samples, [], num_classes=2, image_size=36, batch_size=1000, seed=0, augment=False
        )


def test_large_sets_are_cached_on_disk(
    samples: list[Sample], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert choose_cache(10, 48, tmp_path) == "memory"
    assert cache_bytes(10, 48) == 10 * 48 * 48 * 3
    monkeypatch.setattr("xlagui.core.data.pipeline.MEMORY_CACHE_SHARE", 0.0)
    d = build_datasets(
        samples,
        [],
        num_classes=2,
        image_size=36,
        batch_size=8,
        seed=0,
        augment=False,
        cache_dir=tmp_path / "cache",
    )
    warm_cache(d)
    assert d.cache.startswith(str(tmp_path / "cache"))
    assert any((tmp_path / "cache").iterdir())
    assert len(batches(d.train)) == 3


def test_the_measuring_stream_keeps_epochs_whole(samples: list[Sample]) -> None:
    # The stream repeats the epochs before the prefetch (no stall at an epoch's end), but its
    # batches are still whole epochs: each image once per epoch, none spanning two epochs.
    distinct = samples[:20]  # 20 images of 20 sizes (the odd ones share a source)
    d = build_datasets(
        distinct, [], num_classes=2, image_size=36, batch_size=3, seed=3, augment=False
    )
    steps = d.steps_per_epoch
    assert steps == 6  # 2 images left out of each epoch
    stream = iter(d.stream)
    seen_epochs = []
    for _ in range(3):
        epoch = [next(stream)[0].numpy() for _ in range(steps)]
        images = [img.tobytes() for x in epoch for img in x]
        assert len(images) == steps * 3
        assert len(set(images)) == len(images)  # nobody twice within an epoch
        seen_epochs.append(images)
    assert seen_epochs[0] != seen_epochs[1]  # reshuffled each epoch
