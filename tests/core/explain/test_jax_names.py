"""JAX's trace paths → (layer, pass, op kind), and what `hlo_names` reads from a JAX module's
instructions that the path does not say (a grouped convolution, a weight's gradient, a weight
gradient fused away from its metadata). The paths are as JAX 0.10 and Keras 3.15 write them
(`jit(train_step)/transpose(jvp(conv2d_1))/conv_general_dilated`, from a real dump)."""

# ruff: noqa: E501  (the HLO lines below are as XLA writes them)
from __future__ import annotations

import pytest

from xlagui.core.explain.hlo_names import op_names
from xlagui.core.explain.ops import Names, is_jax_op, where_hlo, where_jax
from xlagui.core.protocol.why import OpKind, Pass

CNN = Names(frozenset({"conv2d", "conv2d_1", "max_pooling2d", "dense", "head"}),
            frozenset({"article_cnn"}), "adam")
STEP = "jit(train_step)"


@pytest.mark.parametrize(("op", "want"), [
    (f"{STEP}/jvp(conv2d_1)/conv_general_dilated",
     ("conv2d_1", Pass.FORWARD, OpKind.CONVOLUTION)),
    # JAX's scopes are the layers' own names: conv2d_1 is conv2d_1 (no `_N` of TensorFlow's)
    (f"{STEP}/transpose(jvp(conv2d_1))/conv_general_dilated",
     ("conv2d_1", Pass.INPUT_GRADIENT, OpKind.CONVOLUTION)),
    (f"{STEP}/transpose(jvp(conv2d_1))/conv_general_dilated[weights]",
     ("conv2d_1", Pass.WEIGHT_GRADIENT, OpKind.CONVOLUTION)),
    (f"{STEP}/transpose(jvp(conv2d))/reduce_sum[weights]",
     ("conv2d", Pass.WEIGHT_GRADIENT, OpKind.REDUCTION)),
    (f"{STEP}/jvp(conv2d)/jit(relu)/max", ("conv2d", Pass.FORWARD, OpKind.ELEMENTWISE)),
    (f"{STEP}/transpose(jvp(max_pooling2d))/select_and_scatter",
     ("max_pooling2d", Pass.INPUT_GRADIENT, OpKind.POOLING)),
    (f"{STEP}/jvp(dense)/dot_general", ("dense", Pass.FORWARD, OpKind.MATMUL)),
    (f"{STEP}/adam/sqrt", ("optimizer", Pass.OPTIMIZER, OpKind.ELEMENTWISE)),
    (f"{STEP}/jvp(compile_loss)/binary_crossentropy/log",
     ("loss", Pass.FORWARD, OpKind.ELEMENTWISE)),
    (f"{STEP}/transpose(jvp(compile_loss))/binary_crossentropy/mul",
     ("loss", Pass.INPUT_GRADIENT, OpKind.ELEMENTWISE)),
    (f"{STEP}/jvp(block_1_depthwise)/conv_general_dilated[grouped]",
     ("framework", Pass.OTHER, OpKind.DEPTHWISE_CONVOLUTION)),  # not one of CNN's layers
    (f"{STEP}/reduce_sum", ("framework", Pass.OTHER, OpKind.REDUCTION)),
])
def test_a_jax_path_says_layer_pass_and_kind(op: str, want: tuple[str, Pass, OpKind]) -> None:
    w = where_jax(op, CNN)
    assert (w.layer, w.pass_, w.op_kind) == want


def test_a_nested_models_scope_is_passed_over_and_depthwise_is_the_groups() -> None:
    names = Names(frozenset({"block_1_depthwise"}), frozenset({"mobilenetv2_1.00_64"}), "adam")
    w = where_jax(f"{STEP}/transpose(jvp(mobilenetv2_1.00_64))/block_1_depthwise/"
                  "conv_general_dilated[grouped]", names)
    assert (w.layer, w.pass_, w.op_kind) == (
        "block_1_depthwise", Pass.INPUT_GRADIENT, OpKind.DEPTHWISE_CONVOLUTION)
    # as a real dump writes it: the nested model's scope, then the layer's own name
    bn = Names(frozenset({"block_10_depthwise_BN"}), frozenset({"mobilenetv2_1.00_64"}), "adam")
    w = where_jax(f"{STEP}/jvp(mobilenetv2_1.00_64)/block_10_depthwise_BN/jit(_var)/reduce_sum",
                  bn)
    assert (w.layer, w.pass_, w.op_kind) == (
        "block_10_depthwise_BN", Pass.FORWARD, OpKind.NORMALIZATION)


