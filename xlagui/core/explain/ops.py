"""A TensorFlow op path, a JAX trace path, or an XLA instruction name, → (layer, pass, op kind).

TensorFlow names a kernel by its op's path and its kernel type:
`StatefulPartitionedCall/gradient_tape/mobilenetv2_1/block_1_depthwise_1/depthwise/
DepthwiseConv2dNativeBackpropInput:_MklNativeDepthwiseConv2dNativeBackpropInput`. The path says
the layer (the first component that is one of the model's layers, past the models' own scopes),
the pass (under `gradient_tape/`, a gradient: of the weights for `…BackpropFilter`,
`BiasAddGrad` and a dense layer's second `MatMul_1`, else of the input), and with the kernel type,
the op kind. Keras 3 adds one `_N` to a layer's name scope when a graph reuses it (`conv2d_1`
is layer `conv2d`'s scope, `conv2d_1_2` layer `conv2d_1`'s); knowing the model's layer names
(`Names`) tells which. XLA's instructions carry the path of the TensorFlow op they came from
(their `op_name`, `hlo_names`); the op kind falls back to the instruction's own name where the
TensorFlow op says nothing (a `wrapped_reduce-window` is pooling).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlagui.core.protocol.why import (
    FRAMEWORK_LAYER,
    LOSS_LAYER,
    OPTIMIZER_LAYER,
    OpKind,
    Pass,
)

_SUFFIX_RE = re.compile(r"_\d+$")
_WRAPPERS = frozenset({"StatefulPartitionedCall", "PartitionedCall"})
GRADIENT_SCOPE = "gradient_tape"
LOSS_SCOPES = ("compile_loss", "loss")
OPTIMIZER_SCOPES = frozenset({
    "adam", "adamw", "sgd", "rmsprop", "adagrad", "adadelta", "adamax", "nadam", "ftrl", "lion",
    "lamb", "optimizer", "loss_scale_optimizer",
})  # fmt: skip

# TensorFlow op types (and oneDNN kernel types, their `_Mkl…` prefixes removed) by kind,
# matched on the lower-cased type; first match wins, in this order.
_TF_KINDS: tuple[tuple[OpKind, tuple[str, ...]], ...] = (
    (OpKind.DEPTHWISE_CONVOLUTION, ("depthwise",)),
    (OpKind.CONVOLUTION, ("conv2d", "conv3d", "conv1d", "convolution", "conv")),
    (OpKind.MATMUL, ("matmul", "einsum", "dot")),
    (OpKind.POOLING, ("maxpool", "avgpool", "pool")),
    (OpKind.NORMALIZATION, ("batchnorm", "layernorm", "normaliz", "moments")),
    (OpKind.SCATTER_GATHER, ("scatter", "gather", "unsortedsegment")),
)
_TF_REDUCTIONS = frozenset({
    "sum", "mean", "max", "min", "prod", "biasaddgrad", "argmax", "argmin", "all", "any",
    "reduce", "l2loss",
})  # fmt: skip
_TF_MOVES = frozenset({
    "transpose", "reshape", "concat", "concatv2", "pad", "slice", "stridedslice", "tile",
    "identity", "copy", "squeeze", "expanddims", "pack", "unpack", "split", "splitv",
    "mkltotf", "tftomkl", "broadcastto", "fill", "zeroslike", "oneslike", "stridedslicegrad",
    "readvariableop", "iteratorgetnext", "optionalgetvalue", "cast", "reverse",
})  # fmt: skip
_TF_ELEMENTWISE = frozenset({
    "relu", "relu6", "relugrad", "relu6grad", "add", "addv2", "addn", "sub", "mul", "div",
    "divnonan", "realdiv", "biasadd", "sigmoid", "sigmoidgrad", "tanh", "tanhgrad", "exp", "log",
    "log1p", "sqrt", "sqrtgrad", "rsqrtgrad", "square", "squareddifference", "neg", "abs",
    "maximum", "minimum", "select", "selectv2", "greater", "greaterequal", "less", "lessequal",
    "equal", "notequal", "softmax", "logsoftmax", "gelu", "erf", "pow", "reciprocal",
    "assignsubvariableop", "assignaddvariableop", "assignvariableop", "resourceapplyadam",
    "applyadam", "floor", "round", "sign", "softplus", "elu", "selu", "leakyrelu", "swish",
    "mulnonan", "floordiv", "floormod", "logicaland", "logicalnot", "cos", "sin",
})  # fmt: skip
# XLA instruction names (`wrapped_reduce-window.2`, `transpose_copy_fusion.3`), by kind; the
# first match of a name's words wins, in this order.
_HLO_KINDS: tuple[tuple[OpKind, tuple[str, ...]], ...] = (
    (OpKind.POOLING, ("reduce-window", "select-and-scatter")),
    (OpKind.SCATTER_GATHER, ("scatter", "gather", "dynamic-update-slice", "dynamic-slice")),
    (OpKind.CONVOLUTION, ("convolution", "conv")),
    (OpKind.MATMUL, ("dot", "matmul", "gemm", "cublas")),
    (OpKind.REDUCTION, ("reduce",)),
    (OpKind.DATA_MOVEMENT, ("copy", "transpose", "concatenate", "bitcast", "slice", "pad",
                            "broadcast", "iota", "reverse", "tuple")),
    (OpKind.ELEMENTWISE, ("fusion", "add", "multiply", "maximum", "select", "exponential",
                          "divide", "subtract", "compare", "convert", "negate", "sqrt")),
)


@dataclass(frozen=True)
class Names:
    """What the model says of its own names: its leaf layers, its models (the outer one and any
    nested, whose scopes are passed over) and its optimizer's name."""

    layers: frozenset[str] = frozenset()
    models: frozenset[str] = frozenset()
    optimizer: str = ""


