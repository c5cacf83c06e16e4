"""The parity judge on constructed traces: each kind, and the edges (a NaN loss on one side or
both, a reference that did not drift at all, traces that cannot be compared), and the JSON."""

from __future__ import annotations

import json
import math

import pytest

from xlagui.core.analysis.parity import (
    DRIFT_FLOOR,
    FIRST_STEP_MARGIN,
    TRAINING_MARGIN,
    Parity,
    ParityKind,
    drift_ratios,
    judge,
    output_difference,
    relative_difference,
)
from xlagui.core.protocol.jsoncodec import ProtocolError
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.why import ParityTrace

LOSSES = (0.69, 0.70, 0.68, 0.66, 0.65)
OUTPUTS = (0.2, 0.8, 0.5, 0.1)


def trace(rel: float | tuple[float, ...] = 0.0, out: float = 0.0, digest: str = "d") -> ParityTrace:
    """The baseline's losses moved by `rel` (relative, per step or all alike) and its outputs
    by `out` (absolute: the outputs' largest is 0.8)."""
    rels = rel if isinstance(rel, tuple) else (rel,) * len(LOSSES)
    return ParityTrace(tuple(v * (1 + r) for v, r in zip(LOSSES, rels, strict=True)),
                       tuple(v + out for v in OUTPUTS), digest)


BASELINE = trace()
# Rounding alone: nothing at first, then 1e-6 growing to 1e-4 (the CNN's shape).
REFERENCE = trace((0.0, 0.0, 1e-6, 1e-5, 1e-4), out=8e-5)


def test_an_arm_within_the_references_drift_is_the_same() -> None:
    arm = trace((1e-7, 0.0, 2e-6, 1e-5, 5e-4), out=1e-4)
    parity = judge(BASELINE, arm, REFERENCE)
    assert parity.kind is ParityKind.SAME
    assert parity.steps == 5
    assert parity.max_rel_loss_diff == pytest.approx(5e-4, rel=1e-3)
    assert parity.max_rel_output_diff == pytest.approx(1e-4 / 0.8)
    assert parity.reference_loss_diff == pytest.approx(1e-4, rel=1e-3)


def test_the_first_step_is_held_to_rounding_and_the_others_to_the_references_drift() -> None:
    # Before any update only the forward pass's rounding differs: 1e-4 there diverges...
    early = trace((1e-4, 0.0, 0.0, 0.0, 0.0))
    assert judge(BASELINE, early, REFERENCE).kind is ParityKind.DIVERGES
    # ...and is the reference's own drift by the end. Later, chaos may come sooner to an arm
    # than to the one nudged run: up to TRAINING_MARGIN times the reference's largest.
    for step in (1, 4):
        rels = [0.0] * 5
        rels[step] = 1e-4 * TRAINING_MARGIN / 2
        assert judge(BASELINE, trace(tuple(rels)), REFERENCE).kind is ParityKind.SAME
        rels[step] = 1e-4 * TRAINING_MARGIN * 2
        assert judge(BASELINE, trace(tuple(rels)), REFERENCE).kind is ParityKind.DIVERGES


def test_the_ratios_to_the_reference() -> None:
    ratios = drift_ratios(trace((1e-7, 0.0, 0.0, 0.0, 3e-4), out=4e-4), BASELINE, REFERENCE, 5)
    assert ratios.first_step == pytest.approx(1e-7 / DRIFT_FLOOR)  # the reference's 0, floored
    assert ratios.training == pytest.approx(3.0, rel=1e-3)
    assert ratios.outputs == pytest.approx(5.0)
    assert ratios.score == pytest.approx(5.0 / TRAINING_MARGIN)


def test_a_float32_arm_beyond_the_margin_diverges() -> None:
    arm = trace(2.0**-10)  # the perturbing lever's loss weight
    parity = judge(BASELINE, arm, REFERENCE)
    assert parity.kind is ParityKind.DIVERGES
    assert parity.max_rel_loss_diff == pytest.approx(2.0**-10, rel=1e-3)


def test_outputs_alone_can_diverge() -> None:
    arm = trace(out=0.05)
    assert judge(BASELINE, arm, REFERENCE).kind is ParityKind.DIVERGES


def test_a_low_precision_arm_drifting_as_its_precision_would() -> None:
    arm = trace((2e-5, 1e-3, 4e-3, 1e-2, 2e-2), out=0.02)  # what bf16 did on the CNN
    assert judge(BASELINE, arm, REFERENCE, Precision.BF16).kind is ParityKind.PRECISION_DRIFT
    assert judge(BASELINE, arm, REFERENCE, Precision.FLOAT32).kind is ParityKind.DIVERGES
    # float16 rounds 8 times finer than bfloat16: its bound is 8 times tighter.
    assert judge(BASELINE, trace(0.5), REFERENCE, Precision.FP16).kind is ParityKind.DIVERGES
    assert judge(BASELINE, trace(0.5), REFERENCE, Precision.BF16).kind is (
        ParityKind.PRECISION_DRIFT)


def test_a_low_precision_arm_that_stays_within_float32_rounding_is_the_same() -> None:
    assert judge(BASELINE, trace(1e-7), REFERENCE, Precision.BF16).kind is ParityKind.SAME


