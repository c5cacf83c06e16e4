"""Floating-point operations and memory traffic of one training step, counted from the shapes.

Method
------
Each layer is counted per sample from its input and output shapes (what Keras knows once the
model is built, without running it), then multiplied by the batch size; the optimizer is counted
once per step. Conventions:

- A multiply-add is 2 FLOPs. An add, multiply, compare/max, divide, square root, exp or log is
  1 FLOP each.
- Conv2D (stride 1, any padding, shapes as Keras built them): forward 2·K·K·Cin·Cout·Hout·Wout,
  plus 1 per output element for the bias and 1 for ReLU. Backward: the gradient with respect to
  the weights costs the same multiply-adds as the forward (2·K·K·Cin·Cout·Hout·Wout, summed over
  the batch), and so does the gradient with respect to the input (a transposed convolution);
  plus 1 per output element for the bias gradient and 1 for ReLU's mask. The *first* layer's
  input gradient is not counted: its input is data, nothing needs that gradient, and both
  TensorFlow's graph pruning and XLA drop it. So backward = 2× forward's multiply-adds for every
  layer but the first, where it is 1×.
- Dense: the same, with K·K·Cin·Hout·Wout replaced by the input width (2·in·out forward,
  2·in·out each for the weight and input gradients).
- MaxPooling2D (P×P): P·P−1 comparisons per output element forward, and the same again
  backward (TensorFlow's MaxPoolGrad finds the maximum again to route the gradient).
- Flatten: 0 (a reshape).
- Activations per element, forward / backward: relu 1/1, sigmoid 4/3 (exp, add, divide,
  negate / s·(1−s)·g), softmax 5/4 per class, linear 0/0.
- The loss per output element, forward / backward: 8 / 4 (clip, logs, products; Keras'
  binary or sparse categorical cross-entropy, averaged over the batch).
- The optimizer (Adam, Keras 3) per parameter per step: 12 (m: 3, v: 4, the update: 5), not
  multiplied by the batch. The accuracy metric, the input pipeline (rescaling, augmentation:
  they run in tf.data, outside the model) and the first-layer input gradient are not counted.

Everything but the convolutions' and dense layers' multiply-adds is well under 1% of the total
for this CNN, so the conventions above change the count by less than that.

Memory traffic (for the roofline's arithmetic intensity) is an *estimate*, float32 = 4 bytes:
the compulsory traffic if each layer's input, output and weights cross main memory exactly once
per pass. Forward: read the input, write the output, read the weights. Backward: read the output
gradient, the saved input and the saved output (the ReLU mask), write the input gradient (not
for the first layer), read the weights, write the weight gradients. Adam: read the variable, its
gradient, m and v; write the variable, m and v. Caches can hold the small tensors of the dense
tail (so real traffic can be lower there) and unfused element-wise ops add traffic (so it can be
higher without XLA); the big convolution activations, hundreds of MB at 150 px and batch 64, do
cross memory.

How other counters differ (from their documented conventions; not cross-checked by a test
here): TensorFlow's `tf.compat.v1.profiler` with `float_operation()` sums the ops' registered
statistics, which count a Conv2D as 2·K·K·Cin·Cout·Hout·Wout as here, but most gradient ops
(Conv2DBackpropFilter/Input), pooling and many element-wise ops register none, so on a training
step it reports little more than the forward multiply-adds. XLA's cost analysis
(`jit_fn.experimental_get_compiler_ir(...)` / `compiled.cost_analysis()`) counts the
multiply-adds of forward and both gradients like this module, plus every element-wise op left
after fusion at its own per-element cost, so it should land close to this count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from math import prod
from typing import Any

from xlagui.core.protocol.config import check_image_size
from xlagui.core.xla.hlo import parse_computations

BYTES_PER_FLOAT = 4
ACTIVATION_FLOPS: dict[str, tuple[int, int]] = {  # per element: (forward, backward)
    "linear": (0, 0),
    "relu": (1, 1),
    "sigmoid": (4, 3),
    "softmax": (5, 4),
}
LOSS_FLOPS = (8, 4)  # per output element: (forward, backward)
ADAM_FLOPS_PER_PARAMETER = 12
ADAM_FLOATS_MOVED_PER_PARAMETER = 7  # read var, grad, m, v; write var, m, v


@dataclass(frozen=True)
class LayerShape:
    """What counting needs of one layer: shapes per sample (no batch dimension)."""

    name: str
    kind: str  # "conv2d", "maxpool2d", "flatten", "dense"
    input_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    window: tuple[int, int] = (1, 1)  # the kernel of a convolution, the pool of a pooling
    activation: str = "linear"
    params: int = 0


@dataclass(frozen=True)
class LayerCount:
    """One layer's FLOPs per sample and estimated bytes moved per step (see the module)."""

    name: str
    kind: str
    output_shape: tuple[int, ...]
    params: int
    forward: int  # FLOPs per sample
    backward: int  # FLOPs per sample
    forward_bytes_per_sample: int
    backward_bytes_per_sample: int
    weight_bytes_per_step: int  # weights read forward and backward, weight gradients written

    @property
    def train(self) -> int:
        return self.forward + self.backward


