"""The model in words: the line before a comparison, the memory warning, `xlagui models`."""

from __future__ import annotations

from xlagui.core.model.check import memory_guard
from xlagui.core.protocol.config import ModelChoice, RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.present.models import memory_warning, model_line, models_rows


def test_the_model_line_names_the_model_and_its_work() -> None:
    chosen = ModelChoice(source="keras", name="net", file="/m/net.keras", sha256="ab" * 32,
                         params=1234)
    check = ModelEvent(model=chosen, image_size=64, fixed_input_size=True, batch_size=8,
                       flops_per_step=2.5e9, compile_words="from the file: SGD + mse")
    line = model_line(RunConfig(image_size=64, model=chosen), check)
    assert line == (
        "Model: net.keras (/m/net.keras, sha256 abababababab…), 1,234 parameters, takes 64 px "
        "images, 2.5 GFLOP per training step at batch 8, compiled with from the file: SGD + mse"
    )
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
