"""The registry of model sources, without TensorFlow: `--model`'s value chosen by name or by
suffix, a choice record checked where it would be built, what a choice is (as data), the files
it needs on another machine; and a new source plugged in with one registration."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from xlagui.core.model import sources
from xlagui.core.model.files import LoadedModel
from xlagui.core.model.source import FileSource, ModelFacts, NeededFile
from xlagui.core.protocol.config import ConfigError, ModelChoice, RunConfig

# The registry's parser (the command line, the saved settings and the panel all call it).
PARSERS: list[Callable[..., ModelChoice]] = [sources.parse_model]


@pytest.mark.parametrize("parse", PARSERS)
def test_parse_model_takes_names_and_files(tmp_path: Path,
                                           parse: Callable[..., ModelChoice]) -> None:
    assert parse("MobileNetV2") == ModelChoice(name="mobilenetv2")
    source = tmp_path / "net.py"
    source.write_text("def build_model(input_shape, num_classes): ...\n")
    chosen = parse(str(source))
    assert (chosen.source, chosen.name, chosen.file) == ("python", "net", str(source))
    assert len(chosen.sha256) == 64 and chosen.label == "net.py"
    assert parse(str(source)) == chosen  # the same file, the same digest
    with pytest.raises(ConfigError, match=r"model file .*gone\.keras does not exist"):
        parse(str(tmp_path / "gone.keras"))
    with pytest.raises(ConfigError, match=(
            r"^--model must be one of cnn, mobilenetv2, resnet50, efficientnetb0, vit, mixer, "
            r"or a \.keras, \.py, \.h5 or \.hdf5 file, got 'alexnet'$")):
        parse("alexnet")
    with pytest.raises(ConfigError, match="^--new-head replaces the last layer of a saved "
                       r"\.keras model only$"):
        parse("vit", new_head=True)
    with pytest.raises(ConfigError, match="--new-head"):
        parse(str(source), new_head=True)
    saved = tmp_path / "net.keras"
    saved.write_bytes(b"read only in a worker")
    assert parse(str(saved), new_head=True).new_head


def test_the_registry_lists_the_built_ins_and_the_file_suffixes() -> None:
    assert sources.builtin_names()[0] == "cnn" == ModelChoice().name  # the default first
    assert sources.builtin_names() == ("cnn", "mobilenetv2", "resnet50", "efficientnetb0",
                                       "vit", "mixer")
    assert sources.file_suffixes() == (".keras", ".py", ".h5", ".hdf5")
    assert sources.source_for_path(Path("/m/Net.KERAS")) is sources.SOURCES["keras"]
    assert sources.source_for_path(Path("/m/notes.txt")) is None


def test_each_source_is_asked_whether_it_accepts_a_path(tmp_path: Path) -> None:
    """A file by its suffix, never a folder of that name; a SavedModel folder by its
    `saved_model.pb`; a weights-only `.weights.h5` is no model."""
    assert sources.source_for_path(tmp_path / "net.H5") is sources.SOURCES["h5"]
    assert sources.source_for_path(tmp_path / "net.hdf5") is sources.SOURCES["h5"]
    assert sources.source_for_path(tmp_path / "net.weights.h5") is None
    folder = tmp_path / "named.keras"
    folder.mkdir()
    assert sources.source_for_path(folder) is None
    exported = tmp_path / "exported"
    exported.mkdir()
    assert sources.source_for_path(exported) is None  # a folder, not (yet) a SavedModel
    (exported / "saved_model.pb").write_bytes(b"a graph")
    assert sources.source_for_path(exported) is sources.SOURCES["savedmodel"]
    with pytest.raises(ConfigError, match=r"SavedModel folder, which xlagui cannot train"):
        sources.parse_model(str(exported))
    h5 = tmp_path / "net.h5"
    h5.write_bytes(b"read only in a worker")
    choice = sources.parse_model(str(h5), new_head=True)
    assert (choice.source, choice.name, choice.new_head) == ("h5", "net", True)
    assert sources.needed_files(choice) == (NeededFile(h5, choice.sha256),)  # copied to a host


@pytest.mark.parametrize(("record", "message"), [
    ({"source": "onnx", "name": "n", "file": "/m/n.onnx"},
     "model source must be one of builtin, keras, python, h5, savedmodel, got 'onnx'"),
    ({"name": "alexnet"}, "unknown model 'alexnet': choose one of cnn, mobilenetv2, resnet50, "
     "efficientnetb0, vit, mixer, or give a .keras, .py, .h5 or .hdf5 file"),
    ({"name": "vit", "file": "/m/x.py"}, "the built-in model vit takes no file"),
    ({"source": "keras", "name": "net"}, "a keras model needs its file"),
    ({"source": "python", "name": "net", "file": "/m/net.py", "new_head": True},
     "--new-head replaces the last layer of a saved .keras model only"),
])
def test_a_record_no_source_can_build_opens_but_is_refused_where_it_is_built(
        record: dict[str, Any], message: str) -> None:
    # As comparison.json holds it: the record opens (its words can still be shown) ...
    choice = RunConfig.from_dict({"model": record}).model
    # ... and the registry refuses it, word for word, before a model is built from it.
    with pytest.raises(ConfigError) as caught:
        sources.check(choice)
    assert str(caught.value) == message


def test_describe_says_what_a_choice_is_as_data(tmp_path: Path) -> None:
    assert sources.describe(ModelChoice(name="vit")) == ModelFacts(
        "builtin", "vit", "", "", runs_code=False, takes_new_head=False)
    builder = tmp_path / "net.py"
    builder.write_text("")
    facts = sources.describe(sources.parse_model(str(builder)))
    assert (facts.source, facts.file, facts.runs_code, facts.takes_new_head) == (
        "python", str(builder), True, False)
    saved = tmp_path / "net.keras"
    saved.write_bytes(b"x")
    facts = sources.describe(sources.parse_model(str(saved)))
    assert (facts.runs_code, facts.takes_new_head) == (False, True)


def test_a_model_file_is_what_another_machine_needs_and_is_read_there_from_its_copy(
        tmp_path: Path) -> None:
    assert sources.needed_files(ModelChoice(name="mixer")) == ()
    assert sources.placed(ModelChoice(name="mixer"), {}) == ModelChoice(name="mixer")
    saved = tmp_path / "net.keras"
    saved.write_bytes(b"x")
    choice = sources.parse_model(str(saved), new_head=True)
    assert sources.needed_files(choice) == (NeededFile(saved, choice.sha256),)
    there = sources.placed(choice, {str(saved): "/cache/models/ab12/net.keras"})
    assert there == ModelChoice(source="keras", name="net", file="/cache/models/ab12/net.keras",
                                sha256=choice.sha256, new_head=True)


class OnnxFileSource(FileSource):
    """A new source, as a newcomer would add it: a `FileSource` with a suffix and a build."""

    name: ClassVar[str] = "onnx"
    suffixes: ClassVar[tuple[str, ...]] = (".onnx",)

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        raise NotImplementedError


def test_a_new_source_is_one_class_and_one_registration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sources.SOURCES, "onnx", OnnxFileSource())
    net = tmp_path / "net.onnx"
    net.write_bytes(b"x")
    choice = sources.parse_model(str(net))
    assert (choice.source, choice.label, choice.argument) == ("onnx", "net.onnx", str(net))
    assert sources.file_suffixes() == (".keras", ".py", ".h5", ".hdf5", ".onnx")
    assert sources.needed_files(choice) == (NeededFile(net, choice.sha256),)
    assert RunConfig(image_size=32, model=choice).model == choice  # it travels as any other


# docs/ARCHITECTURE.md, "A model source": a source in a module of its own, registered in one
# line, as a plugin (or a later issue) would write it: a Keras architecture saved as JSON
# (`model.to_json()`), built untrained in the worker.
THROWAWAY = '''from pathlib import Path
from typing import ClassVar
from xlagui.core.model.files import LoadedModel
from xlagui.core.model.source import FileSource
from xlagui.core.model.sources import register

class JsonArchitectureSource(FileSource):
    name: ClassVar[str] = "json_architecture"
    suffixes: ClassVar[tuple[str, ...]] = (".json",)

    def build(self, choice, image_size, num_classes, seed):
        import keras
        return LoadedModel(keras.models.model_from_json(Path(choice.file).read_text()))

register(JsonArchitectureSource())
'''
# What a user sees of it, in a fresh interpreter that loads the throwaway module first.
SEEN = """import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import throwaway_source
from PySide6.QtCore import QMimeData, QUrl
from PySide6.QtWidgets import QApplication
app = QApplication([])
from xlagui.cli.compare import compare_config
from xlagui.cli.parser import build_parser
from xlagui.cli.sweep import sweep_plan
from xlagui.present.models import file_filter
from xlagui.ui.window.drops import model_file
net = Path(sys.argv[1]) / "net.json"
parser = build_parser()
sub = next(a for a in parser._actions if a.dest == "command")
mime = QMimeData()
mime.setUrls([QUrl.fromLocalFile(str(net))])
plan = sweep_plan(parser.parse_args(["sweep", "--demo", "--model", f"cnn,{net}"]))
print(json.dumps({
    "help": " ".join(sub.choices["compare"].format_help().split()),
    "model": compare_config(parser.parse_args(["compare", "--model", str(net)])).model.source,
    "filter": file_filter(),
    "dropped": str(model_file(mime)),
    "cells": [c.config.model.source for c in plan.cells],
}))
"""


def test_the_recipe_one_registered_source_is_a_model_option_a_file_type_a_drop_and_an_axis(
        tmp_path: Path) -> None:
    """docs/ARCHITECTURE.md, "A model source": one `FileSource`, registered in one line in a
    throwaway module, is a `--model` of `compare` (in its help, parsed to its source), a file
    type of the window's "Open model file…" dialog, a model when dropped on the window, and a
    value of a sweep's model axis, with no other file touched."""
    from tests.helpers.recipes import seen_after_registering

    (tmp_path / "net.json").write_text("{}", encoding="utf-8")
    seen = seen_after_registering(tmp_path, "throwaway_source", THROWAWAY, SEEN)
    assert ".json" in seen["help"]
    assert seen["model"] == "json_architecture"
    assert "*.json" in seen["filter"]
    assert seen["dropped"] == str(tmp_path / "net.json")
    assert seen["cells"] == ["builtin", "json_architecture"]
