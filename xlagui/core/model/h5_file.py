"""A legacy Keras model saved as HDF5 (`.h5`, `.hdf5`: `model.save("model.h5")` in Keras 2
and 3) as a model source: loaded with Keras' safe mode like a `.keras` file (no Python code from
the file runs), with the optimizer and loss it was saved with, or a new head (`--new-head`).
Loading runs only in a worker process. A weights-only file (`.weights.h5`) holds no model and is
no model file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from xlagui.core.model.files import LoadedModel
from xlagui.core.model.keras_file import KerasFileSource, load_keras
from xlagui.core.protocol.config import ModelChoice

WEIGHTS_ONLY = ".weights.h5"


class H5FileSource(KerasFileSource):
    """A legacy Keras model file (`.h5`, `.hdf5`), loaded in safe mode."""

    name: ClassVar[str] = "h5"
    suffixes: ClassVar[tuple[str, ...]] = (".h5", ".hdf5")

    def accepts(self, path: Path) -> bool:
        return super().accepts(path) and not path.name.lower().endswith(WEIGHTS_ONLY)

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        return load_keras(Path(choice.file), num_classes, choice.new_head, saved_h5_compile)


def saved_h5_compile(path: Path) -> dict[str, Any] | None:
    """The optimizer and loss an `.h5` file was saved with (its `training_config` attribute, as
    Keras writes it), in a `.keras` archive's `compile_config` shape; None when it was saved
    uncompiled or cannot be read."""
    import h5py  # lazy: a worker's import (TensorFlow's own dependency)

    try:
        with h5py.File(path, "r") as f:
            raw = f.attrs.get("training_config")
    except (OSError, ValueError):
        return None
    if raw is None:
        return None
    try:
        config = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else str(raw))
    except ValueError:
        return None
    if not isinstance(config, dict) or not config.get("optimizer_config"):
        return None
    return {"optimizer": config["optimizer_config"], "loss": config.get("loss")}
