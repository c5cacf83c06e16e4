"""Every built-in model builds at its smallest image size, trains a step with and without XLA,
says which is in effect, and has its training step's FLOPs counted."""

from __future__ import annotations

import pytest

from xlagui.core.model.sources import builtin_names
from xlagui.core.protocol.config import ModelChoice

pytestmark = pytest.mark.tf


@pytest.mark.parametrize("name", builtin_names())
@pytest.mark.parametrize("jit", [False, True])
def test_a_builtin_trains_a_step(name: str, jit: bool) -> None:
    import keras
    import numpy as np
    import tensorflow as tf

    from xlagui.core.model.build import build_compiled
    from xlagui.core.model.check import _step_flops

    keras.utils.set_random_seed(0)
    size = ModelChoice(name=name).min_image_size
    built = build_compiled(ModelChoice(name=name), size, 2, 0, jit)
    model = built.model
    assert model.jit_compile is jit  # read back, as the worker does
    assert model.output_shape == (None, 1) and model.layers[-1].name == "head"
    assert built.compile_words == "Adam + binary_crossentropy"
    x = np.random.default_rng(0).random((4, size, size, 3), dtype="float32")
    y = np.array([0, 1, 0, 1], "float32")
    loss = model.train_on_batch(x, y, return_dict=True)["loss"]
    assert np.isfinite(loss)
    if not jit:  # the count does not depend on how the model is compiled: once per model
        step, forward = _step_flops(tf, model, tf.constant(x), tf.constant(y))
        assert step > 2 * forward * 4 > 0  # a step is more than the forward pass of its batch


def test_more_classes_get_a_softmax_head() -> None:
    from xlagui.core.model.builtin import build_builtin

    model = build_builtin("mixer", 32, 5)
    assert model.output_shape == (None, 5)
    assert model.layers[-1].activation.__name__ == "softmax"