@dataclass(frozen=True)
class ModelCount:
    layers: tuple[LayerCount, ...]
    outputs: int  # the head's width, for the loss
    params: int

    @property
    def forward_per_sample(self) -> int:
        """Inference: the layers' forward FLOPs per image (what validation costs)."""
        return sum(layer.forward for layer in self.layers)

    @property
    def loss_per_sample(self) -> int:
        return self.outputs * sum(LOSS_FLOPS)

    @property
    def train_per_sample(self) -> int:
        """Forward, loss and backward per image (the optimizer is per step, not per image)."""
        return sum(layer.train for layer in self.layers) + self.loss_per_sample

    @property
    def optimizer_per_step(self) -> int:
        return self.params * ADAM_FLOPS_PER_PARAMETER

    def train_per_step(self, batch_size: int) -> int:
        """One training step on a full batch: what the step time is divided into."""
        return batch_size * self.train_per_sample + self.optimizer_per_step

    def bytes_per_step(self, batch_size: int) -> int:
        """Estimated main-memory traffic of one training step (see the module docstring)."""
        per_sample = sum(
            layer.forward_bytes_per_sample + layer.backward_bytes_per_sample
            for layer in self.layers
        )
        weights = sum(layer.weight_bytes_per_step for layer in self.layers)
        adam = self.params * ADAM_FLOATS_MOVED_PER_PARAMETER * BYTES_PER_FLOAT
        return batch_size * per_sample + weights + adam

    def intensity(self, batch_size: int) -> float:
        """Estimated arithmetic intensity of a training step, FLOPs per byte."""
        return self.train_per_step(batch_size) / self.bytes_per_step(batch_size)

    def largest(self, n: int = 2) -> list[LayerCount]:
        """The `n` layers with the most training FLOPs, largest first."""
        return sorted(self.layers, key=lambda layer: layer.train, reverse=True)[:n]


