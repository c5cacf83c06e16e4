"""One compilation of one of Keras' step functions, as a run reports it (`CompiledEvent`) and a
comparison keeps it (`RunEntry.compilations`, `runs[*].compilations` in `comparison.json`).

A worker finds them itself (`xlagui.core.worker.compiles`): the first step of each function
with each new input signature that traced or (XLA on) met a new concrete shape. The reason is
data (`CompileReason`); its words are `xlagui.present.compiles`'.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.jsoncodec import JSONObject, decode, plain_object


class StepFunction(StrEnum):
    """Which of Keras' step functions compiled (`model.train_function`, `test_function`,
    `predict_function`)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "predict"


class CompileReasonKind(StrEnum):
    """Why a function compiled (again)."""

    FIRST_CALL = "first_call"  # its first step
    NEW_SHAPE = "new_shape"  # an input's shape differs from the one compiled before
    NEW_DTYPE = "new_dtype"  # an input's dtype differs
    OTHER = "other"  # it traced again with the same inputs, or more than one dimension moved


@dataclass(frozen=True)
class CompileReason:
    """Why: the kind, and for a new shape the dimension that moved, what it was and is now.
    `partial_batch`: the new shape is a last partial batch (`now` is then its size, e.g. 8)."""

    kind: CompileReasonKind = CompileReasonKind.OTHER
    dimension: int | None = None
    was: int | None = None
    now: int | None = None
    partial_batch: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", CompileReasonKind(self.kind))


@dataclass(frozen=True)
class Compilation:
    """One compilation: the function, its inputs as "float32[64,150,150,3]" strings, what it
    cost (the step's time beyond a steady step of its size, seconds) and why."""

    function: StepFunction
    shapes: tuple[str, ...] = ()
    seconds: float = 0.0
    reason: CompileReason = field(default_factory=CompileReason)

    def __post_init__(self) -> None:
        object.__setattr__(self, "function", StepFunction(self.function))

    def to_dict(self) -> JSONObject:
        return plain_object(self)

    @classmethod
    def from_dict(cls, data: object) -> Compilation:
        return decode(cls, data, "compilation")


def shape_text(dtype: str, dims: tuple[int | None, ...]) -> str:
    """One input as the JSON spells it: "float32[64,150,150,3]" ("?" for an unknown size)."""
    return f"{dtype}[{','.join('?' if d is None else str(d) for d in dims)}]"
