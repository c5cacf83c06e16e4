"""Do the numbers stay the same? An arm's first training steps against the baseline's, judged
against what rounding alone does to this model (`judge`).

The evidence is deterministic: every side builds the model from the same seed and trains the
same first N batches in the same order, with no augmentation (`xlagui.core.worker.parity`). Each
gives a `ParityTrace`: the loss per step and the outputs on one fixed batch after the N steps.
The reference is the baseline again, its initial weights nudged by one float32 ulp: how far that
drifts from the baseline is what float32 rounding alone does over N steps of this model
(training amplifies a difference; the reference says by how much, step by step).

The kinds (`ParityKind`):
- `same`: at every step k the arm stays within `SAME_MARGIN` times the reference's largest
  drift up to step 2k (`envelope`: chaos reaches a size sooner or later from one realisation to
  the next; never less than `DRIFT_FLOOR`), and its outputs within `SAME_MARGIN` times the
  reference's;
- `precision_drift`: a bf16 or fp16 arm beyond that, but within the same bound scaled by how
  much coarser its precision rounds than float32 (the ratio of unit roundoffs: 2^16 for
  bfloat16, 2^13 for float16): first-order rounding error grows with the unit roundoff;
- `diverges`: beyond it, or a loss or output that is not finite where the baseline's is.

The margin is measured, not guessed (BENCHMARKS.md, "Parity"; `bench/bench_parity.py`): on the
demo set at 48 px, 20 steps, batch 16, XLA's arms stayed at 0.09 (the CNN: `jit` and
`autocluster`, every loss within one ulp of the baseline's until the reference itself drifts)
and 1.3-2.4 times the reference's drift (the Mixer); the perturbing test lever (the loss weighed
by 1 + 2^-10) at 1,000-3,700 times; bf16 at 14,000-31,000. `SAME_MARGIN` is 16: above every
float32 arm measured with room for a busier model, and it still catches a change of the loss
of 2^-16 from the first step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.jsoncodec import JSONObject, decode, plain_object
from xlagui.core.protocol.precision import Precision

# The unit roundoff of each precision's compute dtype (half the gap between 1 and the next
# number): float32 24 bits of significand, bfloat16 8, float16 11.
UNIT_ROUNDOFF = {
    Precision.FLOAT32: 2.0**-24,
    Precision.BF16: 2.0**-8,
    Precision.FP16: 2.0**-11,
}
# How far above the reference's drift a float32 arm may stay and still compute "the same":
# measured (the module's docstring).
SAME_MARGIN = 16.0
# The least drift the reference is taken to have: a step where the nudge changed nothing yet
# (the first loss is often bit-identical) still allows a few float32 roundings.
DRIFT_FLOOR = 16 * UNIT_ROUNDOFF[Precision.FLOAT32]
# How far ahead of the reference's drift an arm may run: at step k, the reference's largest
# difference up to step LEAD × k (`envelope`; measured, the module's docstring).
LEAD = 2
# Parity's default number of steps.
PARITY_STEPS = 20


class ParityKind(StrEnum):
    """What an arm's numbers do against the baseline's (values are the JSON's strings)."""

    SAME = "same"
    PRECISION_DRIFT = "precision_drift"
    DIVERGES = "diverges"


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
    def from_dict(cls, data: object) -> ParityTrace:
        trace = decode(_TraceJSON, data, "parity trace")
        return cls(_floats(trace.losses), _floats(trace.outputs), trace.weights_digest,
                   trace.nudged)


@dataclass(frozen=True)
class _TraceJSON:
    losses: tuple[float | None, ...]
    outputs: tuple[float | None, ...]
    weights_digest: str = ""
    nudged: bool = False


def _floats(values: Sequence[float | None]) -> tuple[float, ...]:
    return tuple(math.nan if v is None else float(v) for v in values)


@dataclass(frozen=True)
class Parity:
    """An arm's parity with the baseline: over `steps` steps, the largest relative difference
    of the loss and of the outputs on the fixed batch, and its kind. The reference's own figures
    (the nudged baseline against the baseline) ride along, for the words that compare them.
    A difference that is not finite (a NaN loss on one side only) is `math.inf`, null in JSON."""

    steps: int
    max_rel_loss_diff: float
    max_rel_output_diff: float
    kind: ParityKind
    reference_loss_diff: float | None = None
    reference_output_diff: float | None = None

    def to_dict(self) -> JSONObject:
        return plain_object(self)

    @classmethod
    def from_dict(cls, data: object) -> Parity:
        read = decode(_ParityJSON, data, "parity")
        return cls(read.steps, _inf(read.max_rel_loss_diff), _inf(read.max_rel_output_diff),
                   read.kind, read.reference_loss_diff, read.reference_output_diff)


@dataclass(frozen=True)
class _ParityJSON:
    steps: int
    max_rel_loss_diff: float | None
    max_rel_output_diff: float | None
    kind: ParityKind
    reference_loss_diff: float | None = None
    reference_output_diff: float | None = None


def _inf(value: float | None) -> float:
    return math.inf if value is None else value


def relative_difference(x: float, y: float) -> float:
    """|x − y| relative to the larger of the two; 0 for two equal values (both zero, or both
    NaN: a baseline that fails alike is no difference), inf when only one is not finite."""
    if x == y or (math.isnan(x) and math.isnan(y)):
        return 0.0
    if not (math.isfinite(x) and math.isfinite(y)):
        return math.inf
    return abs(x - y) / max(abs(x), abs(y))


def output_difference(outputs: Sequence[float], baseline: Sequence[float]) -> float:
    """The largest difference of two sides' outputs relative to the baseline's largest output
    (a probability near 0 would make an element's own relative difference meaningless)."""
    if len(outputs) != len(baseline):
        raise ValueError(f"{len(outputs)} outputs against the baseline's {len(baseline)}")
    worst = max((_absolute_difference(a, b) for a, b in zip(outputs, baseline, strict=True)),
                default=0.0)
    if worst == 0.0 or not math.isfinite(worst):
        return worst
    scale = max((abs(b) for b in baseline if math.isfinite(b)), default=0.0)
    return worst / scale if scale > 0 else math.inf


def _absolute_difference(x: float, y: float) -> float:
    if x == y or (math.isnan(x) and math.isnan(y)):
        return 0.0
    return abs(x - y) if math.isfinite(x) and math.isfinite(y) else math.inf


def loss_differences(side: ParityTrace, baseline: ParityTrace, steps: int) -> list[float]:
    """Each step's relative loss difference, the first `steps` steps."""
    return [relative_difference(a, b)
            for a, b in zip(side.losses[:steps], baseline.losses[:steps], strict=True)]


def _ratio(diff: float, allowed: float) -> float:
    return 0.0 if diff == 0.0 else diff / allowed


def drift_ratio(arm: ParityTrace, baseline: ParityTrace, reference: ParityTrace,
                steps: int) -> float:
    """How many times the reference's drift the arm drifts, at its worst: each step's loss
    difference against the reference's largest up to `LEAD` times that step (`envelope`), and
    the outputs' against the reference's (each floored at `DRIFT_FLOOR`)."""
    allowed = envelope(loss_differences(reference, baseline, steps))
    worst = max(_ratio(diff, bound) for diff, bound in zip(
        loss_differences(arm, baseline, steps), allowed, strict=True))
    ref_out = output_difference(reference.outputs, baseline.outputs)
    out_allowed = max(DRIFT_FLOOR, ref_out if math.isfinite(ref_out) else DRIFT_FLOOR)
    return max(worst, _ratio(output_difference(arm.outputs, baseline.outputs), out_allowed))


def envelope(reference: Sequence[float]) -> list[float]:
    """What the reference allows at each step (1-based k): its largest difference up to step
    LEAD × k (the last step at most), never less than `DRIFT_FLOOR`. A chaotic drift reaches a
    given size some steps sooner or later from one realisation to the next: an arm that
    rounds differently at every step may run ahead of the one nudge of the reference."""
    finite = [d if math.isfinite(d) else 0.0 for d in reference]
    out = []
    for k in range(1, len(finite) + 1):
        out.append(max([DRIFT_FLOOR, *finite[:min(len(finite), LEAD * k)]]))
    return out


def judge(baseline: ParityTrace, arm: ParityTrace, reference: ParityTrace,
          precision: Precision = Precision.FLOAT32) -> Parity:
    """The arm's `Parity` against the baseline, its thresholds from `reference` (the baseline
    with its initial weights nudged by one ulp); `precision`: the arm's. Raises `ValueError`
    for traces that cannot be compared (no steps, outputs of another shape, other initial
    weights: a set-up that differs is not a finding about the arm)."""
    steps = min(len(baseline.losses), len(arm.losses), len(reference.losses))
    if steps == 0:
        raise ValueError("parity needs at least one step on every side")
    digests = {t.weights_digest for t in (baseline, arm, reference) if t.weights_digest}
    if len(digests) > 1:
        raise ValueError("the sides did not start from the same initial weights")
    loss_diff = max(loss_differences(arm, baseline, steps))
    out_diff = output_difference(arm.outputs, baseline.outputs)
    ratio = drift_ratio(arm, baseline, reference, steps)
    coarser = UNIT_ROUNDOFF[precision] / UNIT_ROUNDOFF[Precision.FLOAT32]
    if not math.isfinite(ratio):
        kind = ParityKind.DIVERGES
    elif ratio <= SAME_MARGIN:
        kind = ParityKind.SAME
    elif precision is not Precision.FLOAT32 and ratio <= SAME_MARGIN * coarser:
        kind = ParityKind.PRECISION_DRIFT
    else:
        kind = ParityKind.DIVERGES
    return Parity(
        steps=steps,
        max_rel_loss_diff=loss_diff,
        max_rel_output_diff=out_diff,
        kind=kind,
        reference_loss_diff=max(loss_differences(reference, baseline, steps)),
        reference_output_diff=output_difference(reference.outputs, baseline.outputs),
    )