@dataclass(frozen=True)
class Where:
    layer: str
    pass_: Pass
    op_kind: OpKind


NO_NAMES = Names()  # a trace whose model's names are not known


def strip_suffix(name: str) -> str:
    return _SUFFIX_RE.sub("", name)


def _bare(name: str) -> str:
    while _SUFFIX_RE.search(name):
        name = strip_suffix(name)
    return name


def _resolve(component: str, known: frozenset[str]) -> str | None:
    """The name in `known` a scope component stands for: one `_N` less first, then as it is."""
    stripped = strip_suffix(component)
    if stripped != component and stripped in known:
        return stripped
    return component if component in known else None


def _op_type(component: str) -> str:
    """`MatMul_1` → `matmul`, `_MklNativeFusedConv2D` → `fusedconv2d`, `div_no_nan` →
    `divnonan`."""
    t = _bare(component).lstrip("_")
    for prefix in ("MklNative", "Mkl", "_"):
        t = t.removeprefix(prefix)
    return t.replace("_", "").lower()


_NORM_SCOPES = ("batchnorm", "moments", "layernorm", "normaliz", "groupnorm")


def tf_op_kind(path: str, kernel: str = "") -> OpKind:
    """The op kind of a TensorFlow op (its path's last component) run by `kernel`; an
    element-wise or reducing op inside a normalization's scope (Keras' `…_BN/batchnorm/mul`,
    `…/moments/mean`) is the normalization's."""
    types = [t for t in (_op_type(kernel), _op_type(path.rsplit("/", 1)[-1])) if t]
    for kind, words in _TF_KINDS:
        if any(w in t for t in types for w in words):
            return kind
    scopes = path.lower().split("/")[:-1]
    if any(w in c for c in scopes for w in _NORM_SCOPES):
        return OpKind.NORMALIZATION
    for t in types:
        if t in _TF_REDUCTIONS:
            return OpKind.REDUCTION
        if t in _TF_MOVES:
            return OpKind.DATA_MOVEMENT
        if t in _TF_ELEMENTWISE or t.startswith("apply") or t.startswith("resourceapply"):
            return OpKind.ELEMENTWISE
    return OpKind.OTHER


def hlo_op_kind(instruction: str) -> OpKind:
    """The op kind an XLA instruction's own name says (`wrapped_scatter.2` → scatter/gather)."""
    name = instruction.lower()
    for kind, words in _HLO_KINDS:
        if any(w in name for w in words):
            return kind
    return OpKind.OTHER