def test_where_hlo_reads_a_jax_path_as_jax_and_a_tensorflow_path_as_tensorflow() -> None:
    assert is_jax_op(f"{STEP}/jvp(dense)/dot_general")
    assert not is_jax_op("StatefulPartitionedCall/article_cnn_1/dense/MatMul")
    jax = where_hlo("fusion.3", f"{STEP}/jvp(dense)/dot_general", CNN)
    assert (jax.layer, jax.op_kind) == ("dense", OpKind.MATMUL)
    tf = where_hlo("fusion.3", "article_cnn_1/dense_1/MatMul", CNN)
    assert tf.layer == "dense"  # TensorFlow's `_1` is the scope's reuse: layer dense


# A JAX training module as XLA:CPU leaves it (trimmed from a real dump of the article's CNN):
# the weight gradient of conv2d_1 is a YNNPACK fusion around a convolution XLA stripped of its
# metadata, used by Adam's update; a depthwise convolution's input gradient keeps its path.
AFTER = """HloModule jit_train_step, entry_computation_layout={()->()}

%fused_computation.4 (param_0.4: f32[64,30,30,64], param_1.4: f32[26,26,64,32]) -> f32[64,5,5,32] {
  %param_0.4 = f32[64,30,30,64]{3,2,1,0} parameter(0)
  %param_1.4 = f32[26,26,64,32]{3,2,1,0} parameter(1)
  ROOT %convolution.6 = f32[64,5,5,32]{3,2,1,0} convolution(%param_0.4, %param_1.4), window={size=26x26}, dim_labels=b01f_01io->b01f
}

%fused_computation.49 (param_0.9: f32[5,5,64,32], param_1.9: f32[64,5,5,32]) -> f32[5,5,64,32] {
  %param_0.9 = f32[5,5,64,32]{3,2,1,0} parameter(0)
  %param_1.9 = f32[64,5,5,32]{3,2,1,0} parameter(1)
  %transpose.9 = f32[5,5,64,32]{3,2,1,0} transpose(%param_1.9), dimensions={1,2,0,3}
  ROOT %add.9 = f32[5,5,64,32]{3,2,1,0} add(%param_0.9, %transpose.9), metadata={op_name="jit(train_step)/adam/add"}
}

ENTRY %main.34 (state_0__2_.1: f32[5,5,64,32], a.1: f32[64,30,30,64], b.1: f32[26,26,64,32], c.1: f32[64,32,32,8], d.1: f32[3,3,1,8]) -> f32[64,32,32,8] {
  %state_0__2_.1 = f32[5,5,64,32]{3,2,1,0} parameter(0), metadata={op_name="state[0][2]"}
  %a.1 = f32[64,30,30,64]{3,2,1,0} parameter(1), metadata={op_name="data[0]"}
  %b.1 = f32[26,26,64,32]{3,2,1,0} parameter(2), metadata={op_name="data[1]"}
  %c.1 = f32[64,32,32,8]{3,2,1,0} parameter(3), metadata={op_name="data[2]"}
  %d.1 = f32[3,3,1,8]{3,2,1,0} parameter(4), metadata={op_name="data[3]"}
  %ynn_fusion.4 = f32[64,5,5,32]{3,2,1,0} fusion(%a.1, %b.1), kind=kCustom, calls=%fused_computation.4
  %multiply_add_fusion.19 = f32[5,5,64,32]{3,2,1,0} fusion(%state_0__2_.1, %ynn_fusion.4), kind=kLoop, calls=%fused_computation.49, metadata={op_name="jit(train_step)/adam/add"}
  ROOT %convolution.7 = f32[64,32,32,8]{3,2,1,0} convolution(%c.1, %d.1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=8, metadata={op_name="jit(train_step)/transpose(jvp(block_1_depthwise))/conv_general_dilated"}
}
"""
BEFORE = """HloModule jit_train_step, entry_computation_layout={()->()}

ENTRY %main.1 (a.1: f32[64,30,30,64], b.1: f32[26,26,64,32]) -> f32[64,5,5,32] {
  %a.1 = f32[64,30,30,64]{3,2,1,0} parameter(0)
  %b.1 = f32[26,26,64,32]{3,2,1,0} parameter(1)
  ROOT %conv_general_dilated.13 = f32[64,5,5,32]{3,2,1,0} convolution(%a.1, %b.1), window={size=26x26}, dim_labels=b01f_01io->b01f, metadata={op_name="jit(train_step)/transpose(jvp(conv2d_1))/conv_general_dilated"}
}
"""


