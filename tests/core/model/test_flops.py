"""The FLOP count against a count done by hand from the 48 px model's shapes."""

from __future__ import annotations

import pytest

from xlagui.core.model import flops
from xlagui.core.model.cnn import expected_parameter_count


def test_48px_training_step_matches_a_hand_count() -> None:
    # Shapes at 48 px: 48x48x3 -conv5-> 44x44x64 -pool-> 22x22x64 -conv5-> 18x18x32 -pool->
    # 9x9x32 -conv5-> 5x5x16 -pool-> 2x2x16 -flatten-> 64 -> 126 -> 52 -> 1 (sigmoid).
    # Conv: multiply-adds K*K*Cin*Cout*Hout*Wout, 2 FLOPs each; bias and ReLU 1 per output.
    conv1_macs = 5 * 5 * 3 * 64 * 44 * 44  # 9,292,800
    conv1_out = 44 * 44 * 64
    conv2_macs = 5 * 5 * 64 * 32 * 18 * 18  # 16,588,800
    conv2_out = 18 * 18 * 32
    conv3_macs = 5 * 5 * 32 * 16 * 5 * 5  # 320,000
    conv3_out = 5 * 5 * 16
    pool1, pool2, pool3 = 22 * 22 * 64, 9 * 9 * 32, 2 * 2 * 16  # outputs, 3 compares each
    d1, d2, d3 = 64 * 126, 126 * 52, 52 * 1  # dense multiply-adds

    forward = (
        2 * conv1_macs + 2 * conv1_out
        + 3 * pool1
        + 2 * conv2_macs + 2 * conv2_out
        + 3 * pool2
        + 2 * conv3_macs + 2 * conv3_out
        + 3 * pool3
        + 2 * d1 + 2 * 126
        + 2 * d2 + 2 * 52
        + 2 * d3 + 1 + 4  # bias, sigmoid
    )
    assert forward == 52_803_137
    backward = (
        2 * conv1_macs + 2 * conv1_out  # first layer: weight gradient only
        + 3 * pool1
        + 4 * conv2_macs + 2 * conv2_out  # weight and input gradients
        + 3 * pool2
        + 4 * conv3_macs + 2 * conv3_out
        + 3 * pool3
        + 4 * d1 + 2 * 126
        + 4 * d2 + 2 * 52
        + 4 * d3 + 1 + 3  # bias gradient, sigmoid gradient
    )
    loss = 8 + 4
    params = 83_759
    assert params == expected_parameter_count(48, 2)
    adam = 12 * params
    batch = 32

    count = flops.article_cnn_count(48, 2)
    assert count.forward_per_sample == forward
    assert count.train_per_sample == forward + backward + loss
    assert count.params == params
    assert count.train_per_step(batch) == batch * (forward + backward + loss) + adam
    # Backward is twice the forward's multiply-adds but for layer 1 (a third of the forward at
    # 48 px), which needs no input gradient.
    assert 1.6 < backward / forward < 1.7


def test_per_layer_figures_at_48px() -> None:
    count = flops.article_cnn_count(48, 2)
    by_name = {layer.name: layer for layer in count.layers}
    assert by_name["conv2d_1"].forward == 2 * 16_588_800 + 2 * 10_368
    assert by_name["conv2d_1"].backward == 4 * 16_588_800 + 2 * 10_368
    assert by_name["flatten"].train == 0
    assert [layer.name for layer in count.largest(2)] == ["conv2d_1", "conv2d"]


def test_more_classes_use_a_softmax_head() -> None:
    two = flops.article_cnn_count(48, 2)
    five = flops.article_cnn_count(48, 5)
    head = five.layers[-1]
    assert head.output_shape == (5,)
    assert head.forward == 2 * 52 * 5 + 5 + 5 * 5  # multiply-adds, bias, softmax
    assert five.params == expected_parameter_count(48, 5)
    assert five.train_per_sample > two.train_per_sample


def test_traffic_estimate_at_48px() -> None:
    count = flops.article_cnn_count(48, 2)
    conv1 = count.layers[0]
    # forward: read the 48x48x3 input, write the 44x44x64 output; backward: read the output
    # gradient, the saved input and output, no input gradient (first layer).
    assert conv1.forward_bytes_per_sample == 4 * (48 * 48 * 3 + 44 * 44 * 64)
    assert conv1.backward_bytes_per_sample == 4 * (2 * 44 * 44 * 64 + 48 * 48 * 3)
    assert conv1.weight_bytes_per_step == 4 * 3 * (5 * 5 * 3 * 64 + 64)
    intensity = count.intensity(64)
    assert 10 < intensity < 100


def test_unknown_layers_and_activations_are_refused() -> None:
    odd = flops.LayerShape("x", "lstm", (4,), (4,))
    with pytest.raises(ValueError, match="cannot count a lstm"):
        flops.count_model([odd])
    gelu = flops.LayerShape("d", "dense", (4,), (4,), activation="gelu", params=20)
    with pytest.raises(ValueError, match="gelu"):
        flops.count_model([gelu])


@pytest.mark.tf
def test_keras_model_gives_the_same_shapes_as_the_architecture() -> None:
    from xlagui.core.model.cnn import build_model

    for size, classes in ((48, 2), (64, 4)):
        model = build_model(size, classes, seed=0)
        from_keras = flops.shapes_from_keras(model)
        worked_out = flops.article_cnn_shapes(size, classes)
        assert [(s.kind, s.input_shape, s.output_shape, s.window, s.activation, s.params)
                for s in from_keras] == [
            (s.kind, s.input_shape, s.output_shape, s.window, s.activation, s.params)
            for s in worked_out
        ]
