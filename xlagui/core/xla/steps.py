"""What a compiled module is to the training: the training step, the evaluation step, the
prediction step, or a cluster XLA chose (auto-clustering), read from the module's name and the
TensorFlow ops its heavy operations and fusions came from.

Keras 3 gives the three steps one function name (`one_step_on_data`, compiled as
`a_inference_one_step_on_data_2829__.12`: "inference" is TensorFlow's word for any traced
function), so the name alone does not tell them apart: a step whose ops include gradients is the
training step; one without gradients that computes its metrics (`div_no_nan`, Keras' mean) is
the evaluation step."""

from __future__ import annotations

from enum import StrEnum

from xlagui.core.xla.hlo import ModuleReport


class StepKind(StrEnum):
    TRAIN = "train"
    EVALUATE = "evaluate"
    PREDICT = "predict"
    FORWARD = "forward"  # no gradients, no metrics seen: evaluation or prediction
    CLUSTER = "cluster"  # auto-clustering's cluster
    OTHER = "other"


# Names that say which step (tf.keras 2's functions, Keras 3's `*_step`).
_NAMED = (
    ("train_function", StepKind.TRAIN), ("train_step", StepKind.TRAIN),
    ("test_function", StepKind.EVALUATE), ("test_step", StepKind.EVALUATE),
    ("predict_function", StepKind.PREDICT), ("predict_step", StepKind.PREDICT),
)
# Keras 3's one name for every step.
_SHARED = ("one_step_on_data", "one_step_on_iterator", "multi_step_on_iterator")
_GRADIENT = ("gradient_tape/", "Backprop", "Grad/")
_METRIC = ("div_no_nan",)


def _op_names(m: ModuleReport) -> list[str]:
    return [h.op_name for h in m.heavy_ops] + [f.op_name for f in m.top_fusions]


def step_kind(m: ModuleReport) -> StepKind:
    """What `m` compiles, from its name and the TensorFlow ops it came from."""
    ops = _op_names(m)
    if any(g in op for op in ops for g in _GRADIENT):
        return StepKind.TRAIN
    for words, kind in _NAMED:
        if words in m.name:
            return kind
    if any(s in m.name for s in _SHARED):
        metric = any(op.split("/")[-1].startswith(_METRIC) for op in ops)
        return StepKind.EVALUATE if metric else StepKind.FORWARD
    if m.name.startswith("cluster_"):
        return StepKind.CLUSTER
    return StepKind.OTHER