def count_layer(shape: LayerShape, *, first: bool) -> LayerCount:
    """FLOPs and traffic of one layer (`first`: its input gradient is not needed)."""
    out = prod(shape.output_shape)
    inp = prod(shape.input_shape)
    act_f, act_b = ACTIVATION_FLOPS.get(shape.activation, (None, None))
    if act_f is None or act_b is None:
        raise ValueError(f"layer {shape.name}: cannot count activation {shape.activation!r}")
    if shape.kind in ("conv2d", "dense"):
        if shape.kind == "conv2d":
            kh, kw = shape.window
            cin, cout = shape.input_shape[-1], shape.output_shape[-1]
            macs = kh * kw * cin * cout * prod(shape.output_shape[:-1])
        else:
            macs = shape.input_shape[-1] * shape.output_shape[-1]
        forward = 2 * macs + out + act_f * out  # multiply-adds, bias, activation
        grads = 1 if first else 2  # weight gradient, and the input gradient but for layer 1
        backward = grads * 2 * macs + out + act_b * out  # ... bias gradient, activation mask
        fwd_floats = inp + out
        bwd_floats = out + inp + out + (0 if first else inp)
        weight_floats = 3 * shape.params  # read forward, read backward, write the gradients
    elif shape.kind == "maxpool2d":
        ph, pw = shape.window
        forward = (ph * pw - 1) * out
        backward = forward
        fwd_floats = inp + out
        bwd_floats = out + inp + (0 if first else inp)
        weight_floats = 0
    elif shape.kind == "flatten":
        forward = backward = 0
        fwd_floats = bwd_floats = weight_floats = 0  # a reshape moves nothing
    else:
        raise ValueError(f"layer {shape.name}: cannot count a {shape.kind} layer")
    return LayerCount(
        name=shape.name,
        kind=shape.kind,
        output_shape=shape.output_shape,
        params=shape.params,
        forward=forward,
        backward=backward,
        forward_bytes_per_sample=fwd_floats * BYTES_PER_FLOAT,
        backward_bytes_per_sample=bwd_floats * BYTES_PER_FLOAT,
        weight_bytes_per_step=weight_floats * BYTES_PER_FLOAT,
    )


def count_model(shapes: Sequence[LayerShape]) -> ModelCount:
    layers = tuple(count_layer(s, first=(i == 0)) for i, s in enumerate(shapes))
    outputs = prod(shapes[-1].output_shape) if shapes else 0
    return ModelCount(layers=layers, outputs=outputs, params=sum(s.params for s in shapes))


def article_cnn_shapes(image_size: int, num_classes: int) -> list[LayerShape]:
    """The article's CNN (`xlagui.core.model.cnn.build_model`) as shapes, worked out from the
    architecture without Keras: what the GUI process uses (it never loads TensorFlow).
    `shapes_from_keras(build_model(...))` gives the same list (a TensorFlow test checks it)."""
    s = check_image_size(image_size)
    shapes: list[LayerShape] = []
    h, c = s, 3
    names = iter(("conv2d", "max_pooling2d", "conv2d_1", "max_pooling2d_1", "conv2d_2",
                  "max_pooling2d_2"))
    for filters in (64, 32, 16):
        conv_h = h - 4
        shapes.append(LayerShape(next(names), "conv2d", (h, h, c), (conv_h, conv_h, filters),
                                 (5, 5), "relu", 5 * 5 * c * filters + filters))
        pool_h = conv_h // 2
        shapes.append(LayerShape(next(names), "maxpool2d", (conv_h, conv_h, filters),
                                 (pool_h, pool_h, filters), (2, 2)))
        h, c = pool_h, filters
    flat = h * h * c
    shapes.append(LayerShape("flatten", "flatten", (h, h, c), (flat,)))
    outputs = 1 if num_classes == 2 else num_classes
    head = "sigmoid" if num_classes == 2 else "softmax"
    width = flat
    for name, units, act in (("dense", 126, "relu"), ("dense_1", 52, "relu"),
                             ("head", outputs, head)):
        shapes.append(LayerShape(name, "dense", (width,), (units,), activation=act,
                                 params=width * units + units))
        width = units
    return shapes


