"""A model of the user's from a file: each kind of bad file gets its own clear message (with the
file and the line), a good one builds with its own compile settings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlagui.core.measure.model_check import check_model
from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.model.sources import parse_model
from xlagui.core.protocol.config import ModelChoice
from xlagui.present.model_files import refusal_text

pytestmark = pytest.mark.tf

GOOD = '''import keras


def build_model(input_shape, num_classes):
    inputs = keras.Input(shape=input_shape)
    x = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))


def compile_args():
    return {"optimizer": keras.optimizers.SGD(0.01)}
'''

BAD = {
    "syntax": (
        "def build_model(input_shape, num_classes):\n    return (\n",
        "line 2: syntax error",
    ),
    "raises": (
        "def build_model(input_shape, num_classes):\n"
        "    size = input_shape[0]\n"
        "    raise ValueError(f'no model for {size} px')\n",
        "line 3: build_model raised ValueError: no model for 48 px",
    ),
    "wrong_type": (
        "def build_model(input_shape, num_classes):\n    return {'layers': 3}\n",
        "line 1: build_model returned a builtins.dict, not a keras.Model",
    ),
    "wrong_output": (
        "import keras\n\n\ndef build_model(input_shape, num_classes):\n"
        "    inputs = keras.Input(shape=input_shape)\n"
        "    x = keras.layers.GlobalAveragePooling2D()(inputs)\n"
        "    return keras.Model(inputs, keras.layers.Dense(3)(x))\n",
        "line 4: the model's output has 3 unit(s) ((None, 3)), but this dataset has 2 classes, "
        "which need 1 unit (sigmoid) for 2 classes",
    ),
    "no_builder": ("x = 1\n", "defines no build_model(input_shape, num_classes)"),
}


def said(exc: Exception) -> str:
    """A `ModelFileError` in the words the user reads (`present/model_files.py`)."""
    from xlagui.core.model.files import ModelFileError
    from xlagui.present.model_files import model_file_text

    assert isinstance(exc, ModelFileError)
    return model_file_text(exc.event_facts) or ""


def _load(path: Path, num_classes: int = 2) -> object:
    from xlagui.core.model.build import build_compiled

    return build_compiled(parse_model(str(path)), 48, num_classes, 0, False)


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_python_file_says_what_and_where(tmp_path: Path, kind: str) -> None:
    from xlagui.core.model.files import ModelFileError

    source, message = BAD[kind]
    path = tmp_path / f"{kind}.py"
    path.write_text(source)
    with pytest.raises(ModelFileError) as caught:
        _load(path)
    assert said(caught.value).startswith(str(path)) and message in said(caught.value)


def test_a_good_python_file_builds_with_its_compile_args(tmp_path: Path) -> None:
    path = tmp_path / "mine.py"
    path.write_text(GOOD)
    built = _load(path)
    assert "SGD" in built.compile_words  # type: ignore[attr-defined]
    assert type(built.model.optimizer).__name__ == "SGD"  # type: ignore[attr-defined]


def _saved(tmp_path: Path, units: int, lam: bool = False) -> Path:
    import keras

    inputs = keras.Input(shape=(None, None, 3))
    x = keras.layers.Lambda(lambda t: t * 2.0)(inputs) if lam else inputs
    x = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(4, 3)(x))
    model = keras.Model(inputs, keras.layers.Dense(units, activation="softmax")(x))
    model.compile(optimizer=keras.optimizers.RMSprop(), loss="sparse_categorical_crossentropy")
    path = tmp_path / f"saved-{units}{'-lambda' if lam else ''}.keras"
    model.save(path)
    return path


def test_a_keras_file_with_a_lambda_is_refused(tmp_path: Path) -> None:
    from xlagui.core.model.files import ModelFileError

    with pytest.raises(ModelFileError) as caught:
        _load(_saved(tmp_path, 3, lam=True), num_classes=3)
    assert re.search(r"Lambda layer.*give a \.py file", said(caught.value))


def test_a_keras_file_keeps_its_compile_config_or_gets_a_new_head(tmp_path: Path) -> None:
    from xlagui.core.model.build import build_compiled
    from xlagui.core.model.files import ModelFileError

    path = _saved(tmp_path, 3)
    built = _load(path, num_classes=3)
    assert built.compile_words == (  # type: ignore[attr-defined]
        "RMSprop + sparse_categorical_crossentropy (as saved in the file)")
    with pytest.raises(ModelFileError) as caught:
        _load(path, num_classes=2)
    assert re.search(r"output has 3 unit.*2 classes.*--new-head", said(caught.value))
    headed = build_compiled(parse_model(str(path), new_head=True), 48, 2, 0, False)
    assert headed.model.output_shape == (None, 1)
    assert headed.compile_words == "Adam + binary_crossentropy"  # its loss was the old head's


def test_a_legacy_h5_file_keeps_its_compile_config_and_refuses_a_lambda(tmp_path: Path) -> None:
    """`model.save("x.h5")` (Keras' legacy HDF5): loaded in safe mode, with the optimizer and
    loss saved in it; a Lambda's Python code is refused as from a `.keras` file."""
    import keras

    from xlagui.core.model.files import ModelFileError

    inputs = keras.Input(shape=(None, None, 3))
    x = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(4, 3)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile(optimizer=keras.optimizers.RMSprop(), loss="binary_crossentropy")
    path = tmp_path / "legacy.h5"
    model.save(path)
    built = _load(path)
    assert built.compile_words == (  # type: ignore[attr-defined]
        "RMSprop + binary_crossentropy (as saved in the file)")
    assert built.model.count_params() == model.count_params()  # type: ignore[attr-defined]
    lam = keras.layers.Lambda(lambda t: t * 2.0)(inputs)
    keras.Model(inputs, keras.layers.Dense(1)(keras.layers.GlobalAveragePooling2D()(lam))).save(
        tmp_path / "lambda.h5")
    with pytest.raises(ModelFileError) as caught:
        _load(tmp_path / "lambda.h5")
    assert re.search(r"Lambda layer.*give a \.py file", said(caught.value))


def test_a_real_savedmodel_folder_is_refused_before_anything_runs(tmp_path: Path) -> None:
    """A SavedModel exported by Keras (`model.export`, TensorFlow's own format) is recognised
    as a model by its folder and refused in words, from the command line too."""
    import keras

    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.cli import main
    from xlagui.core.protocol.config import ConfigError

    inputs = keras.Input(shape=(32, 32, 3))
    x = keras.layers.GlobalAveragePooling2D()(inputs)
    exported = tmp_path / "exported"
    keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x)).export(
        str(exported), verbose=False)
    assert (exported / "saved_model.pb").is_file()
    with pytest.raises(ConfigError, match=r"is a TensorFlow SavedModel folder, which xlagui "
                       r"cannot train: .*\.keras file"):
        parse_model(str(exported))
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    out = tmp_path / "o"
    assert main(["compare", str(data), "--model", str(exported), "--out", str(out)]) == 2
    assert not out.exists()  # nothing measured, no folder made


def test_the_check_worker_refuses_a_bad_file_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text(BAD["syntax"][0])
    spec = ModelCheckSpec(model=parse_model(str(path)), image_size=48, batch_size=4)
    with pytest.raises(ModelRefused) as caught:
        check_model(spec)
    assert re.search(r"broken\.py, line 2: syntax error", refusal_text(caught.value))


def test_the_check_worker_reports_a_fixed_input_size(tmp_path: Path) -> None:
    import keras

    inputs = keras.Input(shape=(40, 40, 3))
    x = keras.layers.GlobalAveragePooling2D()(inputs)
    path = tmp_path / "fixed.keras"
    keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x)).save(path)
    check = check_model(ModelCheckSpec(model=parse_model(str(path)), image_size=48, batch_size=4))
    assert check.image_size == 40 and check.fixed_input_size
    assert check.model.params == 3 * 1 + 1 and check.model.sha256
    assert check.flops_per_step and check.memory_bytes and check.memory_bytes > 0
    assert check.model == ModelChoice(
        source="keras", name="fixed", file=str(path), sha256=check.model.sha256, params=4
    )
