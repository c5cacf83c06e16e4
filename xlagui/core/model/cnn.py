"""The article's CNN, exactly, and the head and compile every model shares. Its Keras parts run
only inside a worker process (Keras is imported inside the functions)."""

from __future__ import annotations

from typing import Any, Literal

from xlagui.core.protocol.config import check_image_size


def build_model(image_size: int, num_classes: int, seed: int | None = None) -> Any:
    """Conv(64,5x5) → Pool → Conv(32,5x5) → Pool → Conv(16,5x5) → Pool → Flatten →
    Dense(126) → Dense(52) → Dense(1, sigmoid) for two classes, Dense(n, softmax) for more.

    Inputs are RGB floats in [0, 1]: rescaling and augmentation happen in the tf.data pipeline,
    outside the compiled model, so the program XLA compiles is the model alone.
    """
    import keras  # lazy: the window imports this module; Keras is for the worker

    check_image_size(image_size)
    if num_classes < 2:
        raise ValueError(f"a classifier needs at least 2 classes, got {num_classes}")
    init = keras.initializers.GlorotUniform

    def kinit(offset: int) -> dict[str, Any]:
        return {} if seed is None else {"kernel_initializer": init(seed=seed + offset)}

    head = classifier_head(num_classes, **kinit(6))
    return keras.Sequential(
        [
            keras.Input(shape=(image_size, image_size, 3)),
            keras.layers.Conv2D(64, (5, 5), activation="relu", **kinit(0)),
            keras.layers.MaxPooling2D((2, 2)),
            keras.layers.Conv2D(32, (5, 5), activation="relu", **kinit(1)),
            keras.layers.MaxPooling2D((2, 2)),
            keras.layers.Conv2D(16, (5, 5), activation="relu", **kinit(2)),
            keras.layers.MaxPooling2D((2, 2)),
            keras.layers.Flatten(),
            keras.layers.Dense(126, activation="relu", **kinit(3)),
            keras.layers.Dense(52, activation="relu", **kinit(4)),
            head,
        ],
        name="article_cnn",
    )


def head_units(num_classes: int) -> int:
    """The output width a classifier of `num_classes` has here: 1 (sigmoid) for two classes,
    like the article's CNN, one per class (softmax) otherwise."""
    return 1 if num_classes == 2 else num_classes


def classifier_head(num_classes: int, **kwargs: Any) -> Any:
    """The last layer of every model xlagui builds: Dense(1, sigmoid) for two classes,
    Dense(n, softmax) for more, named "head".

    It computes in float32 under any mixed-precision policy, as the Keras guide asks: a softmax
    or sigmoid in bfloat16/float16 loses the small probabilities the loss needs."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    activation = "sigmoid" if num_classes == 2 else "softmax"
    return keras.layers.Dense(
        head_units(num_classes), activation=activation, name="head", dtype="float32", **kwargs
    )


def default_loss(num_classes: int) -> str:
    return "binary_crossentropy" if num_classes == 2 else "sparse_categorical_crossentropy"


def compile_model(
    model: Any,
    num_classes: int,
    jit_compile: bool | Literal["auto"],
    *,
    optimizer: Any = None,
    loss: Any = None,
    **compile_args: Any,
) -> None:
    """Binary cross-entropy (or sparse categorical for >2 classes), Adam, accuracy.

    `jit_compile` is always passed explicitly: Keras 3's default "auto" turns XLA on whenever a
    GPU is visible, and a baseline that leaves it at the default is not a baseline. "auto" is
    passed on as it is, for the arm that measures what Keras does by default. A model of the
    user's may bring its own `optimizer` and `loss` (its file's compile config); the accuracy
    metric is always added, since every figure of accuracy reads it. `compile_args`: the other
    keyword arguments an arm's levers pass (`Arm.compile_arguments`).
    """
    import keras  # lazy: the window imports this module; Keras is for the worker

    model.compile(
        optimizer=optimizer if optimizer is not None else keras.optimizers.Adam(),
        loss=loss if loss is not None else default_loss(num_classes),
        metrics=["accuracy"],
        jit_compile=jit_compile if jit_compile == "auto" else bool(jit_compile),
        **compile_args,
    )


def expected_parameter_count(image_size: int, num_classes: int) -> int:
    """The parameter count worked out by hand from the architecture (used by tests and docs)."""
    s = image_size
    for _ in range(3):
        s = (s - 4) // 2
    conv = (5 * 5 * 3 * 64 + 64) + (5 * 5 * 64 * 32 + 32) + (5 * 5 * 32 * 16 + 16)
    flat = s * s * 16
    outputs = 1 if num_classes == 2 else num_classes
    dense = (flat * 126 + 126) + (126 * 52 + 52) + (52 * outputs + outputs)
    return conv + dense