def shapes_from_keras(model: Any) -> list[LayerShape]:
    """The layer shapes of a built Keras model, read from the layers (nothing is run).

    Raises ValueError for a layer kind the counter does not know, rather than guess."""
    kinds = {"Conv2D": "conv2d", "MaxPooling2D": "maxpool2d", "Flatten": "flatten",
             "Dense": "dense"}
    shapes = []
    for layer in model.layers:
        cls = type(layer).__name__
        kind = kinds.get(cls)
        if kind is None:
            raise ValueError(f"layer {layer.name}: cannot count a {cls} layer")
        if kind == "conv2d" and tuple(getattr(layer, "strides", (1, 1))) != (1, 1):
            raise ValueError(f"layer {layer.name}: only stride-1 convolutions are counted")
        window: tuple[int, int] = (1, 1)
        if kind == "conv2d":
            window = tuple(layer.kernel_size)
        elif kind == "maxpool2d":
            window = tuple(layer.pool_size)
            if tuple(layer.strides) != window:
                raise ValueError(f"layer {layer.name}: only non-overlapping pooling is counted")
        activation = getattr(getattr(layer, "activation", None), "__name__", "linear")
        shapes.append(
            LayerShape(
                name=layer.name,
                kind=kind,
                input_shape=tuple(int(d) for d in layer.input.shape[1:]),
                output_shape=tuple(int(d) for d in layer.output.shape[1:]),
                window=window,
                activation=activation,
                params=int(layer.count_params()),
            )
        )
    return shapes


def article_cnn_count(image_size: int, num_classes: int) -> ModelCount:
    return count_model(article_cnn_shapes(image_size, num_classes))



# --- Any model: the FLOPs of the compiled step, counted from XLA's HLO ----------------------
#
# TensorFlow 2.21 has no Python cost analysis of a `tf.function` (`experimental_get_compiler_ir`
# gives the HLO text; no "flops" stage), so the HLO that XLA would compile is read here with the
# same conventions as XLA's `HloCostAnalysis` and the layer count above: a multiply-add is 2
# FLOPs; a convolution counts only the (output, kernel) positions that land inside its input (the
# padding of a gradient convolution is not work), a dot the product of its output and its
# contracting dimensions; an element-wise op, a transcendental or a compare 1 per output
# element; a reduce 1 per input element; a reduce-window (pooling) and select-and-scatter
# (its gradient) one per element and window position. Shape ops (reshape, broadcast, transpose,
# slice, convert, copy, concatenate...) are 0. Only the entry computation (and what it calls
# with `call`) is counted: a reduce's `to_apply` body is its per-element op, counted above.
# And only what the result needs, as XLA's dead-code elimination leaves it: the HLO TensorFlow
# hands over still holds the first layer's input gradient (nothing reads it; at 48 px it was
# 12% of the CNN's count), which XLA drops before compiling.

_HLO_ELEMENTWISE = frozenset(
    "abs add atan2 cbrt ceil clamp compare cosine divide erf exponential exponential-minus-one "
    "floor log log-plus-one logistic maximum minimum multiply negate power remainder "
    "round-nearest-afz round-nearest-even rsqrt select sign sine sqrt subtract tan tanh".split()
)
_DIMS_RE = re.compile(r"\[([\d,]*)\]")
_WINDOW_RE = re.compile(r"\bwindow=\{([^}]*)\}")
_LABELS_RE = re.compile(r"\bdim_labels=([^\s,]+)")
_CONTRACT_RE = re.compile(r"\blhs_contracting_dims=\{([\d,]*)\}")
_TO_APPLY_RE = re.compile(r"\bto_apply=%?([^\s,}]+)")


def _dims(shape: str) -> tuple[int, ...]:
    m = _DIMS_RE.search(shape)
    return tuple(int(d) for d in m.group(1).split(",") if d) if m else ()


def _window(attrs: str) -> dict[str, list[str]]:
    m = _WINDOW_RE.search(attrs)
    out: dict[str, list[str]] = {}
    for part in (m.group(1).split() if m else []):
        key, _, value = part.partition("=")
        out[key] = value.split("x")
    return out


def _valid_pairs(out: int, kernel: int, size: int, stride: int, pad_lo: int, lhs_dilate: int,
                 rhs_dilate: int) -> int:
    """(output position, kernel position) pairs of one spatial dimension that read the input."""
    count = 0
    for k in range(kernel):
        for o in range(out):
            pos = o * stride + k * rhs_dilate - pad_lo
            if pos >= 0 and pos % lhs_dilate == 0 and pos // lhs_dilate < size:
                count += 1
    return count


