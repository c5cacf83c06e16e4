"""The built-in models as a model source (`BuiltinSource`): the article's CNN
(`xlagui.core.model.cnn`), three `keras.applications` bodies with the shared head, a small Vision
Transformer and a small MLP-Mixer, built from Keras layers. What each one is, in words, is
`xlagui.present.models`'.

The builders run only in a worker process: every function imports Keras itself. Inputs are RGB
floats in [0, 1] (the tf.data pipeline rescales), the head is
`xlagui.core.model.cnn.classifier_head`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from xlagui.core.model.cnn import build_model as build_article_cnn
from xlagui.core.model.cnn import classifier_head
from xlagui.core.model.files import LoadedModel
from xlagui.core.model.source import ModelSource, or_list
from xlagui.core.protocol.config import ConfigError, ModelChoice

# The built-ins by name, in the order the window and `xlagui models` list them; the first is
# the default (`ModelChoice()`).
BUILTIN_NAMES = ("cnn", "mobilenetv2", "resnet50", "efficientnetb0", "vit", "mixer")

PATCH = 8  # ViT and Mixer: 8x8 patches (324 tokens at 150 px)
DIM = 128  # their token width
BLOCKS = 4
HEADS = 4  # ViT's attention heads (32 dims each)
VIT_MLP = 256
MIXER_TOKEN_MLP = 64
MIXER_CHANNEL_MLP = 256


def _application(name: str) -> Callable[[int, int], Any]:
    def build(image_size: int, num_classes: int) -> Any:
        import keras  # lazy: the window imports this module; Keras is for the worker

        inputs = keras.Input(shape=(image_size, image_size, 3))
        x = inputs
        if name == "efficientnetb0":
            # EfficientNet rescales by 1/255 and normalises inside; the pipeline gives [0, 1].
            x = keras.layers.Rescaling(255.0, name="to_0_255")(x)
        app = {
            "mobilenetv2": keras.applications.MobileNetV2,
            "resnet50": keras.applications.ResNet50,
            "efficientnetb0": keras.applications.EfficientNetB0,
        }[name]
        # weights=None: nothing is downloaded; the speed of a step does not depend on the weights.
        body = app(
            input_shape=(image_size, image_size, 3),
            include_top=False,
            weights=None,
            pooling="avg",
        )
        outputs = classifier_head(num_classes)(body(x))
        return keras.Model(inputs, outputs, name=name)

    return build


def _patches(inputs: Any) -> Any:
    """8x8 patches, each projected to DIM: a strided convolution, then one token per patch."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    x = keras.layers.Conv2D(DIM, PATCH, strides=PATCH, name="patches")(inputs)
    grid = x.shape[1] * x.shape[2]
    return keras.layers.Reshape((grid, DIM), name="tokens")(x)


def _position_embedding() -> Any:
    import keras  # lazy: the window imports this module; Keras is for the worker

    class PositionEmbedding(keras.layers.Layer):  # type: ignore[misc]  # Keras is untyped
        """A learned vector added to each token (ViT's position embedding)."""

        def build(self, input_shape: Any) -> None:
            self.table = self.add_weight(
                shape=(1, input_shape[1], input_shape[2]),
                initializer=keras.initializers.RandomNormal(stddev=0.02),
                name="table",
            )

        def call(self, x: Any) -> Any:
            return x + self.table

    return PositionEmbedding(name="positions")


