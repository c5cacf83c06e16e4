"""Attribution on hand-made traces, where every figure is known: rows per step, coverage as the
union of intervals inside the step windows, thread-times that add across cores, the `not
traced` row, the top differences and the JSON."""

from __future__ import annotations

import json

import pytest

from xlagui.core.explain.attribute import (
    ALL_LAYERS,
    Difference,
    attribute,
    by_kind,
    top_differences,
    union_length,
)
from xlagui.core.explain.ops import Names
from xlagui.core.explain.trace import EventSource, Trace, TraceEvent
from xlagui.core.protocol.why import NOT_TRACED, ArmProfile, OpKind, Pass, ProfileRow

MS = 1_000_000.0  # ns
NAMES = Names(frozenset({"conv2d", "conv2d_1", "dense"}), frozenset({"net"}), "adam")
CONV_IN = "StatefulPartitionedCall/gradient_tape/net_1/conv2d_1_2/convolution/" \
          "Conv2DBackpropInput:_MklNativeConv2DBackpropInput"
CONV_FWD = "StatefulPartitionedCall/net_1/conv2d_1/Relu:_MklNativeFusedConv2D"
ADAM = "StatefulPartitionedCall/adam/Mul_11:Mul"


def ev(name: str, start_ms: float, dur_ms: float, line: str = "t0",
       source: str = EventSource.TF_OP) -> TraceEvent:
    return TraceEvent(name, source, "/host:CPU", line, start_ms * MS, dur_ms * MS)


def test_union_length() -> None:
    assert union_length([]) == 0
    assert union_length([(0, 2), (1, 3), (5, 6)]) == 4
    assert union_length([(5, 6), (0, 10)]) == 10


def test_a_baseline_trace_is_attributed_row_by_row() -> None:
    # two steps of 10 ms; step 1: conv input gradient 0–4 on t0 and, on another core, the
    # forward conv 2–6 on t1 (thread-times add: 8 ms, covered 6 ms), adam 7–8; step 2 the same
    # shifted by 10 ms, and an event between the steps that is not counted
    events = []
    for base in (0.0, 10.0):
        events += [ev(CONV_IN, base, 4), ev(CONV_FWD, base + 2, 4, line="t1"),
                   ev(ADAM, base + 7, 1)]
    events.append(ev(ADAM, 20.5, 3))  # after the last step: outside every window
    trace = Trace(tuple(events), ((0.0, 10 * MS), (10 * MS, 20 * MS)), NAMES)
    prof = attribute(trace, None, steps=2)
    assert prof.step_seconds == pytest.approx(0.010)
    assert prof.coverage == pytest.approx(0.7)  # 0–6 and 7–8 of each 10 ms
    by_key = {r.key: r.seconds_per_step for r in prof.rows}
    assert by_key[("conv2d", Pass.FORWARD, OpKind.CONVOLUTION)] == pytest.approx(0.004)
    assert by_key[("conv2d_1", Pass.INPUT_GRADIENT, OpKind.CONVOLUTION)] == pytest.approx(0.004)
    assert by_key[("optimizer", Pass.OPTIMIZER, OpKind.ELEMENTWISE)] == pytest.approx(0.001)
    last = prof.rows[-1]
    assert (last.layer, last.pass_, last.op_kind) == (NOT_TRACED, Pass.OTHER, OpKind.OTHER)
    assert last.seconds_per_step == pytest.approx(0.003)
    # rows largest first, `not traced` last whatever its size
    sizes = [r.seconds_per_step for r in prof.rows[:-1]]
    assert sizes == sorted(sizes, reverse=True)


def test_an_event_across_a_window_edge_is_clipped() -> None:
    trace = Trace((ev(CONV_FWD, 8, 4),), ((0.0, 10 * MS),), NAMES)
    prof = attribute(trace, None, steps=1)
    assert prof.seconds(("conv2d", Pass.FORWARD, OpKind.CONVOLUTION)) == pytest.approx(0.002)
    assert prof.coverage == pytest.approx(0.2)


def test_xla_thunks_are_attributed_through_their_ops() -> None:
    ops = {"convolution-base-dilated.3": "gradient_tape/net_1/conv2d_1_2/depthwise/"
                                         "DepthwiseConv2dNativeBackpropInput",
           "wrapped_reduce-window.2": "net_1/max_pool/MaxPool"}
    trace = Trace((ev("convolution-base-dilated.3", 0, 6, source=EventSource.HLO),
                   ev("wrapped_reduce-window.2", 6, 1, source=EventSource.HLO),
                   ev("fusion.9", 7, 1, source=EventSource.HLO)), (), NAMES)
    prof = attribute(trace, ops, steps=2)  # no windows: one spanning 0–8 ms, over 2 steps
    assert prof.step_seconds == pytest.approx(0.004)
    assert prof.coverage == pytest.approx(1.0)
    assert prof.seconds(("conv2d_1", Pass.INPUT_GRADIENT, OpKind.DEPTHWISE_CONVOLUTION)) \
        == pytest.approx(0.003)
    # `max_pool` is no layer of the model: framework; an instruction with no op: framework too
    assert prof.seconds(("framework", Pass.FORWARD, OpKind.POOLING)) == 0
    assert prof.seconds(("framework", Pass.OTHER, OpKind.ELEMENTWISE)) == pytest.approx(0.0005)
    assert prof.rows[-1].seconds_per_step == pytest.approx(0.0)