def _pass_of(components: list[str], gradient: bool) -> Pass:
    if not gradient:
        return Pass.FORWARD
    last = components[-1] if components else ""
    if "BackpropFilter" in last or _bare(last) == "BiasAddGrad":
        return Pass.WEIGHT_GRADIENT
    # A dense layer's gradients: `…/MatMul/MatMul` (the input's), `…/MatMul/MatMul_1` (weights')
    if last == "MatMul_1" and len(components) > 1 and _bare(components[-2]) == "MatMul":
        return Pass.WEIGHT_GRADIENT
    return Pass.INPUT_GRADIENT


def _layer_of(components: list[str], names: Names) -> str | None:
    """The first component that is one of the model's layers, past the models' scopes; without
    the model's names, the component after the outer model's scope, one `_N` less."""
    if names.layers:
        for c in components:
            if _resolve(c, names.models) is not None:
                continue
            layer = _resolve(c, names.layers)
            if layer is not None:
                return layer
        return None
    if len(components) > 2:  # model/layer/op
        return strip_suffix(components[1])
    return None


def where_tf(op: str, names: Names = NO_NAMES) -> Where:
    """(layer, pass, op kind) of a TensorFlow kernel event's name `path:kernel` (or a path)."""
    path, _, kernel = op.partition(":")
    components = [c for c in path.split("/") if c and c not in _WRAPPERS]
    gradient = bool(components) and components[0] == GRADIENT_SCOPE
    if gradient:
        components = components[1:]
    kind = tf_op_kind(path, kernel)
    head = components[0] if components else ""
    optimizers = OPTIMIZER_SCOPES | {_bare(names.optimizer)} - {""}
    if not gradient and len(components) > 1 and _bare(head) in optimizers:
        return Where(OPTIMIZER_LAYER, Pass.OPTIMIZER, kind)
    pass_ = _pass_of(components, gradient)
    if _bare(head) in LOSS_SCOPES:
        return Where(LOSS_LAYER, pass_, kind)
    layer = _layer_of(components, names)
    if layer is None:
        # TensorFlow sums the gradients that reach one tensor from several uses in a bare
        # `AddN_N` of the training step's own scope: gradient work no layer owns
        summing = len(components) == 1 and _bare(head) == "AddN"
        return Where(FRAMEWORK_LAYER,
                     pass_ if gradient else Pass.INPUT_GRADIENT if summing else Pass.OTHER, kind)
    return Where(layer, pass_, kind)


# --- JAX ---------------------------------------------------------------------------------------
# JAX names an instruction's op by the trace that made it: the jitted function, then each
# transformation around a named scope, then the primitive:
# `jit(train_step)/transpose(jvp(conv2d_1))/conv_general_dilated`. Keras on JAX scopes each layer
# call by the layer's name (`jvp(conv2d_1)`, the forward pass differentiated), and the backward
# pass is the transpose of that (`transpose(jvp(conv2d_1))`). The optimizer's update is under its
# name (`adam/…`), the loss under `compile_loss`. `hlo_names` adds what the primitive does not
# say, read from the instruction: `JAX_GROUPED` (a convolution with one group per channel: the
# depthwise convolution's) and `JAX_WEIGHTS` (a gradient whose result has a trainable weight's
# shape: the weights' gradient, not the input's).
JAX_PREFIX = "jit("
JAX_GROUPED = "[grouped]"
JAX_WEIGHTS = "[weights]"
_JAX_WRAP_RE = re.compile(r"^(\w+)\((.*)\)$")
# JAX primitives by kind (the lower-cased primitive's name contains the word); first match wins.
_JAX_KINDS: tuple[tuple[OpKind, tuple[str, ...]], ...] = (
    (OpKind.POOLING, ("reduce_window", "select_and_scatter", "select_and_gather")),
    (OpKind.CONVOLUTION, ("conv_general_dilated",)),
    (OpKind.MATMUL, ("dot_general",)),
    (OpKind.SCATTER_GATHER, ("scatter", "gather", "dynamic_slice", "dynamic_update_slice")),
    (OpKind.REDUCTION, ("reduce_", "argmax", "argmin", "cumsum")),
    (OpKind.DATA_MOVEMENT, ("transpose", "reshape", "concatenate", "pad", "slice", "broadcast",
                            "squeeze", "expand_dims", "rev", "copy", "convert_element_type",
                            "iota")),
)


