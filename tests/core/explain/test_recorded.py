"""Attribution on recorded CPU profiles of both sides of the article's CNN (48 px, batch 32,
5 warm steps; `tests/helpers/recorded/profiles/record.py`), with the answers the worker gave
when it recorded them, and what they say: the baseline's time in oneDNN convolutions and
their gradients, XLA's in max-pooling's gradient (reduce-window and scatter) and in its
convolutions, each side covering ≥ 80% of its steps."""

from __future__ import annotations

import json

import pytest

from tests.helpers.recorded_profiles import PROFILES, recorded_trace
from xlagui.core.explain.attribute import attribute, top_differences
from xlagui.core.explain.trace import EventSource
from xlagui.core.protocol.why import NOT_TRACED, ArmProfile, OpKind, Pass

STEPS = 5


def recorded_profile(side: str) -> ArmProfile:
    return ArmProfile.from_dict(json.loads((PROFILES / f"cnn48-{side}.profile.json").read_text()))


def test_the_baseline_is_attributed_as_the_worker_did() -> None:
    trace = recorded_trace("cnn48-baseline.trace.json.gz")
    assert len(trace.steps) == STEPS
    assert {e.source for e in trace.events} == {EventSource.TF_OP}
    prof = attribute(trace, None, STEPS)
    assert prof == recorded_profile("baseline")
    assert prof.coverage >= 0.8
    top = prof.rows[0]
    assert top.op_kind is OpKind.CONVOLUTION and top.layer in ("conv2d", "conv2d_1")
    convolutions = sum(r.seconds_per_step for r in prof.rows if r.op_kind is OpKind.CONVOLUTION)
    assert convolutions > 0.5 * sum(r.seconds_per_step for r in prof.rows[:-1])


def test_xla_is_attributed_as_the_worker_did(cnn_op_names: dict[str, str]) -> None:
    trace = recorded_trace("cnn48-xla.trace.json.gz")
    # XLA's thunks, and the one TensorFlow op left outside the cluster (Keras' iterator step)
    assert {e.name for e in trace.events if e.source != EventSource.HLO} == {
        "optional:OptionalFromValue"}
    prof = attribute(trace, cnn_op_names, STEPS)
    assert prof == recorded_profile("xla")
    assert prof.coverage >= 0.8
    assert prof.rows[0].key == ("max_pooling2d", Pass.INPUT_GRADIENT, OpKind.POOLING)
    assert prof.seconds(("conv2d_1", Pass.WEIGHT_GRADIENT, OpKind.CONVOLUTION)) > 0
    # without the dump every thunk is still timed, but none has a layer
    bare = attribute(trace, None, STEPS)
    assert bare.coverage == pytest.approx(prof.coverage)
    assert {r.layer for r in bare.rows} == {"framework", NOT_TRACED}


def test_xlas_asynchronous_convolutions_count_until_they_end() -> None:
    # XLA:CPU returns from a convolution thunk at once and its work runs on: the reader
    # extends it to its `end:` event; the convolutions are then most of a step
    trace = recorded_trace("cnn48-xla.trace.json.gz")
    convs = [e for e in trace.events if e.name.startswith("convolution")]
    assert max(e.duration_ns for e in convs) > 1_000_000  # > 1 ms: in flight, not dispatch


def test_xlas_largest_difference_on_the_cnn_is_max_poolings_gradient(
        cnn_op_names: dict[str, str]) -> None:
    profiles = {"baseline": recorded_profile("baseline"), "xla": recorded_profile("xla")}
    top = top_differences(profiles)
    assert (top[0].layer, top[0].pass_, top[0].op_kind) == (
        "max_pooling2d", Pass.INPUT_GRADIENT, OpKind.POOLING)
    assert top[0].arm_seconds > 10 * top[0].baseline_seconds