def test_a_fused_weight_gradient_is_its_convolutions_not_the_optimizers() -> None:
    ops = op_names(AFTER, BEFORE)
    want = "jit(train_step)/transpose(jvp(conv2d_1))/conv_general_dilated[weights]"
    assert ops["ynn_fusion.4"] == want
    w = where_hlo("ynn_fusion.4", ops["ynn_fusion.4"], CNN)
    assert (w.layer, w.pass_, w.op_kind) == ("conv2d_1", Pass.WEIGHT_GRADIENT,
                                             OpKind.CONVOLUTION)
    # Adam's own fusion stays the optimizer's
    assert ops["multiply_add_fusion.19"] == "jit(train_step)/adam/add"


def test_without_the_module_before_optimization_the_fusion_is_not_given_a_guess() -> None:
    assert "conv2d_1" not in op_names(AFTER).get("ynn_fusion.4", "")


def test_a_grouped_convolution_is_marked_depthwise_and_an_input_gradient_is_not_weights(
) -> None:
    op = op_names(AFTER, BEFORE)["convolution.7"]
    assert op.endswith("[grouped]") and "[weights]" not in op
    names = Names(frozenset({"block_1_depthwise"}), frozenset(), "adam")
    w = where_hlo("convolution.7", op, names)
    assert (w.layer, w.pass_, w.op_kind) == ("block_1_depthwise", Pass.INPUT_GRADIENT,
                                             OpKind.DEPTHWISE_CONVOLUTION)


# XLA:CPU rewrites a depthwise filter's gradient into a dense C × C convolution without its
# metadata ([8,3,3,8] for a [3,3,8,1] filter); before optimization it was the layer's grouped
# convolution (`batch_group_count`).
REWRITTEN = """HloModule jit_train_step, entry_computation_layout={()->()}

ENTRY %main.2 (state_0__3_.1: f32[3,3,8,1], x.1: f32[64,16,16,8], g.1: f32[2,2,8,8]) -> f32[8,3,3,8] {
  %state_0__3_.1 = f32[3,3,8,1]{3,2,1,0} parameter(0), metadata={op_name="state[0][3]"}
  %x.1 = f32[64,16,16,8]{3,2,1,0} parameter(1), metadata={op_name="data[0]"}
  %g.1 = f32[2,2,8,8]{3,2,1,0} parameter(2)
  ROOT %convolution.104 = f32[8,3,3,8]{3,2,1,0} convolution(%x.1, %g.1), window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
"""
REWRITTEN_BEFORE = """HloModule jit_train_step, entry_computation_layout={()->()}

ENTRY %main.1 (x.1: f32[64,16,16,8], g.1: f32[64,16,16,8]) -> f32[3,3,8,1] {
  %x.1 = f32[64,16,16,8]{3,2,1,0} parameter(0)
  %g.1 = f32[64,16,16,8]{3,2,1,0} parameter(1)
  ROOT %conv_general_dilated.20 = f32[3,3,8,1]{3,2,1,0} convolution(%x.1, %g.1), window={size=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=8, metadata={op_name="jit(train_step)/transpose(jvp(block_1_depthwise))/conv_general_dilated"}
}
"""


def test_a_rewritten_depthwise_filter_gradient_is_the_depthwise_weight_gradient() -> None:
    op = op_names(REWRITTEN, REWRITTEN_BEFORE)["convolution.104"]
    names = Names(frozenset({"block_1_depthwise"}), frozenset(), "adam")
    w = where_hlo("convolution.104", op, names)
    assert (w.layer, w.pass_, w.op_kind) == ("block_1_depthwise", Pass.WEIGHT_GRADIENT,
                                             OpKind.DEPTHWISE_CONVOLUTION)
    # the same result with the batch among its dimensions is an input's gradient
    with_batch = REWRITTEN.replace("f32[8,3,3,8]", "f32[64,3,3,8]")
    w = where_hlo("convolution.104", op_names(with_batch, REWRITTEN_BEFORE.replace(
        "f32[3,3,8,1]", "f32[64,3,3,8]"))["convolution.104"], names)
    assert w.pass_ is Pass.INPUT_GRADIENT
