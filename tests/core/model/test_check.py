"""The model check's spec, the memory guard and the HLO FLOP counter, without TensorFlow; and,
with it, the count of the article's CNN against the shape-based one."""

from __future__ import annotations

import pytest

from xlagui.core.model.check import (
    SUMMARY_LINES,
    TENSORFLOW_BYTES,
    ModelCheckSpec,
    _summary,
    article_cnn_memory,
    memory_guard,
)
from xlagui.core.model.flops import article_cnn_count, hlo_flops
from xlagui.core.protocol.config import ModelChoice
from xlagui.core.protocol.events import ProtocolError
from xlagui.present.errors import error_hint

# A convolution whose gradient pads its input (only the positions inside count), a dot, an
# element-wise op, and a convolution nothing reads (XLA drops it; so does the count).
HLO = """HloModule step, entry_computation_layout={()}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (x: f32[2,6,6,3], k: f32[3,3,3,4], w: f32[4,5]) -> (f32[2,5], f32[]) {
  %x = f32[2,6,6,3]{3,2,1,0} parameter(0)
  %k = f32[3,3,3,4]{3,2,1,0} parameter(1)
  %w = f32[4,5]{1,0} parameter(2)
  %conv = f32[2,6,6,4]{3,2,1,0} convolution(%x, %k), window={size=3x3 pad=1_1x1_1}, LABELS
  %dead = f32[2,4,4,4]{3,2,1,0} convolution(%x, %k), window={size=3x3}, LABELS
  %zero = f32[] constant(0)
  %pooled = f32[2,4]{1,0} reduce(%conv, %zero), dimensions={1,2}, to_apply=%add
  %dot = f32[2,5]{1,0} dot(%pooled, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %relu = f32[2,5]{1,0} maximum(%dot, %dot)
  %sum = f32[] reduce(%relu, %zero), dimensions={0,1}, to_apply=%add
  ROOT %out = (f32[2,5]{1,0}, f32[]) tuple(%relu, %sum)
}
""".replace("LABELS", "dim_labels=b01f_01io->b01f")


def test_hlo_flops_counts_what_the_result_needs() -> None:
    # 3x3 "same" convolution on 6x6: per dimension 16 of the 18 (output, kernel) pairs read
    # inside the input (the two border rows miss one tap each): 2 · 2·4·3 · 16·16 MACs.
    conv = 2 * (2 * 4 * 3 * 16 * 16)
    reduce_conv = 2 * 6 * 6 * 4
    dot = 2 * (2 * 5 * 4)
    assert hlo_flops(HLO) == conv + reduce_conv + dot + 10 + 10


def test_hlo_flops_without_an_entry_is_refused() -> None:
    with pytest.raises(ValueError, match="no ENTRY"):
        hlo_flops("HloModule empty\n")


def test_the_check_spec_round_trips_and_names_a_bad_field() -> None:
    spec = ModelCheckSpec(model=ModelChoice(name="vit"), image_size=48, batch_size=8)
    assert ModelCheckSpec.from_json(spec.to_json()) == spec
    with pytest.raises(ProtocolError, match=r"'model\.name'"):
        ModelCheckSpec.from_json('{"model": {"name": 3}}')


def test_the_memory_guard_counts_every_worker() -> None:
    guard = memory_guard(2 * 2**30, workers=3, available=5 * 2**30)
    assert guard.needed_bytes == 6 * 2**30 and not guard.fits
    assert memory_guard(2 * 2**30, workers=2, available=5 * 2**30).fits


def test_the_cnns_memory_is_worked_out_from_its_shapes() -> None:
    parts = article_cnn_memory(150, 2, 64)
    assert parts["weights"] == 4 * 529_295 and parts["optimizer"] == 8 * 529_295
    # conv1's output alone, 146·146·64 floats per image, kept and its gradient, at batch 64
    assert parts["activations"] > 2 * 4 * 64 * 146 * 146 * 64
    assert parts["tensorflow"] == TENSORFLOW_BYTES


class _Layer:
    """What the summary reads of a Keras layer: its name, output shape and parameters."""

    def __init__(self, i: int) -> None:
        self.name = f"dense_{i}"
        self.output = type("Out", (), {"shape": (None, 8)})()
        self._params = 1000 * i

    def count_params(self) -> int:
        return self._params


def test_a_long_summary_keeps_its_first_layers_and_counts_the_rest() -> None:
    model = type("Model", (), {"layers": [_Layer(i) for i in range(SUMMARY_LINES + 5)]})()
    lines, more = _summary(model)
    assert len(lines) == SUMMARY_LINES - 1 and more == 6  # with the count's line: SUMMARY_LINES
    assert lines[1] == "dense_1 (_Layer) (8,) 1,000"
    model.layers = model.layers[:SUMMARY_LINES]
    assert _summary(model) == ([f"dense_{i} (_Layer) (8,) {1000 * i:,}"
                                for i in range(SUMMARY_LINES)], 0)


@pytest.mark.tf
def test_the_cnns_flops_from_xlas_hlo_agree_with_the_shape_count() -> None:
    """The HLO of Keras' own train_step, counted, within 5% of `flops.py`'s per-layer count."""
    import numpy as np
    import tensorflow as tf

    from xlagui.core.model.build import build_compiled
    from xlagui.core.model.check import _step_flops

    model = build_compiled(ModelChoice(), 48, 2, 0, False).model
    x = np.zeros((8, 48, 48, 3), "float32")
    y = np.zeros((8,), "float32")
    model.train_on_batch(x[:1], y[:1])
    step, forward = _step_flops(tf, model, tf.constant(x), tf.constant(y))
    count = article_cnn_count(48, 2)
    assert step == pytest.approx(count.train_per_step(8), rel=0.05)
    assert forward == pytest.approx(count.forward_per_sample, rel=0.05)


def test_a_worker_that_dies_of_memory_names_the_model_batch_and_image_size(
    tmp_path: object,
) -> None:
    from pathlib import Path

    from xlagui.core.measure.ended import died_event
    from xlagui.core.protocol.config import RunConfig
    from xlagui.core.protocol.spec import RunSpec

    folder = Path(str(tmp_path))
    log = folder / "worker.log"
    log.write_text("terminate called after throwing an instance of 'std::bad_alloc'\n")
    config = RunConfig(batch_size=32, image_size=64, model=ModelChoice(name="resnet50"))
    spec = RunSpec("m1-baseline", "baseline", config.xla, config, ["a", "b"], [], [], folder)
    event = died_event(-9, log, spec)
    assert "resnet50, batch size 32 and image size 64" in error_hint(event)
