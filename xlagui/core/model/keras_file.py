"""A saved `.keras` model as a model source: loaded with Keras' safe mode (no Python code from the
file runs), with its saved optimizer and loss, or with its last layer replaced by the head for
the dataset's classes (`--new-head`). Loading runs only in a worker process."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from xlagui.core.model.cnn import classifier_head
from xlagui.core.model.files import (
    LoadedModel,
    ModelFileError,
    ModelFileProblem,
    check_output,
    input_size,
)
from xlagui.core.model.source import FileSource
from xlagui.core.protocol.config import ModelChoice


class KerasFileSource(FileSource):
    """A saved Keras model (`.keras`), loaded in safe mode."""

    name: ClassVar[str] = "keras"
    suffixes: ClassVar[tuple[str, ...]] = (".keras",)
    takes_new_head: ClassVar[bool] = True

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        return load_keras(Path(choice.file), num_classes, choice.new_head)


def load_keras(path: Path, num_classes: int, new_head: bool,
               saved_compile: Callable[[Path], dict[str, Any] | None] | None = None
               ) -> LoadedModel:
    """A saved Keras model (`.keras`, or a legacy `.h5`), loaded with `safe_mode=True`; with
    `new_head`, its last layer replaced by the head for `num_classes`. `saved_compile` reads
    the optimizer and loss the file was saved with (a `.keras` archive's by default)."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    try:
        # compile=False: the optimizer's saved state is not wanted (every arm starts fresh) and
        # loading it can fail on its own; the compile config is read from the file below.
        model = keras.saving.load_model(str(path), safe_mode=True, compile=False)
    except ValueError as exc:
        if "Lambda" in str(exc) or "safe_mode" in str(exc):
            raise ModelFileError(ModelFileProblem.LAMBDA, path) from None
        raise ModelFileError(ModelFileProblem.KERAS_CANNOT_LOAD, path, said=str(exc)) from None
    except TypeError as exc:  # a custom class Keras cannot find
        raise ModelFileError(ModelFileProblem.CUSTOM_CLASS, path, said=str(exc)) from None
    except OSError as exc:
        raise ModelFileError(ModelFileProblem.UNREADABLE, path, said=str(exc)) from None
    input_size(model, path)
    compile_config = (saved_compile or _saved_compile_config)(path)
    if new_head:
        # Keep the body (up to the layer before the last), put the head for this class count.
        body_output = model.layers[-2].output
        model = keras.Model(model.inputs, classifier_head(num_classes)(body_output),
                            name=f"{model.name}_new_head")
        compile_config = None  # its loss was for the old output
    check_output(model, num_classes, path)
    if not compile_config or not compile_config.get("loss"):
        return LoadedModel(model)
    optimizer = keras.optimizers.deserialize(compile_config["optimizer"])
    loss = compile_config["loss"]
    if isinstance(loss, dict):
        loss = keras.losses.deserialize(loss)
    words = f"{type(optimizer).__name__} + {getattr(loss, 'name', loss)} (as saved in the file)"
    return LoadedModel(model, optimizer, loss, words)


def _saved_compile_config(path: Path) -> dict[str, Any] | None:
    """The `compile_config` a `.keras` file holds (its optimizer and loss as saved), None when
    it was saved uncompiled. Read from the archive's config.json, as Keras writes it."""
    try:
        with zipfile.ZipFile(path) as archive:
            config = json.loads(archive.read("config.json"))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile):
        return None
    found = config.get("compile_config") if isinstance(config, dict) else None
    return found if isinstance(found, dict) else None
