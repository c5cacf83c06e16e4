"""A model of the user's, from a file: a saved `.keras` model, or a Python file defining
`build_model(input_shape, num_classes) -> keras.Model` (and optionally `compile_args() -> dict`).

Runs only in a worker process: a user's Python file is imported there and nowhere else (never
in the window's or the command line's process), and Keras is imported inside the functions.
Every problem is a `ModelFileError` whose message names the file (and the line, where there is
one) and says what to do.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import sys
import traceback
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlagui.core.model.cnn import classifier_head, head_units

COMPILE_ARGS = ("optimizer", "loss")  # what compile_args() may set; xlagui sets the rest


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


def _where(path: Path, line: int | None) -> str:
    return f"{path}, line {line}" if line else str(path)


def check_output(model: Any, num_classes: int, path: Path, line: int | None = None) -> None:
    """Refuse an output that does not fit `num_classes`, naming both numbers."""
    want = head_units(num_classes)
    shape = tuple(model.outputs[0].shape) if getattr(model, "outputs", None) else ()
    got = shape[-1] if shape else None
    if len(getattr(model, "outputs", ()) or ()) != 1 or got != want:
        kind = "1 unit (sigmoid) for 2 classes" if num_classes == 2 else f"{want} (softmax)"
        raise ModelFileError(
            f"{_where(path, line)}: the model's output has {got} unit(s) ({shape}), but this "
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


def load_keras(path: Path, num_classes: int, new_head: bool) -> LoadedModel:
    """A saved `.keras` model, loaded with `safe_mode=True`; with `new_head`, its last layer
    replaced by the head for `num_classes`."""
    import keras  # lazy: the window imports this module; Keras is for the worker

    try:
        # compile=False: the optimizer's saved state is not wanted (every arm starts fresh) and
        # loading it can fail on its own; the compile config is read from the file below.
        model = keras.saving.load_model(str(path), safe_mode=True, compile=False)
    except ValueError as exc:
        if "Lambda" in str(exc) or "safe_mode" in str(exc):
            raise ModelFileError(
                f"{path}: it holds a Lambda layer, whose Python code xlagui will not run from a "
                "saved file (Keras' safe mode). Replace the Lambda with a built-in layer and save "
                "again, or give a .py file whose build_model(input_shape, num_classes) builds "
                "the model"
            ) from None
        raise ModelFileError(f"{path}: Keras cannot load it: {exc}") from None
    except TypeError as exc:  # a custom class Keras cannot find
        raise ModelFileError(
            f"{path}: Keras cannot load it ({exc}). A model with custom layers needs the code "
            "that defines them: give a .py file whose build_model(input_shape, num_classes) "
            "builds it"
        ) from None
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read it: {exc}") from None
    input_size(model, path)
    compile_config = _saved_compile_config(path)
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
    words = f"from the file: {type(optimizer).__name__} + {getattr(loss, 'name', loss)}"
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
        raise ModelFileError(f"{path}: not a Python file Python can import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelFileError(
            f"{_where(path, _user_line(exc, path))}: syntax error: {exc.msg}"
        ) from None
    except Exception as exc:
        raise ModelFileError(
            f"{_where(path, _user_line(exc, path))}: importing it raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
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
        raise ModelFileError(
            f"{path}: it defines no build_model(input_shape, num_classes) function"
        )
    try:
        model = build((image_size, image_size, 3), num_classes)
    except Exception as exc:
        raise ModelFileError(
            f"{_where(path, _user_line(exc, path) or _def_line(build))}: build_model raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(model, keras.Model):
        raise ModelFileError(
            f"{_where(path, _def_line(build))}: build_model returned a "
            f"{type(model).__module__}.{type(model).__qualname__}, not a keras.Model"
        )
    input_size(model, path)
    check_output(model, num_classes, path, _def_line(build))
    args_of = getattr(module, "compile_args", None)
    if args_of is None:
        return LoadedModel(model)
    try:
        args = args_of()
    except Exception as exc:
        raise ModelFileError(
            f"{_where(path, _user_line(exc, path) or _def_line(args_of))}: compile_args raised "
            f"{type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(args, dict) or set(args) - set(COMPILE_ARGS):
        raise ModelFileError(
            f"{_where(path, _def_line(args_of))}: compile_args() must return a dict with "
            f"{' and/or '.join(COMPILE_ARGS)} (xlagui sets the metrics and jit_compile itself), "
            f"got {args!r}"
        )
    optimizer = args.get("optimizer")
    if isinstance(optimizer, str):
        optimizer = keras.optimizers.get(optimizer)
    loss = args.get("loss")
    words = "from compile_args(): " + ", ".join(f"{k}={v!r}" for k, v in args.items())
    return LoadedModel(model, optimizer, loss, words)
