"""The closed sets an attribution row is keyed by (their values are the JSON strings of
`comparison.json`'s `explain`; the words for people are in `xlagui/present/`)."""

from __future__ import annotations

from xlagui.core.protocol.identity import StrEnum


class Pass(StrEnum):
    """Which part of a training step a kernel served."""

    FORWARD = "forward"
    INPUT_GRADIENT = "input_gradient"  # the gradient with respect to a layer's input
    WEIGHT_GRADIENT = "weight_gradient"  # the gradient with respect to its weights
    OPTIMIZER = "optimizer"
    OTHER = "other"


class OpKind(StrEnum):
    """What kind of computation a kernel is."""

    CONVOLUTION = "convolution"
    DEPTHWISE_CONVOLUTION = "depthwise_convolution"
    MATMUL = "matmul"
    POOLING = "pooling"
    NORMALIZATION = "normalization"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    DATA_MOVEMENT = "data_movement"
    SCATTER_GATHER = "scatter_gather"
    OTHER = "other"


# The layer of the work no Keras layer owns, and of the step's time no event covered.
OPTIMIZER_LAYER = "optimizer"
LOSS_LAYER = "loss"
FRAMEWORK_LAYER = "framework"
NOT_TRACED = "not traced"
