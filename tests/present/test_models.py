"""The model in words: the line before a comparison, the memory warning, `xlagui models`,
and what the window and `--model`'s help say of the model sources (built from the registry)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import ClassVar

import pytest

from xlagui.core.model import sources
from xlagui.core.model.check import memory_guard
from xlagui.core.model.files import LoadedModel
from xlagui.core.model.source import FileSource, ModelFacts
from xlagui.core.protocol.config import ConfigError, ModelChoice, RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.present.levels import Level
from xlagui.present.models import (
    BUILTIN_WORDS,
    about,
    builtin_item,
    check_status,
    checking_for_run,
    code_note,
    counts_failed,
    file_filter,
    file_item,
    flops_status,
    memory_warning,
    model_file_kinds,
    model_help,
    model_line,
    models_rows,
    not_a_model_file,
    not_checked,
    not_restored,
    open_file_hint,
    own_models_line,
    refusal,
    short_count,
    summary_line,
)


def test_the_model_line_names_the_model_and_its_work() -> None:
    chosen = ModelChoice(source="keras", name="net", file="/m/net.keras", sha256="ab" * 32,
                         params=1234)
    check = ModelEvent(model=chosen, image_size=64, fixed_input_size=True, batch_size=8,
                       flops_per_step=2.5e9, compile_words="SGD + mse (as saved in the file)")
    line = model_line(RunConfig(image_size=64, model=chosen), check)
    assert line == (
        "Model: net.keras (/m/net.keras, sha256 abababababab…), 1,234 parameters, takes 64 px "
        "images, 2.5 GFLOP per training step at batch 8, compiled with SGD + mse (as saved in the "
        "file)"
    )
    # A check saved before the words changed reads the same.
    old = dataclasses.replace(check, compile_words="from the file: SGD + mse")
    assert model_line(RunConfig(image_size=64, model=chosen), old) == line
    assert model_line(RunConfig(model=ModelChoice(params=529_295)), None) == (
        "Model: the article's CNN, 529,295 parameters"
    )


def test_a_model_that_may_not_fit_is_said_so() -> None:
    config = RunConfig(batch_size=256, model=ModelChoice(name="resnet50"))
    warning = memory_warning(memory_guard(3 * 2**30, 2, available=4 * 2**30), config)
    assert warning.startswith("resnet50 at batch 256 and 150 px may not fit: a training step ")
    assert "6.0 GB (2 workers at once, 3.0 GB each), and 4.0 GB is free" in warning
    assert memory_warning(memory_guard(2**30, 2, available=4 * 2**30), config) == ""


def test_the_models_table_has_a_row_per_model() -> None:
    rows = models_rows([ModelEvent(model=ModelChoice(name="vit", params=559_617))])
    assert rows == [("vit", "559,617", rows[0][2])] and "Vision Transformer" in rows[0][2]


def test_the_sources_words_are_built_from_the_registry() -> None:
    assert model_help() == (
        "the model trained: cnn, mobilenetv2, resnet50, efficientnetb0, vit, mixer (`xlagui "
        "models` says what each is), a saved PATH.keras, a PATH.py defining "
        "build_model(input_shape, num_classes), or a saved PATH.h5 (legacy HDF5) (default: "
        "cnn, the article's)"
    )
    assert own_models_line() == (
        "Or your own: --model PATH.keras (a saved model), --model PATH.py (a file defining "
        "build_model(input_shape, num_classes)) or --model PATH.h5 (a legacy Keras model)."
    )
    assert file_filter() == ("Keras models, Python builders and legacy Keras models "
                             "(*.keras *.py *.h5 *.hdf5)")
    assert open_file_hint() == ("A saved Keras model (.keras), a Python file defining "
                                "build_model(input_shape, num_classes) (.py) or a Keras model "
                                "saved as HDF5 (.h5, .hdf5)")
    assert model_file_kinds() == ".keras, .py, .h5 or .hdf5"
    assert not_a_model_file(Path("/x/notes.txt")) == (
        "“notes.txt” is not a model file: xlagui takes .keras, .py, .h5 and .hdf5 files.")
    assert set(BUILTIN_WORDS) == set(sources.builtin_names())  # every built-in is described


def test_what_a_choice_is_in_words() -> None:
    mixer = sources.describe(ModelChoice(name="mixer"))
    assert about(mixer) == ("A small MLP-Mixer: 8x8 patches, 4 blocks of dense token and "
                            "channel mixing, dim 128.")
    assert code_note(mixer) == ""
    saved = ModelFacts("keras", "net", "/m/net.keras", "ab" * 32, False, True)
    assert about(saved) == "/m/net.keras (a saved Keras model, sha256 abababababab…)"
    builder = ModelFacts("python", "net", "/m/net.py", "cd" * 32, True, False)
    assert about(builder) == "/m/net.py (a Python builder, sha256 cdcdcdcdcdcd…)"
    assert code_note(builder) == (
        "Running a comparison runs the Python code in net.py (in the worker processes, not in "
        "this window). Open only files you trust.")


class _Onnx(FileSource):
    name: ClassVar[str] = "onnx"
    suffixes: ClassVar[tuple[str, ...]] = (".onnx",)

    def build(self, choice: ModelChoice, image_size: int, num_classes: int,
              seed: int | None) -> LoadedModel:
        raise NotImplementedError


def test_a_source_without_its_own_words_is_named_by_its_suffix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sources.SOURCES, "onnx", _Onnx())
    assert file_filter() == ("Keras models, Python builders, legacy Keras models and .onnx "
                             "files (*.keras *.py *.h5 *.hdf5 *.onnx)")
    assert model_file_kinds("and") == ".keras, .py, .h5, .hdf5 and .onnx"
    assert model_help().endswith(
        "a saved PATH.keras, a PATH.py defining build_model(input_shape, num_classes), a saved "
        "PATH.h5 (legacy HDF5), or a PATH.onnx (default: cnn, the article's)")
    assert about(ModelFacts("onnx", "n", "/m/n.onnx", "ef" * 32, False, False)) == (
        "/m/n.onnx (a .onnx file, sha256 efefefefefef…)")


def _checked() -> ModelEvent:
    from tests.helpers.models import FakeModelChecker as Fake
    from xlagui.core.model.check import ModelCheckSpec
    from xlagui.core.protocol.task import TaskState

    return Fake(fixed={"m.keras": 224})([ModelCheckSpec(
        model=ModelChoice(source="keras", name="m", file="/x/m.keras"), image_size=96,
        batch_size=16, num_classes=5)], TaskState())[0]


def test_summary_line_names_layers_parameters_input_and_output() -> None:
    line = summary_line(_checked())
    assert line.startswith("3 layers, 4,321 parameters; input 224×224×3 (fixed by the model); "
                           "output 5 (softmax)"), line
    assert "700 MB per training step at batch 16" in line or "700 MiB" in line, line


def test_the_model_groups_list_and_status_words() -> None:
    assert [short_count(n) for n in (None, 812, 559_617, 2_259_265)] == [
        "?", "812", "560 k", "2.3 M"]
    check = _checked()
    assert builtin_item("vit", None) == "vit"
    assert builtin_item("m", check) == "m — 4 k parameters"
    assert file_item("/x/net.keras") == "net.keras  (your file)"
    assert refusal(ConfigError("no such file: /x/m.keras")) == "No such file: /x/m.keras."
    assert not_restored(ConfigError("unknown model 'vgg'")) == (
        "The saved model was not restored: unknown model 'vgg'.")
    assert not_restored("It is gone.") == "The saved model was not restored: It is gone."
    assert checking_for_run("vit") == "Checking vit: it is built once before anything runs…"
    assert not_checked("vit", OSError("disk")) == "vit could not be checked: OSError: disk"
    assert counts_failed(OSError("disk")) == (
        "The built-in models could not be built to count their parameters: disk")


def test_the_model_groups_status_says_the_checks_state() -> None:
    def status(refused: str = "", checking: str = "", checked: bool = False,
               counts: bool = True) -> tuple[str, Level | None]:
        return check_status(refused=refused, checking=checking,
                            check=_checked() if checked else None, label="vit", counts=counts)

    assert status(refused="net.py line 3: boom", checking="vit") == (
        "net.py line 3: boom", Level.ERROR)
    # Built, its FLOPs still being counted: its summary at once (the FLOPs have a line).
    assert status(checking="resnet50", checked=True) == (summary_line(_checked()), None)
    assert status(checking="resnet50") == ("Building resnet50 once to count its parameters…", None)
    assert status() == ("Building vit once to count its parameters…", None)
    assert status(counts=False) == ("", None)
    assert status(checked=True) == (summary_line(_checked()), None)


def test_the_flops_have_their_own_line_marked_while_counted() -> None:
    built = _checked()  # built without a training step: no FLOPs yet
    assert flops_status(None, counting=True) == (
        "FLOPs per training step: still being counted (one training step is compiled)…")
    assert flops_status(built, counting=True) == flops_status(None, counting=True)
    counted = dataclasses.replace(built, flops_per_step=2.5e9, batch_size=8)
    assert flops_status(counted, counting=False) == (
        "FLOPs per training step: 2.5 GFLOP at batch 8.")
    failed = dataclasses.replace(built, flops_per_step=None, flops_note="ValueError: no HLO")
    assert flops_status(failed, counting=False) == (
        "FLOPs per training step: not counted (ValueError: no HLO).")
