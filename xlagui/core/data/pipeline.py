"""The tf.data input pipeline. Its functions run only in the worker process (they load
TensorFlow, which is imported inside them). What one image is (`Sample`) is in the spec.

From the scan's file list (no second walk of the folder): decode and resize once, cache (in
memory, or on disk under the run's folder when the set is too large), then per epoch a seeded
shuffle, fixed-size batches, the article's augmentation and the 1/255 rescale, and prefetch.
Augmentation runs here, outside the compiled model: the program XLA compiles is the model alone,
and XLA never meets image ops it cannot compile.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlagui.core.protocol.config import check_batch_fits
from xlagui.core.protocol.spec import Sample

# Above this share of the memory available now, the decoded set is cached on disk instead.
MEMORY_CACHE_SHARE = 0.25


@dataclass
class Datasets:
    train: Any  # tf.data.Dataset of (float32 images in [0, 1], labels), batched
    # The same batches, epoch after epoch without end, for the measuring worker's steps.
    stream: Any
    val: Any | None
    steps_per_epoch: int
    train_count: int
    val_count: int
    cache: str  # "memory" or the on-disk cache path
    bases: tuple[Any, ...] = ()  # the cached, decoded datasets, for warm_cache()
    # The size of every batch, in order: a training epoch's (all full) and the validation
    # set's (its last one partial unless dropped), which tell a step's input shapes
    # (`xlagui.core.worker.compiles`).
    train_batch_sizes: tuple[int, ...] = ()
    val_batch_sizes: tuple[int, ...] = ()


def batch_sizes(count: int, batch_size: int, drop_remainder: bool) -> tuple[int, ...]:
    """The sizes of the batches `count` images make, in order: full ones, then the partial
    rest unless dropped. A set smaller than one batch is one batch of all of it either way
    (`validation_batches`)."""
    if count <= 0:
        return ()
    if count < batch_size:
        return (count,)
    rest = count % batch_size
    full = (batch_size,) * (count // batch_size)
    return full + ((rest,) if rest and not drop_remainder else ())


def cache_bytes(count: int, image_size: int) -> int:
    """Bytes the decoded uint8 images take in the cache."""
    return count * image_size * image_size * 3


def choose_cache(count: int, image_size: int, cache_dir: Path | None) -> str:
    import psutil  # lazy: keeps psutil off the window's start-up

    if cache_dir is None:
        return "memory"
    if cache_bytes(count, image_size) <= MEMORY_CACHE_SHARE * psutil.virtual_memory().available:
        return "memory"
    return str(cache_dir)


def _pillow_decode(path: bytes, size: int) -> Any:
    import numpy as np  # lazy: decoding runs in the worker; the window starts without NumPy
    from PIL import Image  # lazy: as NumPy above

    with Image.open(os.fsdecode(path)) as src:
        src.seek(0)
        im: Image.Image = src
        if src.mode in ("I;16", "I;16B", "I;16L", "I"):
            # 16-bit grayscale: scale to 8 bits before converting, or it clips to white.
            arr = np.asarray(src, dtype=np.float32) / 257.0
            im = Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8), "L")
        rgb = im.convert("RGB").resize((size, size), Image.Resampling.BILINEAR)
        return np.asarray(rgb, dtype=np.uint8)


def _decoded(samples: Sequence[Sample], image_size: int) -> Any:
    """A dataset of (uint8 image [s, s, 3], label) in the order of `samples`."""
    import tensorflow as tf  # lazy: the window imports this module; TF is for the worker

    native = [s for s in samples if s.tf_decodable]
    other = [s for s in samples if not s.tf_decodable]
    autotune = tf.data.AUTOTUNE

    def tf_decode(path: Any, label: Any) -> tuple[Any, Any]:
        raw = tf.io.read_file(path)
        img = tf.io.decode_image(raw, channels=3, expand_animations=False)
        img = tf.image.resize(img, (image_size, image_size), antialias=True)
        img = tf.cast(tf.clip_by_value(tf.round(img), 0, 255), tf.uint8)
        return tf.ensure_shape(img, (image_size, image_size, 3)), label

    def pil_decode(path: Any, label: Any) -> tuple[Any, Any]:
        img = tf.numpy_function(_pillow_decode, [path, image_size], tf.uint8, stateful=False)
        return tf.ensure_shape(img, (image_size, image_size, 3)), label

    parts = []
    for group, fn in ((native, tf_decode), (other, pil_decode)):
        if group:
            # Bytes, not str: a file name that is not valid UTF-8 still names its file.
            ds = tf.data.Dataset.from_tensor_slices(
                ([os.fsencode(s.path) for s in group], [s.label for s in group])
            )
            parts.append(ds.map(fn, num_parallel_calls=autotune, deterministic=True))
    ds = parts[0]
    for extra in parts[1:]:
        ds = ds.concatenate(extra)
    return ds


def augmentation(seed: int) -> Any:
    """The article's ImageDataGenerator settings as Keras 3 preprocessing layers: horizontal
    flip, zoom 0.2, shear 0.2."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    # Called layer by layer, not as a `keras.Sequential`: each preprocessing layer runs on
    # TensorFlow inside tf.data whatever the process's Keras backend (a Sequential runs its
    # layers on the backend's own ops, and JAX's cannot take tf.data's symbolic tensors).
    layers = (
        keras.layers.RandomFlip("horizontal", seed=seed),
        keras.layers.RandomZoom(0.2, seed=seed + 1),
        keras.layers.RandomShear(x_factor=0.2, seed=seed + 2),
    )

    def augment(x: Any, training: bool = True) -> Any:
        for layer in layers:
            x = layer(x, training=training)
        return x

    return augment