def _convolution_macs(out_shape: tuple[int, ...], lhs: tuple[int, ...], rhs: tuple[int, ...],
                      attrs: str) -> int:
    labels = _LABELS_RE.search(attrs)
    if labels is None:
        raise ValueError("a convolution without dim_labels")
    lhs_l, rest = labels.group(1).split("_", 1)
    rhs_l, out_l = rest.split("->")
    window = _window(attrs)
    spatial = [c for c in out_l if c.isdigit()]
    macs = out_shape[out_l.index("b")] * out_shape[out_l.index("f")] * rhs[rhs_l.index("i")]
    for n, d in enumerate(spatial):
        def w(key: str, default: int, n: int = n) -> int:
            values = window.get(key)
            return int(values[n].split("_")[0]) if values else default

        macs *= _valid_pairs(
            out_shape[out_l.index(d)], rhs[rhs_l.index(d)], lhs[lhs_l.index(d)],
            w("stride", 1), w("pad", 0), w("lhs_dilate", 1), w("rhs_dilate", 1),
        )
    return macs


def _instruction_flops(ins: Any, shapes: dict[str, tuple[int, ...]]) -> int:
    out = _dims(ins.shape)
    n_out = prod(out)
    op = ins.opcode
    if op == "convolution":
        lhs, rhs = (shapes[name] for name in ins.operands[:2])
        return 2 * _convolution_macs(out, lhs, rhs, ins.attrs)
    if op == "dot":
        lhs = shapes[ins.operands[0]]
        m = _CONTRACT_RE.search(ins.attrs)
        contracted = [int(d) for d in m.group(1).split(",") if d] if m else []
        return 2 * n_out * prod(lhs[d] for d in contracted)
    if op in _HLO_ELEMENTWISE:
        return n_out
    if op == "reduce":
        return prod(shapes[ins.operands[0]])
    if op == "reduce-window":
        return n_out * prod(int(s) for s in _window(ins.attrs).get("size", ["1"]))
    if op == "select-and-scatter":
        return prod(shapes[ins.operands[1]]) * prod(
            int(s) for s in _window(ins.attrs).get("size", ["1"])
        )
    return 0


def _live(instructions: list[Any]) -> list[Any]:
    """The instructions the computation's result depends on (XLA prints the root last)."""
    if not instructions:
        return []
    by_name = {i.name: i for i in instructions}
    live: set[str] = set()
    todo = [instructions[-1].name]
    while todo:
        name = todo.pop()
        if name in live or name not in by_name:
            continue
        live.add(name)
        todo.extend(by_name[name].operands)
    return [i for i in instructions if i.name in live]


def hlo_flops(text: str) -> int:
    """The FLOPs of one run of an HLO module (XLA's text, as `experimental_get_compiler_ir(...)
    (stage="hlo")` gives it), counted as the comment above says. ValueError if it cannot be."""
    _, computations = parse_computations(text)
    by_name = {c.name: c for c in computations}
    entry = next((c for c in computations if c.entry), None)
    if entry is None:
        raise ValueError("the HLO text has no ENTRY computation")
    shapes = {i.name: _dims(i.shape) for c in computations for i in c.instructions}
    total, todo, seen = 0, [entry], set()
    while todo:
        comp = todo.pop()
        if comp.name in seen:
            continue
        seen.add(comp.name)
        for ins in _live(comp.instructions):
            if ins.opcode == "call":
                target = _TO_APPLY_RE.search(ins.attrs)
                if target and target.group(1) in by_name:
                    todo.append(by_name[target.group(1)])
                continue
            try:
                total += _instruction_flops(ins, shapes)
            except (KeyError, IndexError) as exc:
                raise ValueError(f"cannot count {ins.opcode} {ins.name}: {exc}") from None
    return total
