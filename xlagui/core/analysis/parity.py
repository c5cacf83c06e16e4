"""Do the numbers stay the same? An arm's first training steps against the baseline's, judged
against what rounding alone does to this model (`judge`).

The evidence is deterministic: every side builds the model from the same seed and trains the
same first N batches in the same order, with no augmentation (`xlagui.core.worker.parity`). Each
gives a `ParityTrace`: the loss per step and the outputs on one fixed batch after the N steps.
The reference is the baseline again, its initial weights nudged by one float32 ulp: how far that
drifts from the baseline is what float32 rounding alone does over N steps of this model
(training amplifies a difference; the reference says by how much).

The judge compares three figures with the references' (`DriftRatios`; `REFERENCES` nudged
runs, the largest drift of them, floored at `DRIFT_FLOOR`, 16 float32 ulps):
- the first step's loss, before any update: the sides differ only by the forward pass's
  rounding, which does not amplify: within `FIRST_STEP_MARGIN` (16) times;
- the largest loss difference over the N steps, and the outputs' difference after them: within
  `TRAINING_MARGIN` (32) times. Step by step would be too strict: on a chaotic model (the CNN,
  whose ReLUs switch on and off) a nudged run says how large the drift grows only to within a
  few times, and when it grows is luck;
and gives a kind (`ParityKind`):
- `same`: all three within their margins;
- `precision_drift`: a bf16 or fp16 arm beyond them, but within them scaled by how much coarser
  its precision rounds than float32 (the ratio of unit roundoffs: 2^16 for bfloat16, 2^13 for
  float16): first-order rounding error grows in proportion to the unit roundoff;
- `diverges`: beyond that, or a loss or output that is not finite where the baseline's is.

The margins are measured, not guessed (`bench/bench_parity.py`; BENCHMARKS.md, "Parity": the
demo set, 20 steps, batch 16; the CNN at 48 px, at 64 px with nine seeds and at 96 px, the Mixer
with three, MobileNetV2 once). XLA's arms (jit, autocluster): the first step within one ulp of
the loss (ratio 0.09 or 0; at most 1.1, MobileNetV2), so 16 leaves room and still catches a loss
off by 2^-16; over the steps they drifted 0.2-1.8 times as far as the references, their outputs
at most 2.4 times, so 32 is 13 times the worst. With one reference, jit on the CNN at 64 px
reached 11 and 12 times (seeds 1 and 9: that run's nudge was unluckily calm; jit's first
gradients differ from the baseline's by 1-2 times what a nudge makes them differ, with no sign
flipped: rounding): hence two. The perturbing test lever (the loss weighed by 1 + 2^-10): 1,000
times at the first step. bf16: 21 (CNN) and 900 (Mixer) times there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.jsoncodec import JSONObject, decode, plain_object
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.why import ParityTrace

# The unit roundoff of each precision's compute dtype (half the gap between 1 and the next
# number): float32 24 bits of significand, bfloat16 8, float16 11.
UNIT_ROUNDOFF = {
    Precision.FLOAT32: 2.0**-24,
    Precision.BF16: 2.0**-8,
    Precision.FP16: 2.0**-11,
}
# How far above the reference's drift a float32 arm may stay and still compute "the same"
# (measured: the module's docstring). The first step, before any update, differs only by the
# forward pass's rounding; the steps after it by training's amplified drift, whose size one
# nudged run gives only to within a few times (chaos: when a ReLU switches is a matter of luck).
FIRST_STEP_MARGIN = 16.0
TRAINING_MARGIN = 32.0
# The least drift the reference is taken to have: a step where the nudge changed nothing yet
# (the first loss is often bit-identical) still allows a few float32 roundings (16 ulps).
DRIFT_FLOOR = 16 * UNIT_ROUNDOFF[Precision.FLOAT32]
# How many nudged references the baseline's worker runs (each its own directions,
# `parity_steps(nudge_seed=...)`); the judge takes the largest drift of them: one run alone is
# sometimes unluckily calm (the CNN at 64 px, seed 9: 3.5e-4 where other seeds drift 2e-3 to
# 1e-2).
REFERENCES = 2
# Parity's default number of steps.
PARITY_STEPS = 20


class ParityKind(StrEnum):
    """What an arm's numbers do against the baseline's (values are the JSON's strings)."""

    SAME = "same"
    PRECISION_DRIFT = "precision_drift"
    DIVERGES = "diverges"


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
    return 0.0 if diff == 0.0 else diff / max(DRIFT_FLOOR, allowed if math.isfinite(allowed)
                                              else DRIFT_FLOOR)


@dataclass(frozen=True)
class DriftRatios:
    """How many times the reference's drift the arm drifts, in each of the judge's three parts
    (each against the reference's figure floored at `DRIFT_FLOOR`): the first step's loss, the
    largest loss difference over the steps, the outputs after them."""

    first_step: float
    training: float
    outputs: float

    @property
    def score(self) -> float:
        """The worst part against its margin: at most 1 is `same`."""
        return max(self.first_step / FIRST_STEP_MARGIN, self.training / TRAINING_MARGIN,
                   self.outputs / TRAINING_MARGIN)


def drift_ratios(arm: ParityTrace, baseline: ParityTrace,
                 reference: ParityTrace | Sequence[ParityTrace], steps: int) -> DriftRatios:
    """The arm's `DriftRatios` over the first `steps` steps, against the largest drift of the
    references in each part."""
    refs = _references(reference)
    arm_diffs = loss_differences(arm, baseline, steps)
    ref_diffs = [loss_differences(r, baseline, steps) for r in refs]
    return DriftRatios(
        first_step=_ratio(arm_diffs[0], max(d[0] for d in ref_diffs)),
        training=_ratio(max(arm_diffs), max(max(d) for d in ref_diffs)),
        outputs=_ratio(output_difference(arm.outputs, baseline.outputs),
                       _reference_output_difference(refs, baseline)),
    )


def _references(reference: ParityTrace | Sequence[ParityTrace]) -> list[ParityTrace]:
    refs = [reference] if isinstance(reference, ParityTrace) else list(reference)
    if not refs:
        raise ValueError("parity needs a reference")
    return refs


def _reference_output_difference(refs: Sequence[ParityTrace], baseline: ParityTrace) -> float:
    return max(output_difference(r.outputs, baseline.outputs) for r in refs)


def judge(baseline: ParityTrace, arm: ParityTrace,
          reference: ParityTrace | Sequence[ParityTrace],
          precision: Precision = Precision.FLOAT32) -> Parity:
    """The arm's `Parity` against the baseline, its thresholds from `reference` (the baseline
    with its initial weights nudged by one ulp: one trace, or several nudged other ways, of
    which the largest drift counts); `precision`: the arm's. Raises `ValueError` for traces
    that cannot be compared (no reference, no steps, outputs of another shape, other initial
    weights: a set-up that differs is not a finding about the arm)."""
    refs = _references(reference)
    steps = min(len(t.losses) for t in (baseline, arm, *refs))
    if steps == 0:
        raise ValueError("parity needs at least one step on every side")
    digests = {t.weights_digest for t in (baseline, arm, *refs) if t.weights_digest}
    if len(digests) > 1:
        raise ValueError("the sides did not start from the same initial weights")
    loss_diff = max(loss_differences(arm, baseline, steps))
    out_diff = output_difference(arm.outputs, baseline.outputs)
    score = drift_ratios(arm, baseline, refs, steps).score
    coarser = UNIT_ROUNDOFF[precision] / UNIT_ROUNDOFF[Precision.FLOAT32]
    if not math.isfinite(score):
        kind = ParityKind.DIVERGES
    elif score <= 1.0:
        kind = ParityKind.SAME
    elif precision is not Precision.FLOAT32 and score <= coarser:
        kind = ParityKind.PRECISION_DRIFT
    else:
        kind = ParityKind.DIVERGES
    return Parity(
        steps=steps,
        max_rel_loss_diff=loss_diff,
        max_rel_output_diff=out_diff,
        kind=kind,
        reference_loss_diff=max(max(loss_differences(r, baseline, steps)) for r in refs),
        reference_output_diff=_reference_output_difference(refs, baseline),
    )

