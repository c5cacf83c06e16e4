"""TensorFlow op paths and XLA instruction names → (layer, pass, op kind), on names taken from
real traces and dumps (TF 2.21, Keras 3.15)."""

from __future__ import annotations

import pytest

from xlagui.core.explain.ops import Names, hlo_op_kind, where_hlo, where_tf
from xlagui.core.protocol.why import OpKind, Pass

CNN = Names(frozenset({"conv2d", "conv2d_1", "conv2d_2", "max_pooling2d", "max_pooling2d_1",
                       "dense", "dense_1", "head"}), frozenset({"article_cnn"}), "adam")
MOBILENET = Names(frozenset({"block_1_depthwise", "block_1_expand_BN", "Conv1", "head"}),
                  frozenset({"mobilenetv2", "mobilenetv2_1.00_64"}), "adam_1")


@pytest.mark.parametrize(("op", "names", "want"), [
    # Keras adds one `_N` to a scope: conv2d_1 is layer conv2d, conv2d_1_2 layer conv2d_1
    ("StatefulPartitionedCall/gradient_tape/article_cnn_1/conv2d_1_2/convolution/"
     "Conv2DBackpropFilter:_MklNativeConv2DBackpropFilter", CNN,
     ("conv2d_1", Pass.WEIGHT_GRADIENT, OpKind.CONVOLUTION)),
    ("StatefulPartitionedCall/article_cnn_1/conv2d_1/Relu:_MklNativeFusedConv2D", CNN,
     ("conv2d", Pass.FORWARD, OpKind.CONVOLUTION)),
    ("StatefulPartitionedCall/gradient_tape/article_cnn_1/max_pooling2d_1/MaxPool2d/"
     "MaxPoolGrad:_MklNativeMaxPoolGrad", CNN,
     ("max_pooling2d", Pass.INPUT_GRADIENT, OpKind.POOLING)),
    ("StatefulPartitionedCall/gradient_tape/article_cnn_1/dense_1_2/MatMul/MatMul_1:_MklMatMul",
     CNN, ("dense_1", Pass.WEIGHT_GRADIENT, OpKind.MATMUL)),
    ("StatefulPartitionedCall/gradient_tape/article_cnn_1/dense_1_2/MatMul/MatMul:_MklMatMul",
     CNN, ("dense_1", Pass.INPUT_GRADIENT, OpKind.MATMUL)),
    ("gradient_tape/article_cnn_1/conv2d_1/BiasAdd/BiasAddGrad", CNN,
     ("conv2d", Pass.WEIGHT_GRADIENT, OpKind.REDUCTION)),
    ("StatefulPartitionedCall/adam/Mul_11:Mul", CNN,
     ("optimizer", Pass.OPTIMIZER, OpKind.ELEMENTWISE)),
    ("adam_1/AssignSubVariableOp_4", MOBILENET,
     ("optimizer", Pass.OPTIMIZER, OpKind.ELEMENTWISE)),
    ("gradient_tape/compile_loss/binary_crossentropy/logistic_loss/mul/Mul", CNN,
     ("loss", Pass.INPUT_GRADIENT, OpKind.ELEMENTWISE)),
    ("StatefulPartitionedCall/AddN_108:AddN", CNN,
     ("framework", Pass.INPUT_GRADIENT, OpKind.ELEMENTWISE)),
    ("div_no_nan_1", CNN, ("framework", Pass.OTHER, OpKind.ELEMENTWISE)),
    # nested models: the inner model's scope is passed over
    ("gradient_tape/mobilenetv2_1/mobilenetv2_1.00_64_1/block_1_depthwise_1/depthwise/"
     "DepthwiseConv2dNativeBackpropInput:_MklNativeDepthwiseConv2dNativeBackpropInput",
     MOBILENET, ("block_1_depthwise", Pass.INPUT_GRADIENT, OpKind.DEPTHWISE_CONVOLUTION)),
    ("mobilenetv2_1/mobilenetv2_1.00_64_1/block_1_expand_BN_1/batchnorm/mul:Mul", MOBILENET,
     ("block_1_expand_BN", Pass.FORWARD, OpKind.NORMALIZATION)),
    ("mobilenetv2_1/mobilenetv2_1.00_64_1/block_1_expand_BN_1/moments/mean:Mean", MOBILENET,
     ("block_1_expand_BN", Pass.FORWARD, OpKind.NORMALIZATION)),
    # without the model's names: the component after the model's scope, one `_N` less
    ("StatefulPartitionedCall/net_1/conv2d_3/Relu:_MklNativeFusedConv2D", Names(),
     ("conv2d", Pass.FORWARD, OpKind.CONVOLUTION)),
])
def test_tf_op_paths(op: str, names: Names, want: tuple[str, Pass, OpKind]) -> None:
    w = where_tf(op, names)
    assert (w.layer, w.pass_, w.op_kind) == want


@pytest.mark.parametrize(("name", "kind"), [
    ("wrapped_reduce-window.2", OpKind.POOLING),
    ("wrapped_scatter.1", OpKind.SCATTER_GATHER),
    ("convolution-base-dilated.3", OpKind.CONVOLUTION),
    ("MatMul_1.8", OpKind.MATMUL),
    ("transpose_copy_fusion.3", OpKind.DATA_MOVEMENT),
    ("wrapped_iota.4", OpKind.DATA_MOVEMENT),
    ("reduce_add_fusion.1", OpKind.REDUCTION),
    ("multiply_add_fusion.19", OpKind.ELEMENTWISE),
    ("custom-call.7", OpKind.OTHER),
])
def test_hlo_instruction_kinds(name: str, kind: OpKind) -> None:
    assert hlo_op_kind(name) is kind


def test_an_instruction_takes_its_ops_kind_where_it_has_one() -> None:
    w = where_hlo("convolution-base-dilated.3",
                  "gradient_tape/mobilenetv2_1/mobilenetv2_1.00_64_1/block_1_depthwise_1/"
                  "depthwise/DepthwiseConv2dNativeBackpropInput", MOBILENET)
    assert (w.layer, w.pass_, w.op_kind) == (
        "block_1_depthwise", Pass.INPUT_GRADIENT, OpKind.DEPTHWISE_CONVOLUTION)
    # the op says "Relu" (elementwise), the instruction is the fused convolution: the op's
    assert where_hlo("fusion.3", "article_cnn_1/conv2d_1/Relu", CNN).op_kind is OpKind.ELEMENTWISE
    # an op of no kind (`Cast_3`... is data movement; `Foo` is none): the instruction's
    assert where_hlo("wrapped_scatter.2", "article_cnn_1/conv2d_1/Foo", CNN).op_kind \
        is OpKind.SCATTER_GATHER
    w = where_hlo("wrapped_iota", None, CNN)
    assert (w.layer, w.pass_, w.op_kind) == ("framework", Pass.OTHER, OpKind.DATA_MOVEMENT)
