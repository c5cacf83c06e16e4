"""Why a comparison's figures are what they are, as it crosses from an inspecting worker to the
parent (`events.ExplainedEvent`) and into `comparison.json`: the closed sets an attribution row
is keyed by (their values are the JSON strings of `explain`; the words for people are in
`xlagui/present/`), one arm's profile (`ArmProfile`), and one side's parity steps
(`ParityTrace`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.jsoncodec import JSONObject, decode, plain_object


class Pass(StrEnum):
    """Which part of a training step a kernel served."""

    FORWARD = "forward"
    INPUT_GRADIENT = "input_gradient"  # the gradient with respect to a layer's input
    WEIGHT_GRADIENT = "weight_gradient"  # the gradient with respect to its weights
    OPTIMIZER = "optimizer"
    OTHER = "other"


class OpKind(StrEnum):
    """What kind of computation a kernel is."""

    CONVOLUTION = "convolution"
    DEPTHWISE_CONVOLUTION = "depthwise_convolution"
    MATMUL = "matmul"
    POOLING = "pooling"
    NORMALIZATION = "normalization"
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    DATA_MOVEMENT = "data_movement"
    SCATTER_GATHER = "scatter_gather"
    OTHER = "other"


# The layer of the work no Keras layer owns, and of the step's time no event covered.
OPTIMIZER_LAYER = "optimizer"
LOSS_LAYER = "loss"
FRAMEWORK_LAYER = "framework"
NOT_TRACED = "not traced"


@dataclass(frozen=True)
class ProfileRow:
    layer: str
    pass_: Pass
    op_kind: OpKind
    seconds_per_step: float

    @property
    def key(self) -> tuple[str, Pass, OpKind]:
        return (self.layer, self.pass_, self.op_kind)

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "pass": str(self.pass_), "op_kind": str(self.op_kind),
                "seconds_per_step": self.seconds_per_step}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProfileRow:
        return cls(str(d["layer"]), Pass(d["pass"]), OpKind(d["op_kind"]),
                   float(d["seconds_per_step"]))


@dataclass(frozen=True)
class ArmProfile:
    """One arm's step: its wall time, the share of it some event covered, and the rows
    (largest first; the `not traced` row last)."""

    step_seconds: float
    coverage: float
    rows: tuple[ProfileRow, ...]

    def seconds(self, key: tuple[str, Pass, OpKind]) -> float:
        return sum(r.seconds_per_step for r in self.rows if r.key == key)

    def to_dict(self) -> dict[str, Any]:
        return {"step_seconds": self.step_seconds, "coverage": self.coverage,
                "rows": [r.to_dict() for r in self.rows]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ArmProfile:
        return cls(float(d["step_seconds"]), float(d["coverage"]),
                   tuple(ProfileRow.from_dict(r) for r in d.get("rows", ())))


@dataclass(frozen=True)
class ParityTrace:
    """One side's first steps: the loss of each step (before its update), the model's outputs
    on one fixed batch after them (flattened), a digest of the initial weights before any
    nudge (two traces compared must start from the same weights), and whether this side's
    initial weights were nudged (the rounding reference)."""

    losses: tuple[float, ...]
    outputs: tuple[float, ...]
    weights_digest: str = ""
    nudged: bool = False

    def to_dict(self) -> JSONObject:
        return plain_object(self)  # NaN and infinities become null

    @classmethod
    def from_json_value(cls, data: object) -> ParityTrace:  # `jsoncodec.decode`'s hook
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> ParityTrace:
        trace = decode(_TraceJSON, data, "parity trace")
        return cls(floats_or_nan(trace.losses), floats_or_nan(trace.outputs), trace.weights_digest,
                   trace.nudged)


@dataclass(frozen=True)
class _TraceJSON:
    losses: tuple[float | None, ...]
    outputs: tuple[float | None, ...]
    weights_digest: str = ""
    nudged: bool = False


def floats_or_nan(values: Sequence[float | None]) -> tuple[float, ...]:
    return tuple(math.nan if v is None else float(v) for v in values)