def is_jax_op(op_name: str) -> bool:
    """Whether an instruction's op name is JAX's trace path (not a TensorFlow op path)."""
    return op_name.startswith(JAX_PREFIX)


def _unwrap(component: str) -> tuple[list[str], str]:
    """`transpose(jvp(conv2d))` → (["transpose", "jvp"], "conv2d")."""
    wrappers = []
    m = _JAX_WRAP_RE.match(component)
    while m:
        wrappers.append(m.group(1))
        component = m.group(2)
        m = _JAX_WRAP_RE.match(component)
    return wrappers, component


def jax_op_kind(primitive: str, grouped: bool, scopes: list[str]) -> OpKind:
    """The op kind of a JAX primitive; a grouped convolution is depthwise; an element-wise or
    reducing primitive inside a normalization's scope is the normalization's."""
    name = primitive.lower()
    if grouped and "conv" in name:
        return OpKind.DEPTHWISE_CONVOLUTION
    for kind, words in _JAX_KINDS[:3]:
        if any(w in name for w in words):
            return kind
    # JAX's scopes are the layers' names, not the ops' (TensorFlow's `…/batchnorm/mul`): a
    # normalization layer by Keras' names for them, or Keras applications' `…_BN`.
    if any(w in c.lower() for c in scopes for w in _NORM_SCOPES) or any(
            c.lower().endswith("_bn") for c in scopes):
        return OpKind.NORMALIZATION
    for kind, words in _JAX_KINDS[3:]:
        if any(w in name for w in words):
            return kind
    return OpKind.ELEMENTWISE if name else OpKind.OTHER


def where_jax(op: str, names: Names = NO_NAMES) -> Where:
    """(layer, pass, op kind) of an XLA instruction whose op JAX named `op` (with
    `hlo_names`' marks)."""
    grouped, weights = JAX_GROUPED in op, JAX_WEIGHTS in op
    op = op.replace(JAX_GROUPED, "").replace(JAX_WEIGHTS, "")
    parts = [p for p in op.split("/") if p]
    if parts and parts[0].startswith(JAX_PREFIX):
        parts = parts[1:]  # the jitted step itself
    primitive = parts[-1] if parts else ""
    scopes: list[str] = []
    gradient = False
    for part in parts[:-1]:
        wrappers, inner = _unwrap(part)
        gradient = gradient or "transpose" in wrappers
        if inner:
            scopes.append(inner)
    kind = jax_op_kind(_unwrap(primitive)[1], grouped, scopes)
    optimizers = OPTIMIZER_SCOPES | {_bare(names.optimizer)} - {""}
    if scopes and _bare(scopes[0]) in optimizers:
        return Where(OPTIMIZER_LAYER, Pass.OPTIMIZER, kind)
    pass_ = (Pass.WEIGHT_GRADIENT if weights else Pass.INPUT_GRADIENT) if gradient \
        else Pass.FORWARD
    if scopes and _bare(scopes[0]) in LOSS_SCOPES:
        return Where(LOSS_LAYER, pass_, kind)
    # JAX's scopes are the layers' own names (no `_N` a graph's reuse adds): matched exactly,
    # past the models' scopes; without the model's names, the first scope.
    known = names.layers or frozenset(scopes[:1])
    layer = next((c for c in scopes if c not in names.models and c in known), None)
    if layer is None:
        return Where(FRAMEWORK_LAYER, pass_ if gradient else Pass.OTHER, kind)
    return Where(layer, pass_, kind)


def where_hlo(instruction: str, op_name: str | None, names: Names = NO_NAMES) -> Where:
    """(layer, pass, op kind) of an XLA instruction that came from TensorFlow op `op_name`, or
    from a JAX primitive whose trace path it is (None when the dump says nothing of it): the
    op's, its kind from the instruction's name where the op's own says nothing."""
    if not op_name:
        return Where(FRAMEWORK_LAYER, Pass.OTHER, hlo_op_kind(instruction))
    w = where_jax(op_name, names) if is_jax_op(op_name) else where_tf(op_name, names)
    if w.op_kind is OpKind.OTHER:
        return Where(w.layer, w.pass_, hlo_op_kind(instruction))
    return w