def training_batches(
    base: Any, count: int, *, batch_size: int, seed: int, augment: bool, endless: bool = False
) -> Any:
    """Per epoch: a seeded reshuffle of the cached uint8 images, full batches, augmentation
    and the 1/255 rescale, prefetched.

    `endless`: the epochs repeat before the augmentation and the prefetch, for the measuring
    worker. Its batches are the same, epoch by epoch, but the first batch of an epoch no longer
    waits inside a training step for the shuffle buffer to fill again: a `.repeat()` after the
    prefetch rebuilds the whole pipeline at every epoch's end, and that stall (0.2–0.5 s at
    150 px, the same for every arm) landed in one round in every `steps_per_epoch`, adding
    0.4 s to a 0.4 s bf16 step (BENCHMARKS.md, "Arms on this machine"). `fit` still pays it once
    an epoch in the training runs, where it belongs to the epoch's wall time.
    """
    import tensorflow as tf  # lazy: the window imports this module; TF is for the worker

    autotune = tf.data.AUTOTUNE
    ds = base.shuffle(count, seed=seed, reshuffle_each_iteration=True)
    # A partial last batch has another shape and makes XLA compile the step a second time.
    ds = ds.batch(batch_size, drop_remainder=True)
    if endless:
        ds = ds.repeat()
    aug = augmentation(seed) if augment else None

    def finish(x: Any, y: Any) -> tuple[Any, Any]:
        x = tf.cast(x, tf.float32)
        if aug is not None:
            x = aug(x, training=True)
        return x / 255.0, y

    return ds.map(finish, num_parallel_calls=autotune).prefetch(autotune)


def validation_batches(base: Any, batch_size: int, count: int = 0,
                       drop_remainder: bool = False) -> Any:
    """The validation images in their fixed order, batched, rescaled, prefetched. With
    `drop_remainder`, the last partial batch is left out (XLA compiles the evaluation once, not
    again for its size); a set smaller than one batch (`count`) is then one batch of all of it,
    not none."""
    import tensorflow as tf  # lazy: the window imports this module; TF is for the worker

    autotune = tf.data.AUTOTUNE
    size = min(batch_size, count) if count > 0 else batch_size
    return (
        base.batch(size, drop_remainder=drop_remainder)
        .map(lambda x, y: (tf.cast(x, tf.float32) / 255.0, y), num_parallel_calls=autotune)
        .prefetch(autotune)
    )


def build_datasets(
    train: Sequence[Sample],
    val: Sequence[Sample],
    *,
    num_classes: int,
    image_size: int,
    batch_size: int,
    seed: int,
    augment: bool,
    cache_dir: Path | None = None,
    drop_remainder: bool = False,
) -> Datasets:
    import tensorflow as tf  # lazy: the window imports this module; TF is for the worker

    if not train:
        raise ValueError("the training set is empty")
    check_batch_fits(batch_size, len(train))
    steps = len(train) // batch_size
    label_dtype = tf.float32 if num_classes == 2 else tf.int32

    def prepared(samples: Sequence[Sample], name: str) -> tuple[Any, str]:
        ds = _decoded(samples, image_size)
        ds = ds.map(lambda x, y: (x, tf.cast(y, label_dtype)))
        where = choose_cache(len(samples), image_size, cache_dir)
        if where == "memory":
            return ds.cache(), where
        Path(where).mkdir(parents=True, exist_ok=True)
        path = str(Path(where) / name)
        return ds.cache(path), path

    train_base, where = prepared(train, "train")

    def batches(endless: bool) -> Any:
        return training_batches(
            train_base,
            len(train),
            batch_size=batch_size,
            seed=seed,
            augment=augment,
            endless=endless,
        )

    val_ds = val_base = None
    if val:
        val_base, _ = prepared(val, "val")
        val_ds = validation_batches(val_base, batch_size, len(val), drop_remainder)
    return Datasets(
        train=batches(False),
        stream=batches(True),
        val=val_ds,
        steps_per_epoch=steps,
        train_count=len(train),
        val_count=len(val),
        cache=where,
        bases=(train_base, val_base) if val_base is not None else (train_base,),
        train_batch_sizes=(batch_size,) * steps,
        val_batch_sizes=batch_sizes(len(val), batch_size, drop_remainder),
    )


def warm_cache(datasets: Datasets) -> None:
    """Decode every image once, before training, so the first epoch times compiling and
    training rather than JPEG decoding (which both sides of a comparison would pay alike)."""
    for base in datasets.bases:
        for _ in base.batch(256):
            pass