def _channel_mlp(x: Any, block: int, hidden: int, name: str) -> Any:
    """The second half of a ViT or Mixer block: LayerNorm → GELU MLP over the channels → add."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    layers = keras.layers
    y = layers.LayerNormalization(epsilon=1e-6, name=f"block{block}_norm2")(x)
    y = layers.Dense(hidden, activation="gelu", name=f"block{block}_{name}1")(y)
    y = layers.Dense(DIM, name=f"block{block}_{name}2")(y)
    return layers.Add(name=f"block{block}_add2")([x, y])


def build_vit(image_size: int, num_classes: int) -> Any:
    """Patches → position embedding → 4 × (LayerNorm → MultiHeadAttention → add, LayerNorm →
    GELU MLP → add) → LayerNorm → mean over tokens → head."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    layers = keras.layers
    inputs = keras.Input(shape=(image_size, image_size, 3))
    x = _position_embedding()(_patches(inputs))
    for i in range(BLOCKS):
        y = layers.LayerNormalization(epsilon=1e-6, name=f"block{i}_norm1")(x)
        y = layers.MultiHeadAttention(HEADS, DIM // HEADS, name=f"block{i}_attention")(y, y)
        x = layers.Add(name=f"block{i}_add1")([x, y])
        x = _channel_mlp(x, i, VIT_MLP, "mlp")
    x = layers.LayerNormalization(epsilon=1e-6, name="norm")(x)
    x = layers.GlobalAveragePooling1D(name="mean")(x)
    return keras.Model(inputs, classifier_head(num_classes)(x), name="vit")


def build_mixer(image_size: int, num_classes: int) -> Any:
    """Patches → 4 × (LayerNorm → token-mixing GELU MLP across patches → add, LayerNorm →
    channel-mixing GELU MLP → add) → LayerNorm → mean over tokens → head."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    layers = keras.layers
    inputs = keras.Input(shape=(image_size, image_size, 3))
    x = _patches(inputs)
    tokens = x.shape[1]
    for i in range(BLOCKS):
        y = layers.LayerNormalization(epsilon=1e-6, name=f"block{i}_norm1")(x)
        y = layers.Permute((2, 1), name=f"block{i}_to_tokens")(y)
        y = layers.Dense(MIXER_TOKEN_MLP, activation="gelu", name=f"block{i}_token1")(y)
        y = layers.Dense(tokens, name=f"block{i}_token2")(y)
        y = layers.Permute((2, 1), name=f"block{i}_to_channels")(y)
        x = layers.Add(name=f"block{i}_add1")([x, y])
        x = _channel_mlp(x, i, MIXER_CHANNEL_MLP, "channel")
    x = layers.LayerNormalization(epsilon=1e-6, name="norm")(x)
    x = layers.GlobalAveragePooling1D(name="mean")(x)
    return keras.Model(inputs, classifier_head(num_classes)(x), name="mixer")


def build_builtin(name: str, image_size: int, num_classes: int, seed: int | None = None) -> Any:
    """The built-in model `name` (one of `BUILTIN_NAMES`), uncompiled.
    Only the article's CNN takes `seed` per layer; the others follow Keras' global seed, which
    the worker sets before building."""
    if name == "cnn":
        return build_article_cnn(image_size, num_classes, seed=seed)
    builders: dict[str, Callable[[int, int], Any]] = {
        "mobilenetv2": _application("mobilenetv2"),
        "resnet50": _application("resnet50"),
        "efficientnetb0": _application("efficientnetb0"),
        "vit": build_vit,
        "mixer": build_mixer,
    }
    return builders[name](image_size, num_classes)


class BuiltinSource(ModelSource):
    """The models xlagui builds by name (`BUILTIN_NAMES`). `file_suffixes`: those of the
    registry's file sources, for the message that refuses an unknown name."""

    name: ClassVar[str] = "builtin"

    def __init__(self, file_suffixes: tuple[str, ...] = ()) -> None:
        self._file_suffixes = file_suffixes

    def names(self) -> tuple[str, ...]:
        return BUILTIN_NAMES

    def choose(self, argument: str, new_head: bool = False) -> ModelChoice:
        choice = ModelChoice(name=argument.strip().lower(), new_head=new_head)
        self.check(choice)
        return choice

    def check(self, choice: ModelChoice) -> None:
        if choice.name not in BUILTIN_NAMES:
            files = or_list(self._file_suffixes)
            raise ConfigError(
                f"unknown model {choice.name!r}: choose one of {', '.join(BUILTIN_NAMES)}"
                + (f", or give a {files} file" if files else "")
            )
        if choice.file:
            raise ConfigError(f"the built-in model {choice.name} takes no file")
        super().check(choice)

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        return LoadedModel(build_builtin(choice.name, image_size, num_classes, seed=seed))
