"""A TensorFlow SavedModel folder (`saved_model.pb` and `variables/`, from `tf.saved_model.save`
or Keras' `model.export`), recognised as a model and refused before any worker starts.

A SavedModel keeps traced graphs, not the model's code: Keras 3 can call one
(`keras.layers.TFSMLayer`) but not rebuild it, so the baseline and the XLA side could not train
the same Keras model, compiled each way, and a SavedModel exported for serving has no training
function at all. It is never taken for a dataset folder either."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from xlagui.core.model.files import LoadedModel
from xlagui.core.model.source import ModelSource
from xlagui.core.protocol.config import ConfigError, ModelChoice

MARKER = "saved_model.pb"


class SavedModelSource(ModelSource):
    """A SavedModel folder: accepted as a model, so it is refused in words (`choose`)."""

    name: ClassVar[str] = "savedmodel"

    def accepts(self, path: Path) -> bool:
        return path.is_dir() and (path / MARKER).is_file()

    def choose(self, argument: str, new_head: bool = False) -> ModelChoice:
        raise ConfigError(refusal(Path(argument)))

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        raise ConfigError(refusal(Path(choice.file or choice.name)))


def refusal(path: Path) -> str:
    """Why a SavedModel folder cannot be compared, and what to give instead."""
    return (
        f"{path} is a TensorFlow SavedModel folder, which xlagui cannot train: it holds traced "
        "graphs, not the Keras model, so the baseline and XLA cannot each compile it. Give the "
        "model as a .keras file (model.save(\"model.keras\") where it was built) or a .py file "
        "whose build_model(input_shape, num_classes) builds it"
    )
