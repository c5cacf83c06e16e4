"""The profiling worker on the article's CNN at 48 px, both sides (a real TensorFlow worker per
arm, batch 32, 5 warm steps): every step attributed, coverage at least 80% on each side (the
issue's goal; XLA's reaches it since an asynchronous thunk counts until its `end:` event), and
the layers named are the CNN's. And the names a profile keeps of its model."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.profiling import profile_arm
from xlagui.core.explain.attribute import top_differences
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.why import NOT_TRACED, OpKind, Pass
from xlagui.core.worker.profile import model_names

STEPS = 5
CNN_LAYERS = {"conv2d", "conv2d_1", "conv2d_2", "max_pooling2d", "max_pooling2d_1",
              "max_pooling2d_2", "flatten", "dense", "dense_1", "head"}


@pytest.mark.tf
def test_both_sides_of_the_cnn_are_attributed(tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=32, test=2)
    config = RunConfig(batch_size=32, image_size=48, quick=True, seed=1)
    profiles = {v: profile_arm(data, config, v, tmp_path / v, STEPS) for v in ("baseline", "xla")}
    for variant, prof in profiles.items():
        assert prof.coverage >= 0.80, (variant, prof.coverage)
        assert prof.rows[-1].layer == NOT_TRACED
        layers = {r.layer for r in prof.rows}
        assert layers & CNN_LAYERS >= {"conv2d", "conv2d_1", "max_pooling2d"}, (variant, layers)
        assert layers <= CNN_LAYERS | {"optimizer", "loss", "framework", NOT_TRACED}
        # the convolutions' gradients are found on both sides
        assert prof.seconds(("conv2d_1", Pass.INPUT_GRADIENT, OpKind.CONVOLUTION)) > 0, variant
        assert 0 < prof.step_seconds < 10
    top = top_differences(profiles, baseline="baseline")
    assert len(top) == 3 and all(d.arm == "xla" for d in top)
    assert abs(top[0].change) >= abs(top[-1].change)


def test_a_models_names_nested_models_included() -> None:
    def layer(name: str, layers: list[SimpleNamespace] | None = None) -> SimpleNamespace:
        return SimpleNamespace(name=name, layers=layers or [])

    inner = layer("mobilenetv2_1.00_64", [layer("Conv1"), layer("block_1_depthwise")])
    model = SimpleNamespace(name="mobilenetv2", layers=[layer("input_layer_1"), inner,
                                                        layer("head")],
                            optimizer=SimpleNamespace(name="adam_1"))
    names = model_names(model)
    assert names.layers == {"input_layer_1", "Conv1", "block_1_depthwise", "head"}
    assert names.models == {"mobilenetv2", "mobilenetv2_1.00_64"}
    assert names.optimizer == "adam_1"
    assert model_names(SimpleNamespace(name="m", layers=[])).optimizer == ""
