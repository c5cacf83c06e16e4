from __future__ import annotations

import pytest

from xlagui.core.model.cnn import build_model, compile_model, expected_parameter_count
from xlagui.core.protocol.config import ConfigError

pytestmark = pytest.mark.tf


def test_the_articles_cnn_layer_by_layer() -> None:
    import keras

    model = build_model(150, 2, seed=0)
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == [
        "Conv2D",
        "MaxPooling2D",
        "Conv2D",
        "MaxPooling2D",
        "Conv2D",
        "MaxPooling2D",
        "Flatten",
        "Dense",
        "Dense",
        "Dense",
    ]
    convs = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert [(c.filters, c.kernel_size, c.padding) for c in convs] == [
        (64, (5, 5), "valid"),
        (32, (5, 5), "valid"),
        (16, (5, 5), "valid"),
    ]
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    assert [(d.units, d.activation.__name__) for d in dense] == [
        (126, "relu"),
        (52, "relu"),
        (1, "sigmoid"),
    ]
    shapes = [tuple(layer.output.shape[1:]) for layer in model.layers]
    assert shapes == [
        (146, 146, 64),
        (73, 73, 64),
        (69, 69, 32),
        (34, 34, 32),
        (30, 30, 16),
        (15, 15, 16),
        (3600,),
        (126,),
        (52,),
        (1,),
    ]
    assert model.count_params() == expected_parameter_count(150, 2) == 529_295


def test_softmax_head_for_more_classes() -> None:
    model = build_model(48, 5)
    assert model.layers[-1].units == 5 and model.layers[-1].activation.__name__ == "softmax"
    assert model.count_params() == expected_parameter_count(48, 5)


def test_smallest_size_and_below() -> None:
    assert build_model(36, 2).output_shape == (None, 1)
    with pytest.raises(ConfigError, match="36x36"):
        build_model(35, 2)


@pytest.mark.parametrize("jit", [False, True])
def test_jit_compile_is_explicit(jit: bool) -> None:
    model = build_model(48, 2)
    compile_model(model, 2, jit_compile=jit)
    assert model.jit_compile is jit
