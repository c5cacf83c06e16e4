"""The parity steps of one arm (`parity_steps`): the first N training steps of the model as set
up, on batches every arm gets alike, their losses, and the outputs on one fixed batch after
them; the parent judges them (`xlagui.core.analysis.parity.judge`).

Every arm's worker builds the model from the same seed (`setup.set_up`); here it trains the
same N batches in the same order: drawn from the decoded training set by a NumPy permutation of
the run's seed (not by TensorFlow's shuffle, which an arm's settings could reach), without
augmentation. The fixed batch is the first batch of the validation set in its order (of the
training set's permutation when there is none). The model is left as it was found: weights,
optimizer state and step count are put back, so the same worker can then profile or run the
references (`nudge=True`: the initial weights nudged by one float32 ulp each, up or down at
random, another way for each `nudge_seed`) with the functions it already compiled.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from typing import Any

from xlagui.core.analysis.parity import PARITY_STEPS
from xlagui.core.protocol.compiles import StepFunction
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.why import ParityTrace
from xlagui.core.worker.compiles import CompileWatch
from xlagui.core.worker.setup import Setup

# Decoded images are read this many at a time when the chosen ones are picked out.
_READ_CHUNK = 256


def parity_steps(spec: RunSpec, setup: Setup, n: int = PARITY_STEPS,
                 nudge: bool = False, nudge_seed: int = 0,
                 watch: CompileWatch | None = None, permute: bool = False,
                 batches: tuple[Any, Any, Any] | None = None) -> ParityTrace:
    """N training steps of `setup`'s model on the parity batches: the loss of each step (its
    own batch's, the metrics reset before it) and the outputs on the fixed batch after them
    (`predict_on_batch`: the arm computes them its own way). `nudge_seed` picks the nudge's
    directions: each seed gives another reference. Raises `RuntimeError` on a model that
    trained already: the sides must start from the seed's initial weights. `watch`: the
    worker's compile watch, told of every step (the first compiles, the others are steady).
    `permute`: the other rounding reference: the same steps with each batch's images in
    another order (seeded by `nudge_seed`). The step is the same function of the batch (a
    mean over it, batch statistics over it), summed in another order: what reassociating
    the batch's reductions alone does, which a nudge of the weights does not show. `batches`:
    `parity_batches`' result for these settings and `n`, decoded once for every run of a
    worker (None: decoded here)."""
    import numpy as np  # lazy: with TensorFlow, in the worker

    model = setup.model
    if n < 1:
        raise ValueError(f"parity needs at least one step, not {n}")
    if int(model.optimizer.iterations.numpy()) != 0:
        raise RuntimeError("the parity steps need a model that has not trained yet")
    images, labels, fixed = batches or parity_batches(setup, spec.config.seed,
                                                      spec.config.batch_size, n)
    if len(images) != n:
        raise ValueError(f"{len(images)} parity batches given for {n} steps")
    if permute:
        order = np.random.default_rng(spec.config.seed * 1000 + nudge_seed + 7).permutation(
            images.shape[1])
        images, labels = images[:, order], labels[:, order]
    saved = _snapshot(model)
    try:
        digest = weights_digest(model)
        if nudge:
            _nudge(model, spec.config.seed * 1000 + nudge_seed)
        losses = _train(setup, images, labels, watch)
        if watch is not None:
            watch.begin(StepFunction.PREDICT)
        outputs = np.asarray(model.predict_on_batch(fixed), dtype=np.float64).reshape(-1)
        if watch is not None:
            watch.end(StepFunction.PREDICT, 0)
    finally:
        setup.steps_synced()  # then put back: the steps' state is the model's again
        _restore(saved)
        model.reset_metrics()
    return ParityTrace(tuple(losses), tuple(float(v) for v in outputs), digest,
                       nudge or permute)


def parity_batches(setup: Setup, seed: int, batch_size: int, n: int) -> tuple[Any, Any, Any]:
    """The `n` training batches (images [n, B, s, s, 3] float32 in [0, 1], labels [n, B]) and
    the fixed batch's images, the same on every arm (the module's docstring)."""
    import numpy as np  # lazy: with TensorFlow, in the worker

    train = setup.datasets.bases[0]
    count = setup.datasets.train_count
    order = np.random.default_rng(seed).permutation(count)
    chosen = np.resize(order, n * batch_size)  # the permutation again when N batches need more
    picked, picked_labels = _pick(train, set(chosen.tolist()))
    flat = np.stack([picked[i] for i in chosen])
    images = flat.reshape(n, batch_size, *flat.shape[1:])
    labels = np.stack([picked_labels[i] for i in chosen]).reshape(n, batch_size)
    if len(setup.datasets.bases) > 1:  # the validation set's first batch
        fixed_images, _ = _pick(setup.datasets.bases[1], set(range(batch_size)))
        fixed = np.stack([fixed_images[i] for i in sorted(fixed_images)])
    else:  # the first training batch (the permutation's first images)
        fixed = flat[:batch_size]
    # As the pipeline rescales (`pipeline.training_batches`): a division in float32.
    scale = np.float32(255)
    return images.astype(np.float32) / scale, labels, fixed.astype(np.float32) / scale


def _pick(base: Any, wanted: set[int]) -> tuple[dict[int, Any], dict[int, Any]]:
    """The decoded (uint8 image, label) pairs at the positions `wanted`, read in order."""
    images: dict[int, Any] = {}
    labels: dict[int, Any] = {}
    start = 0
    last = max(wanted, default=-1)
    for xs, ys in base.batch(_READ_CHUNK).as_numpy_iterator():
        for j in range(len(xs)):
            if start + j in wanted:
                images[start + j] = xs[j]
                labels[start + j] = ys[j]
        start += len(xs)
        if start > last:
            break
    return images, labels


def _iterators(tf: Any, model: Any, images: Any, labels: Any) -> Iterator[Any]:
    """What each step's call of the train function reads: one step a call. Where a call runs
    one step (`steps_per_execution` 1), one iterator over all the batches, read once a call: a
    new dataset a step would hold its batch as a constant, which costs a step at 150 px and
    batch 64 a third more (3.84 s against 2.60 s on this project's 2-core AMD EPYC) and the
    why that much longer. Above 1 a call runs the steps its iterator has, so each call gets an
    iterator over its one batch, and every arm still reports each step. The function is traced
    once either way: every iterator has the same element spec."""
    if int(getattr(model, "steps_per_execution", 1) or 1) == 1:
        shared = iter(tf.data.Dataset.from_tensor_slices((images, labels)))
        return itertools.repeat(shared, len(images))
    return (iter(tf.data.Dataset.from_tensors((x, y))) for x, y in zip(images, labels,
                                                                          strict=True))


def _train(setup: Setup, images: Any, labels: Any,
           watch: CompileWatch | None = None) -> list[float]:
    """One step per batch through Keras' own train function (the arm's: jit_compile, the
    policy's loss scaling), each step's loss read after resetting the running mean
    (`_iterators`: what each call reads)."""
    model, train = setup.model, setup.steps
    losses = []
    for batch in _iterators(setup.tf, model, images, labels):
        train.sync()  # the metrics are the model's to reset (on JAX, in its state)
        model.reset_metrics()
        if watch is not None:
            watch.begin(StepFunction.TRAIN)
        logs = train(batch)
        losses.append(float(logs["loss"]))
        if watch is not None:  # every parity batch is a full one: the pass's first size
            watch.end(StepFunction.TRAIN, 0)
    train.sync()  # what the steps trained, on the model (its outputs are read next)
    return losses


def _variables(model: Any) -> list[Any]:
    """The model's and its optimizer's variables (the optimizer built first: Keras builds its
    slots at the first step, and what does not exist yet cannot be put back)."""
    optimizer = model.optimizer
    if not optimizer.built:
        optimizer.build(model.trainable_variables)
    seen: set[int] = set()
    out = []
    for v in [*model.variables, *optimizer.variables]:
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    return out


def _snapshot(model: Any) -> list[tuple[Any, Any]]:
    return [(v, v.numpy().copy()) for v in _variables(model)]


def _restore(saved: list[tuple[Any, Any]]) -> None:
    for variable, value in saved:
        variable.assign(value)


def weights_digest(model: Any) -> str:
    """A short digest of the model's weights in order: two sides built from the same seed
    have the same."""
    digest = hashlib.sha256()
    for w in model.weights:
        digest.update(w.numpy().tobytes())
    return digest.hexdigest()[:16]


def _nudge(model: Any, seed: int) -> None:
    """Every trainable float32 weight moved by one ulp, up or down at random (seeded)."""
    import numpy as np  # lazy: with TensorFlow, in the worker

    rng = np.random.default_rng(seed)
    for w in model.trainable_weights:
        value = w.numpy()
        if value.dtype != np.float32:
            continue
        direction = np.where(rng.random(value.shape) < 0.5, -np.inf, np.inf).astype(np.float32)
        w.assign(np.nextafter(value, direction))