def test_a_nan_loss_on_the_arm_only_diverges() -> None:
    losses = list(LOSSES)
    losses[3] = math.nan
    arm = ParityTrace(tuple(losses), OUTPUTS, "d")
    parity = judge(BASELINE, arm, REFERENCE, Precision.BF16)
    assert parity.kind is ParityKind.DIVERGES
    assert parity.max_rel_loss_diff == math.inf
    assert parity.to_dict()["max_rel_loss_diff"] is None  # JSON has no infinity


def test_nan_outputs_on_the_arm_diverge() -> None:
    arm = ParityTrace(LOSSES, (math.nan, *OUTPUTS[1:]), "d")
    parity = judge(BASELINE, arm, REFERENCE)
    assert parity.kind is ParityKind.DIVERGES and parity.max_rel_output_diff == math.inf


def test_nan_on_both_sides_alike_is_no_difference() -> None:
    losses = (*LOSSES[:4], math.nan)
    base = ParityTrace(losses, OUTPUTS, "d")
    arm = ParityTrace(losses, OUTPUTS, "d")
    assert judge(base, arm, ParityTrace(losses, OUTPUTS, "d")).kind is ParityKind.SAME


def test_a_reference_that_did_not_drift_leaves_a_floor() -> None:
    # Bit-identical reference: the arm may still differ by float32 rounding (the floor), no more.
    zero = trace()
    assert judge(BASELINE, trace(DRIFT_FLOOR), zero).kind is ParityKind.SAME
    assert judge(BASELINE, trace(DRIFT_FLOOR * FIRST_STEP_MARGIN * 2), zero).kind is (
        ParityKind.DIVERGES)
    assert judge(BASELINE, BASELINE, zero) == Parity(5, 0.0, 0.0, ParityKind.SAME, 0.0, 0.0)


def test_zero_losses_and_outputs() -> None:
    assert relative_difference(0.0, 0.0) == 0.0
    assert relative_difference(0.0, 1e-9) == 1.0  # a loss that left zero: all of it
    assert output_difference((0.0, 0.0), (0.0, 0.0)) == 0.0
    assert output_difference((1e-9, 0.0), (0.0, 0.0)) == math.inf  # nothing to scale by


def test_traces_that_cannot_be_compared_are_refused() -> None:
    with pytest.raises(ValueError, match="initial weights"):
        judge(BASELINE, trace(digest="other"), REFERENCE)
    with pytest.raises(ValueError, match="at least one step"):
        judge(BASELINE, ParityTrace((), OUTPUTS, "d"), REFERENCE)
    with pytest.raises(ValueError, match="outputs"):
        judge(BASELINE, ParityTrace(LOSSES, OUTPUTS[:2], "d"), REFERENCE)


def test_a_shorter_side_is_judged_over_the_steps_all_have() -> None:
    arm = ParityTrace(LOSSES[:3], OUTPUTS, "d")
    assert judge(BASELINE, arm, REFERENCE).steps == 3


def test_parity_json_is_the_issues_shape_and_reads_back() -> None:
    parity = judge(BASELINE, trace(2.0**-10), REFERENCE)
    data = json.loads(json.dumps(parity.to_dict()))
    assert {"steps", "max_rel_loss_diff", "max_rel_output_diff", "kind"} <= set(data)
    assert data["kind"] == "diverges"
    assert Parity.from_dict(data) == parity
    # An older or smaller record: the four fields alone; null is an infinite difference.
    small = {"steps": 20, "max_rel_loss_diff": None, "max_rel_output_diff": 0.1,
             "kind": "precision_drift"}
    read = Parity.from_dict(small)
    assert read.max_rel_loss_diff == math.inf and read.reference_loss_diff is None
    with pytest.raises(ProtocolError, match="kind"):
        Parity.from_dict({**small, "kind": "similar"})


def test_a_trace_travels_as_json_with_its_nans() -> None:
    sent = ParityTrace((0.7, math.nan), (0.5,), "abc", nudged=True)
    back = ParityTrace.from_dict(json.loads(json.dumps(sent.to_dict())))
    assert back.losses[0] == 0.7 and math.isnan(back.losses[1])
    assert (back.outputs, back.weights_digest, back.nudged) == ((0.5,), "abc", True)
    with pytest.raises(ProtocolError, match="losses"):
        ParityTrace.from_dict({"losses": "x", "outputs": []})


def test_the_largest_drift_of_several_references_counts() -> None:
    calm = trace((0.0, 0.0, 0.0, 0.0, 1e-6))  # an unluckily calm nudge
    arm = trace((0.0, 0.0, 0.0, 0.0, 1e-3))
    assert judge(BASELINE, arm, calm).kind is ParityKind.DIVERGES
    parity = judge(BASELINE, arm, [calm, REFERENCE])
    assert parity.kind is ParityKind.SAME
    assert parity.reference_loss_diff == pytest.approx(1e-4, rel=1e-3)
    assert parity.reference_output_diff == pytest.approx(8e-5 / 0.8)
    with pytest.raises(ValueError, match="reference"):
        judge(BASELINE, arm, [])
