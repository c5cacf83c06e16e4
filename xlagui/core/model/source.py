"""What a model source is: the interface every source of models implements (`ModelSource`), and
`FileSource`, the base of a source whose model is one file of the user's.

A source answers for one value of `ModelChoice.source`. On the parent's side (the window, the
command line: no TensorFlow, no user code run) it chooses (`choose`: a name or a file, checked
and hashed), checks a choice record (`check`), says what a choice is (`describe`: data that
`xlagui.present.models` words) and lists the files a choice needs on another machine
(`needed_files`, `placed`). In a worker it builds the model (`build`) and says the image size
the model is fixed to (`input_size`). The registry of sources is `xlagui.core.model.sources`.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from xlagui.core.model.files import LoadedModel, input_size
from xlagui.core.protocol.config import ConfigError, ModelChoice, file_sha256


def or_list(words: tuple[str, ...]) -> str:
    """Suffixes in a sentence: ".keras, .py or .h5"."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} or {words[-1]}"


@dataclass(frozen=True)
class ModelFacts:
    """What the window and the command line show about a choice, as data (`describe`): which
    source and model, its file and digest ("" for a built-in), whether choosing it runs the
    user's Python code (in the workers; the window says so), and whether its last layer can be
    replaced by a head for the dataset's classes (`--new-head`)."""

    source: str
    name: str
    file: str
    sha256: str
    runs_code: bool
    takes_new_head: bool


@dataclass(frozen=True)
class NeededFile:
    """A file a choice needs on the machine that builds its model: where it is here, and its
    digest when the choice was made ("" when unknown), which names its copy in a host's cache."""

    path: Path
    sha256: str


class ModelSource(ABC):
    """One source of models: its `name` is the `ModelChoice.source` it answers for (saved in
    `comparison.json`: never rename one), `suffixes` the file suffixes that choose it (none: it
    offers models by name, `names`)."""

    name: ClassVar[str]
    suffixes: ClassVar[tuple[str, ...]] = ()
    runs_code: ClassVar[bool] = False
    takes_new_head: ClassVar[bool] = False

    # -- the parent's side: no TensorFlow, no user code ----------------------------------------

    def names(self) -> tuple[str, ...]:
        """The models this source offers by name (the built-ins); () for a source of files."""
        return ()

    def accepts(self, path: Path) -> bool:
        """Whether `path` (a file or a folder, given as a model) is this source's: the registry
        asks each source in turn (`sources.source_for_path`). Looks, never loads."""
        return False

    @abstractmethod
    def choose(self, argument: str, new_head: bool = False) -> ModelChoice:
        """The choice `argument` (a name this source offers, or a file's path) makes: checked
        (`check`; a file exists and is hashed now). Raises `ConfigError` saying why not."""

    def check(self, choice: ModelChoice) -> None:
        """Refuse a choice record this source cannot build (`ConfigError`, in words): a record
        read from a file, or from another version, is checked here before it is used."""
        if choice.new_head and not self.takes_new_head:
            raise ConfigError("--new-head replaces the last layer of a saved .keras model only")

    def describe(self, choice: ModelChoice) -> ModelFacts:
        return ModelFacts(self.name, choice.name, choice.file, choice.sha256, self.runs_code,
                          self.takes_new_head)

    def needed_files(self, choice: ModelChoice) -> tuple[NeededFile, ...]:
        """The files the model of `choice` is built from (copied to a host before it runs there)."""
        return ()

    def placed(self, choice: ModelChoice, paths: Mapping[str, str]) -> ModelChoice:
        """`choice` on another machine: each of its `needed_files` at `paths[str(file.path)]`."""
        return choice

    # -- in a worker --------------------------------------------------------------------------

    @abstractmethod
    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        """The model of `choice`, uncompiled (a file's problem: `ModelFileError`, with the file
        and line). Imports Keras and any user code itself: this runs only in a worker."""

    def input_size(self, model: Any, choice: ModelChoice) -> int | None:
        """The square image size `model` is fixed to, None when it takes any."""
        return None


class FileSource(ModelSource):
    """A source whose model is one file the user gives (a suffix of `suffixes` chooses it): the
    file must exist when chosen, and its SHA-256 is taken then (the file may change later: the
    digest says which one was measured)."""

    def accepts(self, path: Path) -> bool:
        """A path with one of `suffixes` that is no folder (one that does not exist is refused
        in words when chosen: `choose`)."""
        return path.suffix.lower() in self.suffixes and not path.is_dir()

    def choose(self, argument: str, new_head: bool = False) -> ModelChoice:
        path = Path(argument).expanduser()
        if not path.is_file():
            raise ConfigError(f"model file {path} does not exist")
        try:
            sha = file_sha256(path)
        except OSError as exc:
            raise ConfigError(
                f"cannot read the model file {path}: {exc.strerror or exc}"
            ) from None
        choice = ModelChoice(source=self.name, name=path.stem, file=str(path.resolve()),
                             sha256=sha, new_head=new_head)
        self.check(choice)
        return choice

    def check(self, choice: ModelChoice) -> None:
        if not choice.file:
            raise ConfigError(f"a {self.name} model needs its file")
        super().check(choice)

    def needed_files(self, choice: ModelChoice) -> tuple[NeededFile, ...]:
        return (NeededFile(Path(choice.file), choice.sha256),)

    def placed(self, choice: ModelChoice, paths: Mapping[str, str]) -> ModelChoice:
        return dataclasses.replace(choice, file=paths[str(Path(choice.file))])

    def input_size(self, model: Any, choice: ModelChoice) -> int | None:
        return input_size(model, Path(choice.file))
