"""A model file's problem in words: the core says what is wrong with a file as a kind and facts
(`xlagui.core.model.files.ModelFileError`, carried by an `ErrorEvent` of the kind
`Failure.MODEL_FILE`); `model_file_text` is the line the model panel, the command line and a
failed run show, naming the file, the line and what to do."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from xlagui.core.model.files import ModelFileProblem as P
from xlagui.core.protocol.events import ErrorEvent
from xlagui.core.protocol.failures import Failure

Facts = Mapping[str, Any]
BUILDER = "build_model(input_shape, num_classes)"


def _output(f: Facts) -> str:
    classes, want = int(f["classes"]), f["want"]
    need = "1 unit (sigmoid) for 2 classes" if classes == 2 else f"{want} (softmax)"
    return (f"the model's output has {f['got']} unit(s) ({f['shape']}), but this dataset has "
            f"{classes} classes, which need {need}"
            + (": pass --new-head to replace the last layer" if f.get("new_head") else ""))


# What is wrong, after "FILE, line N: ".
SENTENCES: dict[P, Callable[[Facts], str]] = {
    P.NOT_PYTHON: lambda _: "not a Python file Python can import",
    P.SYNTAX: lambda f: f"syntax error: {f['said']}",
    P.IMPORT_RAISED: lambda f: f"importing it raised {f['error_type']}: {f['said']}",
    P.NO_BUILDER: lambda _: f"it defines no {BUILDER} function",
    P.BUILD_RAISED: lambda f: f"build_model raised {f['error_type']}: {f['said']}",
    P.NOT_A_MODEL: lambda f: f"build_model returned a {f['returned']}, not a keras.Model",
    P.COMPILE_ARGS_RAISED: lambda f: f"compile_args raised {f['error_type']}: {f['said']}",
    P.BAD_COMPILE_ARGS: lambda f: "compile_args() must return a dict with "
    f"{' and/or '.join(str(f['allowed']).split(','))} (xlagui sets the metrics and jit_compile "
    f"itself), got {f['got']}",
    P.OUTPUT_UNITS: _output,
    P.INPUT_SHAPE: lambda f: "the model must take one batch of (height, width, 3) images, but "
    f"its input is {f['shape']}",
    P.NOT_SQUARE: lambda f: f"the model takes {f['height']}x{f['width']} images; xlagui trains "
    "on square images, so make its input square (or leave its size open: (None, None, 3))",
    P.LAMBDA: lambda _: "it holds a Lambda layer, whose Python code xlagui will not run from a "
    "saved file (Keras' safe mode). Replace the Lambda with a built-in layer and save again, "
    f"or give a .py file whose {BUILDER} builds the model",
    P.KERAS_CANNOT_LOAD: lambda f: f"Keras cannot load it: {f['said']}",
    P.CUSTOM_CLASS: lambda f: f"Keras cannot load it ({f['said']}). A model with custom layers "
    f"needs the code that defines them: give a .py file whose {BUILDER} builds it",
    P.UNREADABLE: lambda f: f"cannot read it: {f['said']}",
}


def model_file_text(facts: Facts) -> str | None:
    """The line that says a model file's problem from its facts (`ModelFileError.event_facts`);
    None for a problem this version has no words for, or facts it lacks."""
    try:
        words = SENTENCES[P(str(facts["problem"]))](facts)
    except (KeyError, ValueError, TypeError):
        return None
    line = facts.get("line")
    where = f"{facts['file']}, line {line}" if line else str(facts["file"])
    return f"{where}: {words}"


def error_text(event: ErrorEvent) -> str:
    """A run's or a check's error in one line: a model file's problem in these words, any
    other error as its message says it (it travels as it is)."""
    if event.kind == Failure.MODEL_FILE:
        return model_file_text(event.facts) or event.message
    return event.message


def refusal_text(exc: BaseException) -> str:
    """Why a model (or a setting) was refused, in one line: a model check's error event in
    these words (`ModelRefused.event`), anything else as it says it."""
    event = getattr(exc, "event", None)
    if isinstance(event, ErrorEvent) and event.kind == Failure.MODEL_FILE:
        said = model_file_text(event.facts)
        if said is not None:
            return said + (f" ({event.hint})" if event.hint else "")
    return str(exc)
