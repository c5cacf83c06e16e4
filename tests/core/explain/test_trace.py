"""Reading the profiler's XSpace: which events are kept and how they are named, the GPU path
on a hand-made trace (`tests/helpers/recorded/profiles/make_gpu.py`: no GPU was at hand to
record one) and an asynchronous XLA:CPU thunk extended to its `end:` event."""

from __future__ import annotations

import json

import pytest

from tests.helpers.recorded_profiles import PROFILES, recorded_trace
from xlagui.core.explain.attribute import attribute
from xlagui.core.explain.ops import Names
from xlagui.core.explain.trace import EventSource, Trace, is_tf_op_name, parse_annotation
from xlagui.core.protocol.why import OpKind, Pass


@pytest.mark.parametrize(("name", "kernel"), [
    ("StatefulPartitionedCall/net_1/conv2d_1/Relu:_MklNativeFusedConv2D", True),
    ("AddN:AddN", True),
    ("ExecutorState::Process", False),
    ("EagerLocalExecute: __inference_multi_step_on_iterator_2269", False),
    ("end: convolution.4", False),
    ("train", False),
])
def test_which_host_events_are_tensorflow_kernels(name: str, kernel: bool) -> None:
    assert is_tf_op_name(name) is kernel


def test_gpu_annotations() -> None:
    assert parse_annotation("net_1/conv2d/Conv2D:Conv2D") == (
        EventSource.TF_OP, "net_1/conv2d/Conv2D:Conv2D", "")
    assert parse_annotation(
        "jit_step:#program_id=3#::Thunk:#hlo_op=fusion.7,hlo_module=jit_step#") == (
        EventSource.HLO, "fusion.7", "jit_step")
    assert parse_annotation("outer::inner/op:MatMul") == (EventSource.TF_OP, "inner/op:MatMul", "")


def test_a_trace_goes_to_json_and_back() -> None:
    trace = recorded_trace("cnn48-xla.trace.json.gz")
    again = Trace.from_dict(json.loads(json.dumps(trace.to_dict())))
    assert again == trace
    assert again.names.optimizer == "adam" and "conv2d_1" in again.names.layers


@pytest.mark.tf
def test_the_gpu_planes_and_an_asynchronous_thunk() -> None:
    from xlagui.core.explain.trace import read_xspace

    names = Names(frozenset({"conv2d_1"}), frozenset({"net"}), "adam")
    trace = read_xspace(PROFILES / "gpu-hand-made.xplane.pb", names=names)
    assert trace.steps == ((0.0, 10e6), (10e6, 20e6))
    by_name = {e.name: e for e in trace.events}
    # the input pipeline's thread is left out
    assert not any("random_zoom" in name for name in by_name)
    # XLA:CPU's convolution, 1–2 ms, ends at its `end:` event at 5 ms
    conv = by_name["convolution.4"]
    assert (conv.start_ns, conv.end_ns, conv.module) == (1e6, 5e6, "jit_step")
    assert by_name["fusion.2"].duration_ns == 1e6
    gpu = [e for e in trace.events if e.plane == "/device:GPU:0"]
    assert [(e.name.rsplit("/", 1)[-1], e.source) for e in gpu] == [
        ("Relu:Conv2D", EventSource.TF_OP),
        ("Conv2DBackpropInput:Conv2DBackpropInput", EventSource.TF_OP),
        ("fusion.7", EventSource.HLO),
        ("dot.3", EventSource.HLO),
    ]
    ops = {"convolution.4": "gradient_tape/net_1/conv2d_1_1/convolution/Conv2DBackpropFilter",
           "dot.3": "net_1/conv2d_1/MatMul"}
    prof = attribute(trace, ops, steps=2)
    assert prof.step_seconds == pytest.approx(0.010)
    # host 1–5 and 6–7 ms; GPU 11–18 ms: 12 of 20 ms
    assert prof.coverage == pytest.approx(0.6)
    assert prof.seconds(("conv2d_1", Pass.WEIGHT_GRADIENT, OpKind.CONVOLUTION)) == \
        pytest.approx(0.002)  # 4 ms over 2 steps
    assert prof.seconds(("conv2d_1", Pass.FORWARD, OpKind.CONVOLUTION)) == pytest.approx(0.001)
    assert prof.seconds(("conv2d_1", Pass.INPUT_GRADIENT, OpKind.CONVOLUTION)) == \
        pytest.approx(0.0015)
    assert prof.seconds(("conv2d_1", Pass.FORWARD, OpKind.MATMUL)) == pytest.approx(0.0005)
    assert prof.seconds(("framework", Pass.OTHER, OpKind.ELEMENTWISE)) == pytest.approx(0.001)
