"""What every model from a file shares: the model loaded but not compiled (`LoadedModel`), the
error a bad file raises (`ModelFileError`), and the checks of its input and output.

The sources that read files are `keras_file` (a saved `.keras` model) and `python_file` (a Python
file defining `build_model`). Their loading runs only in a worker process, and Keras is imported
inside the functions. Every problem is a `ModelFileError`: its kind (`ModelFileProblem`), the file
(and the line, where there is one) and the facts its sentence names, which
`xlagui.present.model_files` words with what to do. It travels to the parent as an `ErrorEvent`
of the kind `Failure.MODEL_FILE` with those facts (`ModelFileError.event_facts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlagui.core.model.cnn import head_units
from xlagui.core.protocol.events import Fact
from xlagui.core.protocol.identity import StrEnum


class ModelFileProblem(StrEnum):
    """What is wrong with a model file; the facts each names follow it."""

    NOT_PYTHON = "not_python"  # Python cannot import a file of that name
    SYNTAX = "syntax"  # said (the compiler's words)
    IMPORT_RAISED = "import_raised"  # error_type, said (the exception's words)
    NO_BUILDER = "no_builder"  # no build_model(input_shape, num_classes)
    BUILD_RAISED = "build_raised"  # error_type, said
    NOT_A_MODEL = "not_a_model"  # returned (the type's dotted name)
    COMPILE_ARGS_RAISED = "compile_args_raised"  # error_type, said
    BAD_COMPILE_ARGS = "bad_compile_args"  # allowed (the keys, comma-separated), got (its repr)
    OUTPUT_UNITS = "output_units"  # got, shape, classes, want, new_head (whether it may help)
    INPUT_SHAPE = "input_shape"  # shape (the model's inputs)
    NOT_SQUARE = "not_square"  # height, width
    LAMBDA = "lambda"  # a Lambda layer Keras' safe mode will not run
    KERAS_CANNOT_LOAD = "keras_cannot_load"  # said (Keras' words)
    CUSTOM_CLASS = "custom_class"  # said (a class Keras cannot find)
    UNREADABLE = "unreadable"  # said (the system's words)


class ModelFileError(ValueError):
    """A model file xlagui cannot train: `problem` says what, `file` and `line` where, `facts`
    what its sentence names (`xlagui.present.model_files` words it, with the fix). Its own
    `str` is the kind and the place, for a log."""

    def __init__(self, problem: ModelFileProblem, file: Path, line: int | None = None,
                 **facts: Fact) -> None:
        super().__init__(f"{where(file, line)}: {problem}")
        self.problem = problem
        self.file = file
        self.line = line
        self.facts = facts

    @property
    def event_facts(self) -> dict[str, Fact]:
        """Its facts as an `ErrorEvent` carries them (plain data)."""
        return {"problem": str(self.problem), "file": str(self.file), "line": self.line,
                **self.facts}


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
        raise ModelFileError(ModelFileProblem.OUTPUT_UNITS, path, line, got=got,
                             shape=str(shape), classes=num_classes, want=want,
                             new_head=path.suffix == ".keras")


def input_size(model: Any, path: Path) -> int | None:
    """The fixed square image size a model takes, None when it takes any; refuses anything
    but one `(H, W, 3)` image input."""
    inputs = getattr(model, "inputs", None) or []
    shape = tuple(inputs[0].shape) if len(inputs) == 1 else ()
    if len(shape) != 4 or shape[-1] != 3:
        raise ModelFileError(ModelFileProblem.INPUT_SHAPE, path,
                             shape=str(shape or [tuple(i.shape) for i in inputs]))
    height, width = shape[1], shape[2]
    if height is None and width is None:
        return None
    if height != width or height is None:
        raise ModelFileError(ModelFileProblem.NOT_SQUARE, path, height=height, width=width)
    return int(height)
