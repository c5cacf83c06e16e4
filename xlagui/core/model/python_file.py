"""A Python file of the user's as a model source: it defines `build_model(input_shape,
num_classes) -> keras.Model` (and optionally `compile_args() -> dict` with its optimizer and
loss). The file is imported only in a worker process, never in the window's or the command
line's: choosing it runs its code there, which the window says."""

from __future__ import annotations

import importlib.util
import inspect
import sys
import traceback
from pathlib import Path
from typing import Any, ClassVar

from xlagui.core.model.files import (
    LoadedModel,
    ModelFileError,
    ModelFileProblem,
    check_output,
    input_size,
)
from xlagui.core.model.source import FileSource
from xlagui.core.protocol.config import ModelChoice

COMPILE_ARGS = ("optimizer", "loss")  # what compile_args() may set; xlagui sets the rest


class PythonFileSource(FileSource):
    """A Python file defining `build_model(input_shape, num_classes)`."""

    name: ClassVar[str] = "python"
    suffixes: ClassVar[tuple[str, ...]] = (".py",)
    runs_code: ClassVar[bool] = True

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        return load_python(Path(choice.file), image_size, num_classes)


def _user_line(exc: BaseException, path: Path) -> int | None:
    """The line of `path` where `exc` was raised (the innermost frame in that file)."""
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename) == path:
        return exc.lineno
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    return frames[-1].lineno if frames else None


def _import(path: Path) -> Any:
    name = "xlagui_user_model"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ModelFileError(ModelFileProblem.NOT_PYTHON, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelFileError(ModelFileProblem.SYNTAX, path, _user_line(exc, path),
                             said=exc.msg) from None
    except Exception as exc:
        raise ModelFileError(ModelFileProblem.IMPORT_RAISED, path, _user_line(exc, path),
                             error_type=type(exc).__name__, said=str(exc)) from None
    return module


def _def_line(func: Any) -> int | None:
    try:
        return inspect.getsourcelines(func)[1]
    except (OSError, TypeError):
        return None


def load_python(path: Path, image_size: int, num_classes: int) -> LoadedModel:
    """The model a user's Python file builds: `build_model((image_size, image_size, 3),
    num_classes)`, and `compile_args()` (optimizer and loss) where the file defines it."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    module = _import(path)
    build = getattr(module, "build_model", None)
    if not callable(build):
        raise ModelFileError(ModelFileProblem.NO_BUILDER, path)
    try:
        model = build((image_size, image_size, 3), num_classes)
    except Exception as exc:
        raise ModelFileError(ModelFileProblem.BUILD_RAISED, path,
                             _user_line(exc, path) or _def_line(build),
                             error_type=type(exc).__name__, said=str(exc)) from None
    if not isinstance(model, keras.Model):
        raise ModelFileError(ModelFileProblem.NOT_A_MODEL, path, _def_line(build),
                             returned=f"{type(model).__module__}.{type(model).__qualname__}")
    input_size(model, path)
    check_output(model, num_classes, path, _def_line(build))
    args_of = getattr(module, "compile_args", None)
    if args_of is None:
        return LoadedModel(model)
    try:
        args = args_of()
    except Exception as exc:
        raise ModelFileError(ModelFileProblem.COMPILE_ARGS_RAISED, path,
                             _user_line(exc, path) or _def_line(args_of),
                             error_type=type(exc).__name__, said=str(exc)) from None
    if not isinstance(args, dict) or set(args) - set(COMPILE_ARGS):
        raise ModelFileError(ModelFileProblem.BAD_COMPILE_ARGS, path, _def_line(args_of),
                             allowed=",".join(COMPILE_ARGS), got=repr(args))
    optimizer = args.get("optimizer")
    if isinstance(optimizer, str):
        optimizer = keras.optimizers.get(optimizer)
    loss = args.get("loss")
    words = "from compile_args(): " + ", ".join(f"{k}={v!r}" for k, v in args.items())
    return LoadedModel(model, optimizer, loss, words)
