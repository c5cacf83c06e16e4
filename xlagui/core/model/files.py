"""What every model from a file shares: the model loaded but not compiled (`LoadedModel`), the
error a bad file raises (`ModelFileError`), and the checks of its input and output.

The sources that read files are `keras_file` (a saved `.keras` model) and `python_file` (a Python
file defining `build_model`). Their loading runs only in a worker process, and Keras is imported
inside the functions. Every problem is a `ModelFileError` whose message names the file (and the
line, where there is one) and says what to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlagui.core.model.cnn import head_units


class ModelFileError(ValueError):
    """A model file xlagui cannot train: the message names the file, the line, and the fix."""


@dataclass
class LoadedModel:
    """A model from a file, not yet compiled, and what to compile it with (None: xlagui's
    Adam and the matching cross-entropy). `compile_words` says which, for people."""

    model: Any
    optimizer: Any = None
    loss: Any = None
    compile_words: str = "Adam + cross-entropy (xlagui's default)"


def where(path: Path, line: int | None) -> str:
    """"PATH, line N" for a message, or the path alone when there is no line."""
    return f"{path}, line {line}" if line else str(path)


def check_output(model: Any, num_classes: int, path: Path, line: int | None = None) -> None:
    """Refuse an output that does not fit `num_classes`, naming both numbers."""
    want = head_units(num_classes)
    shape = tuple(model.outputs[0].shape) if getattr(model, "outputs", None) else ()
    got = shape[-1] if shape else None
    if len(getattr(model, "outputs", ()) or ()) != 1 or got != want:
        kind = "1 unit (sigmoid) for 2 classes" if num_classes == 2 else f"{want} (softmax)"
        raise ModelFileError(
            f"{where(path, line)}: the model's output has {got} unit(s) ({shape}), but this "
            f"dataset has {num_classes} classes, which need {kind}"
            + (": pass --new-head to replace the last layer" if path.suffix == ".keras" else "")
        )


def input_size(model: Any, path: Path) -> int | None:
    """The fixed square image size a model takes, None when it takes any; refuses anything
    but one `(H, W, 3)` image input."""
    inputs = getattr(model, "inputs", None) or []
    shape = tuple(inputs[0].shape) if len(inputs) == 1 else ()
    if len(shape) != 4 or shape[-1] != 3:
        raise ModelFileError(
            f"{path}: the model must take one batch of (height, width, 3) images, "
            f"but its input is {shape or [tuple(i.shape) for i in inputs]}"
        )
    height, width = shape[1], shape[2]
    if height is None and width is None:
        return None
    if height != width or height is None:
        raise ModelFileError(
            f"{path}: the model takes {height}x{width} images; xlagui trains on square images, "
            "so make its input square (or leave its size open: (None, None, 3))"
        )
    return int(height)