def test_an_empty_trace_is_all_not_traced() -> None:
    prof = attribute(Trace((), ((0.0, 5 * MS),)), None, steps=1)
    assert prof.coverage == 0 and prof.rows[-1].seconds_per_step == pytest.approx(0.005)
    assert attribute(Trace((), ()), None, steps=3).step_seconds == 0


def profile(**rows: float) -> ArmProfile:
    keys = {"conv_in": ("conv2d_1", Pass.INPUT_GRADIENT, OpKind.CONVOLUTION),
            "conv_fwd": ("conv2d", Pass.FORWARD, OpKind.CONVOLUTION),
            "adam": ("optimizer", Pass.OPTIMIZER, OpKind.ELEMENTWISE),
            "untraced": (NOT_TRACED, Pass.OTHER, OpKind.OTHER)}
    return ArmProfile(1.0, 0.9, tuple(ProfileRow(*keys[k], v) for k, v in rows.items()))


def test_top_differences_rank_by_size_either_way_and_leave_out_not_traced() -> None:
    profiles = {"baseline": profile(conv_in=0.1, conv_fwd=0.5, untraced=0.01),
                "xla": profile(conv_in=0.9, adam=0.2, untraced=2.0),
                "bf16": profile(conv_in=0.1, conv_fwd=0.45)}
    top = top_differences(profiles, n=3)
    xla = [d for d in top if d.arm == "xla"]
    assert [(d.layer, round(d.change, 3)) for d in xla] == [
        ("conv2d_1", 0.8), ("conv2d", -0.5), ("optimizer", 0.2)]
    assert xla[1].arm_seconds == 0 and xla[2].baseline_seconds == 0
    # bf16 differs in one row only (the same conv input gradient is no difference)
    assert [(d.arm, d.layer) for d in top if d.arm == "bf16"] == [("bf16", "conv2d")]
    assert top_differences(profiles, n=1)[0].layer == "conv2d_1"
    assert top_differences({"xla": profiles["xla"]}) == []


def test_the_json_is_the_issues() -> None:
    prof = profile(conv_in=0.1, untraced=0.02)
    d = json.loads(json.dumps(prof.to_dict()))
    assert set(d) == {"step_seconds", "coverage", "rows"}
    assert d["rows"][0] == {"layer": "conv2d_1", "pass": "input_gradient",
                            "op_kind": "convolution", "seconds_per_step": 0.1}
    assert ArmProfile.from_dict(d) == prof
    diff = top_differences({"baseline": prof, "xla": profile(conv_in=0.3)})[0]
    dd = json.loads(json.dumps(diff.to_dict()))
    assert dd == {"arm": "xla", "layer": "conv2d_1", "pass": "input_gradient",
                  "op_kind": "convolution", "baseline_seconds": 0.1, "arm_seconds": 0.3}
    assert Difference.from_dict(dd) == diff
    with pytest.raises(ValueError):
        ArmProfile.from_dict({**d, "rows": [{**d["rows"][0], "pass": "sideways"}]})


def test_rows_summed_over_layers() -> None:
    dw = OpKind.DEPTHWISE_CONVOLUTION
    rows = (ProfileRow("block_1_depthwise", Pass.INPUT_GRADIENT, dw, 0.5),
            ProfileRow("block_2_depthwise", Pass.INPUT_GRADIENT, dw, 0.25),
            ProfileRow("block_1_depthwise", Pass.FORWARD, dw, 0.5),
            ProfileRow(NOT_TRACED, Pass.OTHER, OpKind.OTHER, 0.125))
    summed = by_kind(ArmProfile(2.0, 0.9, rows))
    assert [(r.layer, r.pass_, r.seconds_per_step) for r in summed.rows] == [
        (ALL_LAYERS, Pass.INPUT_GRADIENT, 0.75), (ALL_LAYERS, Pass.FORWARD, 0.5),
        (NOT_TRACED, Pass.OTHER, 0.125)]
    assert (summed.step_seconds, summed.coverage) == (2.0, 0.9)
    base = by_kind(ArmProfile(1.0, 1.0, (ProfileRow("x", Pass.FORWARD,
                                                    OpKind.DEPTHWISE_CONVOLUTION, 0.1),)))
    top = top_differences({"baseline": base, "xla": summed}, n=1)[0]
    assert (top.layer, top.pass_, top.arm_seconds) == (ALL_LAYERS, Pass.INPUT_GRADIENT, 0.75)


def test_a_thunk_is_looked_up_in_its_own_module_first() -> None:
    thunk = TraceEvent("fusion.1", EventSource.HLO, "/host:CPU", "t0", 0, MS, module="train")
    ops = {"fusion.1": "net_1/dense/MatMul", "train/fusion.1": "net_1/conv2d/Relu"}
    prof = attribute(Trace((thunk,), (), NAMES), ops, steps=1)
    assert prof.rows[0].layer == "conv2d"
