"""XLA instruction names → TensorFlow ops, on the article's CNN's train module as XLA:CPU
optimized it (recorded at 48 px, `tests/helpers/recorded/profiles/record.py`)."""

from __future__ import annotations

import gzip
from pathlib import Path

from tests.helpers.recorded_profiles import PROFILES, recorded_text
from xlagui.core.explain.hlo_names import dump_op_names, op_names, qualified

GRAD = "gradient_tape/article_cnn_1"


def test_an_instruction_with_metadata_has_its_own_op(cnn_op_names: dict[str, str]) -> None:
    assert cnn_op_names["convolution.1"] == f"{GRAD}/conv2d_1_2/convolution/Conv2DBackpropInput"
    assert cnn_op_names["MatMul.12"] == "article_cnn_1/dense_1/MatMul"


def test_a_wrapped_fusion_takes_the_op_inside_it(cnn_op_names: dict[str, str]) -> None:
    # `wrapped_scatter.2` calls a computation whose scatter came from MaxPoolGrad
    assert cnn_op_names["wrapped_scatter.2"] == f"{GRAD}/max_pooling2d_1/MaxPool2d/MaxPoolGrad"
    assert cnn_op_names["ynn_fusion.1"] == f"{GRAD}/conv2d_1/BiasAdd/BiasAddGrad"


def test_an_instruction_xla_made_takes_the_op_it_was_made_for(
        cnn_op_names: dict[str, str]) -> None:
    # the iotas and the index-tracking reduce-window of XLA:CPU's MaxPoolGrad carry no op
    text = recorded_text("cnn48-xla.after.txt.gz")
    line = next(x for x in text.splitlines() if x.strip().startswith("%wrapped_iota ="))
    assert "op_name" not in line
    for name in ("wrapped_iota", "wrapped_reduce-window.3", "concatenate_bitcast_fusion.2"):
        assert cnn_op_names[name] == f"{GRAD}/max_pooling2d_1/MaxPool2d/MaxPoolGrad", name


def test_a_rewritten_convolution_is_matched_before_optimization(
        cnn_op_names: dict[str, str]) -> None:
    text = recorded_text("cnn48-xla.after.txt.gz")
    line = next(x for x in text.splitlines() if x.strip().startswith("%convolution.6 ="))
    assert "op_name" not in line  # XLA dropped it
    assert cnn_op_names["convolution.6"] == \
        f"{GRAD}/conv2d_1_2/convolution/Conv2DBackpropFilter"
    # without the module before optimization, a neighbour of the same family or nothing:
    # never the optimizer's update that uses the result
    alone = op_names(text)
    assert "adam" not in alone.get("convolution.6", "")


def test_a_dump_folder_is_read_module_by_module(tmp_path: Path) -> None:
    name = "module_0112.a_inference_one_step_on_data_2767__.35"
    (tmp_path / f"{name}.cpu_after_optimizations.txt").write_bytes(
        gzip.decompress((PROFILES / "cnn48-xla.after.txt.gz").read_bytes()))
    (tmp_path / f"{name}.before_optimizations.txt").write_bytes(
        gzip.decompress((PROFILES / "cnn48-xla.before.txt.gz").read_bytes()))
    module = "a_inference_one_step_on_data_2767__.35"
    found = dump_op_names(tmp_path, {module})
    assert found["convolution.6"].endswith("Conv2DBackpropFilter")
    assert found[qualified(module, "convolution.6")] == found["convolution.6"]
    assert dump_op_names(tmp_path, {"another_module"}) == {}
    assert dump_op_names(tmp_path / "missing") == {}
