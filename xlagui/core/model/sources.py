"""The registry of model sources: every source of models xlagui can train, by the
`ModelChoice.source` it answers for. The window's model panel, its file dialog and drops, the
command line's `--model` and `xlagui models`, `xlagui.present.models`, the worker's build and the
model check all ask here; none of them names a source.

A path given as a model (a file or a folder) goes to the first source that `accepts` it
(`source_for_path`): a file by its suffix, a SavedModel folder by its `saved_model.pb`.

To add a source (an ONNX file, a JAX checkpoint folder): one module here with a `ModelSource`
subclass (`source.py`; a file is a `FileSource`), and one line in `FILE_SOURCES` (a source of
files) or `PATH_SOURCES` below (or `register(...)` from a module of its own). Its words in
the window and the command line come from `xlagui.present.models.SOURCE_WORDS` (a row there for
better words than the generic ones from its suffix).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from xlagui.core.model.builtin import BuiltinSource
from xlagui.core.model.h5_file import H5FileSource
from xlagui.core.model.keras_file import KerasFileSource
from xlagui.core.model.python_file import PythonFileSource
from xlagui.core.model.saved_model import SavedModelSource
from xlagui.core.model.source import FileSource, ModelFacts, ModelSource, NeededFile, or_list
from xlagui.core.protocol.config import ConfigError, ModelChoice

# The registration lines: the sources of files, in the order their suffixes are listed.
FILE_SOURCES: tuple[FileSource, ...] = (
    KerasFileSource(),
    PythonFileSource(),
    H5FileSource(),
)
# Sources of other paths (folders), asked after the files'.
PATH_SOURCES: tuple[ModelSource, ...] = (
    SavedModelSource(),
)
BUILTIN = BuiltinSource(tuple(s for source in FILE_SOURCES for s in source.suffixes))
SOURCES: dict[str, ModelSource] = {
    source.name: source for source in (BUILTIN, *FILE_SOURCES, *PATH_SOURCES)}


def register(source: ModelSource) -> None:
    """One more source, in one line, from a module of its own (a plugin's; the shipped sources
    are in `FILE_SOURCES` and `PATH_SOURCES`): asked after them. Everything that asks the
    registry has it from then on: `--model`, `xlagui models`, the window's file dialog and
    drops (a worker that builds its models must import the module that registers it too)."""
    if source.name in SOURCES:
        raise ValueError(f"a model source is already called {source.name!r}")
    SOURCES[source.name] = source


def builtin_names() -> tuple[str, ...]:
    """The models chosen by name (`--model NAME`, the window's list), the default first."""
    return tuple(name for source in SOURCES.values() for name in source.names())


def file_suffixes() -> tuple[str, ...]:
    """Every suffix a model file may have (".keras", ".py"), in the registry's order."""
    return tuple(s for source in SOURCES.values() for s in source.suffixes)


def file_sources() -> tuple[ModelSource, ...]:
    """The sources chosen by a file (for their words: the file dialog, the help)."""
    return tuple(source for source in SOURCES.values() if source.suffixes)


def source_for_path(path: Path) -> ModelSource | None:
    """The first source that accepts `path` (a file or a folder) as its model
    (`ModelSource.accepts`), None when no source does."""
    return next((s for s in SOURCES.values() if s.accepts(path)), None)


def source_of(choice: ModelChoice) -> ModelSource:
    """The source of `choice`, which has checked it: raises `ConfigError` (in words) for a
    choice no source here can build (an unknown source or name, a file missing from it)."""
    source = SOURCES.get(choice.source)
    if source is None:
        raise ConfigError(
            f"model source must be one of {', '.join(SOURCES)}, got {choice.source!r}"
        )
    source.check(choice)
    return source


def check(choice: ModelChoice) -> None:
    """Refuse a choice record no source here can build (`ConfigError`, in words)."""
    source_of(choice)


def parse_model(text: str, new_head: bool = False) -> ModelChoice:
    """`--model`'s value (and the window's saved one): a built-in's name, or a model file (which
    must exist; its hash is taken now). Nothing is imported or loaded here: a file is read only
    in a worker."""
    value = str(text).strip()
    for named in SOURCES.values():
        if value.lower() in named.names():
            return named.choose(value, new_head)
    path = Path(value).expanduser()
    source = source_for_path(path)
    if source is None:
        raise ConfigError(
            f"--model must be one of {', '.join(builtin_names())}, or a "
            f"{or_list(file_suffixes())} file, got {text!r}"
        )
    return source.choose(str(path), new_head)


def describe(choice: ModelChoice) -> ModelFacts:
    """What `choice` is, as data (`xlagui.present.models` words it)."""
    return source_of(choice).describe(choice)


def needed_files(choice: ModelChoice) -> tuple[NeededFile, ...]:
    """The files the model of `choice` is built from: what a transport copies to another
    machine before a worker builds it there."""
    return source_of(choice).needed_files(choice)


def placed(choice: ModelChoice, paths: Mapping[str, str]) -> ModelChoice:
    """`choice` as a worker on another machine reads it: each of its `needed_files` at
    `paths[str(file.path)]`, where the transport copied it."""
    return source_of(choice).placed(choice, paths)
