"""A comparison's "why" as issue 29's JSON has it, made by hand (no profiler, no TensorFlow):
MobileNetV2-like figures where XLA's depthwise convolutions' input gradients are the largest
difference, the baseline 97% covered and XLA 71%, the XLA run's partial validation batch
recompiling, jit the same as the baseline and bf16 drifting as its precision would.

`why_fields()` is the dict the lanes' code will write; `add_why(d)` puts it into a whole
`comparison.json` dict (the compilations into its runs); `write_comparison(folder)` writes a
comparison folder that History lists and reopens.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

from tests.helpers.reports import comparison_report


def _row(layer: str, pass_: str, kind: str, seconds: float, lowered: str = "") -> dict[str, Any]:
    row: dict[str, Any] = {"layer": layer, "pass": pass_, "op_kind": kind,
                           "seconds_per_step": seconds}
    if lowered:
        row["lowered_to"] = lowered
    return row


BASELINE_ROWS = [
    _row("block_1_depthwise", "input_gradient", "depthwise_convolution", 0.04),
    _row("block_1_depthwise", "forward", "depthwise_convolution", 0.03),
    _row("block_1_depthwise", "weight_gradient", "depthwise_convolution", 0.05),
    _row("block_2_depthwise", "input_gradient", "depthwise_convolution", 0.03),
    _row("block_2_depthwise", "forward", "depthwise_convolution", 0.02),
    _row("Conv1", "forward", "convolution", 0.06),
    _row("Conv1", "weight_gradient", "convolution", 0.08),
    _row("bn_Conv1", "forward", "normalization", 0.02),
    _row("optimizer", "optimizer", "elementwise", 0.05),
    _row("loss", "forward", "reduction", 0.004),
    _row("not traced", "other", "other", 0.013),
]
JIT_ROWS = [
    _row("block_1_depthwise", "input_gradient", "depthwise_convolution", 0.88,
         "base-dilated convolutions"),
    _row("block_1_depthwise", "forward", "depthwise_convolution", 0.60),
    _row("block_1_depthwise", "weight_gradient", "depthwise_convolution", 0.04),
    _row("block_2_depthwise", "input_gradient", "depthwise_convolution", 0.55,
         "base-dilated convolutions"),
    _row("block_2_depthwise", "forward", "depthwise_convolution", 0.30),
    _row("Conv1", "forward", "convolution", 0.05),
    _row("Conv1", "weight_gradient", "convolution", 0.07),
    _row("bn_Conv1", "forward", "normalization", 0.01),
    _row("optimizer", "optimizer", "elementwise", 0.02),
    _row("framework", "other", "data_movement", 0.03),
    _row("not traced", "other", "other", 0.725),
]
EXPLAIN: dict[str, Any] = {
    "arms": {
        "baseline": {"step_seconds": 0.42, "coverage": 0.97, "rows": BASELINE_ROWS},
        "jit": {"step_seconds": 2.5, "coverage": 0.71, "rows": JIT_ROWS},
    },
    "top_differences": [
        {"arm": "jit", "layer": "block_1_depthwise", "pass": "input_gradient",
         "op_kind": "depthwise_convolution", "baseline_seconds": 0.04, "arm_seconds": 0.88},
        {"arm": "jit", "layer": "block_1_depthwise", "pass": "forward",
         "op_kind": "depthwise_convolution", "baseline_seconds": 0.03, "arm_seconds": 0.60},
        {"arm": "jit", "layer": "block_2_depthwise", "pass": "input_gradient",
         "op_kind": "depthwise_convolution", "baseline_seconds": 0.03, "arm_seconds": 0.55},
    ],
}


def _first(seconds: float, function: str, shapes: list[str]) -> dict[str, Any]:
    return {"function": function, "shapes": shapes, "seconds": seconds,
            "reason": {"kind": "first_call", "dimension": None, "was": None, "now": None,
                       "partial_batch": False}}


TRAIN_SHAPES = ["float32[32,64,64,3]", "int32[32]"]
COMPILATIONS: dict[str, list[dict[str, Any]]] = {
    "01-baseline-r1": [_first(0.9, "train", TRAIN_SHAPES), _first(0.3, "eval", TRAIN_SHAPES)],
    "02-xla-r1": [
        _first(5.1, "train", TRAIN_SHAPES),
        _first(1.2, "eval", TRAIN_SHAPES),
        {"function": "eval", "shapes": ["float32[8,64,64,3]", "int32[8]"], "seconds": 1.1,
         "reason": {"kind": "new_shape", "dimension": 0, "was": 32, "now": 8,
                    "partial_batch": True}},
    ],
}


def _losses(start: float, wobble: float, n: int = 20) -> list[float]:
    return [start * math.exp(-0.08 * i) * (1 + wobble * math.sin(i)) for i in range(n)]


PARITY: dict[str, Any] = {
    "jit": {"steps": 20, "max_rel_loss_diff": 2.1e-6, "max_rel_output_diff": 3.4e-6,
            "kind": "same", "losses": _losses(0.7, 1e-6), "baseline_losses": _losses(0.7, 0),
            "reference_losses": _losses(0.7, 2e-6)},
    "bf16": {"steps": 20, "max_rel_loss_diff": 0.012, "max_rel_output_diff": 0.031,
             "kind": "precision_drift", "losses": _losses(0.7, 0.01),
             "baseline_losses": _losses(0.7, 0)},
}


def why_fields() -> dict[str, Any]:
    return {"explain": copy.deepcopy(EXPLAIN), "parity": copy.deepcopy(PARITY)}


def add_why(d: dict[str, Any]) -> dict[str, Any]:
    """`d` (a whole comparison.json dict) with the why: `explain`, `parity` and its training
    runs' `compilations`."""
    out = {**copy.deepcopy(d), **why_fields()}
    for run in out.get("runs", []):
        if run["run_id"] in COMPILATIONS:
            run["compilations"] = copy.deepcopy(COMPILATIONS[run["run_id"]])
    return out


def comparison_dict() -> dict[str, Any]:
    """A whole comparison (the baseline against XLA, with training runs) with its why."""
    return add_why(comparison_report(training=True).to_dict())


def write_comparison(folder: Path) -> Path:
    """A comparison folder with its why, as History lists it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "comparison.json").write_text(json.dumps(comparison_dict()), encoding="utf-8")
    return folder
