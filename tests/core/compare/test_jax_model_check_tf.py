"""The JAX arm's model check (issue 39): a model file runs one training step on JAX in a child of
its own before anything is measured; one that uses TensorFlow's own ops is refused by the arm's
name, and a backend-agnostic one goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare.machine import check_model
from xlagui.core.compare.request import ComparisonRequest, Watcher
from xlagui.core.data.scan import scan_dataset
from xlagui.core.model.sources import parse_model
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.task import TaskState

pytestmark = pytest.mark.tf

KERAS_ONLY = '''import keras


def build_model(input_shape, num_classes):
    inputs = keras.Input(shape=input_shape)
    x = keras.layers.Conv2D(4, 3, activation="relu")(inputs)
    x = keras.layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))
'''
# TensorFlow's own op inside the model: fine on TensorFlow, not on JAX.
TF_OPS = KERAS_ONLY.replace(
    "import keras\n", "import keras\nimport tensorflow as tf\n\n\n"
    "class TfSquare(keras.layers.Layer):\n    def call(self, x):\n"
    "        return tf.math.square(x)\n").replace(
    "    x = keras.layers.GlobalAveragePooling2D()(x)",
    "    x = TfSquare()(x)\n    x = keras.layers.GlobalAveragePooling2D()(x)")


def _request(tmp_path: Path, source: str) -> ComparisonRequest:
    model = tmp_path / "model.py"
    model.write_text(source, encoding="utf-8")
    scan = scan_dataset(tiny_split_dataset(tmp_path / "d", train=4, test=1))
    config = RunConfig(image_size=40, batch_size=4, arms=("jax",),
                       model=parse_model(str(model)))
    return ComparisonRequest(scan=scan, config=config, out_dir=tmp_path / "out")


def test_a_model_with_tensorflow_ops_is_refused_for_the_jax_arm(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as refused:
        check_model(_request(tmp_path, TF_OPS), Watcher(), TaskState())
    said = str(refused.value)
    assert said.startswith("the jax arm cannot run this model on JAX: ")
    assert "model.py, line 13" in said  # the line that calls TensorFlow's op
    assert not (tmp_path / "out").exists()  # before anything was measured


def test_a_keras_only_model_passes_both_checks(tmp_path: Path) -> None:
    check = check_model(_request(tmp_path, KERAS_ONLY), Watcher(), TaskState())
    assert check is not None and check.model.params and check.model.params > 0
