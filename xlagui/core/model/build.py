"""The one place a worker turns a `ModelChoice` into a compiled Keras model, whatever its source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from xlagui.core.model.cnn import compile_model, default_loss
from xlagui.core.model.files import LoadedModel
from xlagui.core.model.sources import source_of
from xlagui.core.protocol.config import ModelChoice


@dataclass
class BuiltModel:
    """A compiled model, and how it was compiled, in words ("Adam + binary_crossentropy")."""

    model: Any
    compile_words: str


def load(choice: ModelChoice, image_size: int, num_classes: int, seed: int | None) -> LoadedModel:
    """The model of `choice`, uncompiled, built by its source (files raise `ModelFileError`
    with the file and line; a choice no source can build, `ConfigError`)."""
    return source_of(choice).build(choice, image_size, num_classes, seed)


def build_compiled(
    choice: ModelChoice,
    image_size: int,
    num_classes: int,
    seed: int | None,
    jit_compile: bool | Literal["auto"],
    **compile_args: Any,
) -> BuiltModel:
    """`choice` built (or loaded) and compiled with `jit_compile` passed explicitly, and any
    other keyword arguments of `model.compile` an arm's levers ask for (`compile_args`): a
    file's own optimizer and loss where it has them, else Adam and the matching cross-entropy."""
    loaded = load(choice, image_size, num_classes, seed)
    compile_model(
        loaded.model, num_classes, jit_compile, optimizer=loaded.optimizer, loss=loaded.loss,
        **compile_args,
    )
    words = loaded.compile_words
    if loaded.optimizer is None and loaded.loss is None:
        words = f"Adam + {default_loss(num_classes)}"
    return BuiltModel(loaded.model, words)
