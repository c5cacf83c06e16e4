"""A comparison's why, from its inspecting runs' `explained` events: `explain` and `parity` in
`comparison.json`, computed from the events (so a reopened comparison says the same), an arm
that could not be set beside the baseline left out, and the event's own round trip."""

from __future__ import annotations

import json
import math

from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.events import ExplainedEvent, parse_event
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.why import ArmProfile, OpKind, ParityTrace, Pass, ProfileRow
from xlagui.core.results.why import explain_of, parity_dicts, parity_of

BASE = (0.69, 0.68, 0.67, 0.66)


def _profile(step: float, pool_grad: float) -> ArmProfile:
    return ArmProfile(step, 0.95, (
        ProfileRow("max_pooling2d", Pass.INPUT_GRADIENT, OpKind.POOLING, pool_grad),
        ProfileRow("conv2d", Pass.FORWARD, OpKind.CONVOLUTION, 0.01),
        ProfileRow("not traced", Pass.OTHER, OpKind.OTHER, step * 0.05),
    ))


def _trace(losses: tuple[float, ...], outputs: tuple[float, ...] = (0.5, 0.25),
           nudged: bool = False, digest: str = "w1") -> ParityTrace:
    return ParityTrace(losses, outputs, digest, nudged)


def _entry(variant: str, arm: str, event: ExplainedEvent) -> RunEntry:
    entry = RunEntry.of_arm(f"i-{variant}", variant, 1, parse_arm(arm))
    entry.events = [parse_event(event.to_json())]  # as it came down the pipe
    return entry


def _runs(xla_losses: tuple[float, ...]) -> list[RunEntry]:
    refs = (_trace(tuple(v * (1 + 1e-6 * i) for i, v in enumerate(BASE)), nudged=True),
            _trace(tuple(v * (1 - 2e-6 * i) for i, v in enumerate(BASE)), nudged=True))
    return [
        _entry("baseline", "baseline", ExplainedEvent(
            profile=_profile(0.12, 0.006), parity=_trace(BASE), references=refs)),
        _entry("xla", "jit", ExplainedEvent(profile=_profile(0.25, 0.16),
                                            parity=_trace(xla_losses))),
        _entry("bf16", "bf16", ExplainedEvent(profile=None, parity=_trace(BASE, digest="w2"))),
    ]


def test_explain_sets_each_arm_beside_the_baseline() -> None:
    explain = explain_of(_runs(BASE))
    assert explain is not None and set(explain["arms"]) == {"baseline", "xla"}
    top = explain["top_differences"][0]
    assert (top["arm"], top["layer"], top["pass"], top["op_kind"]) == (
        "xla", "max_pooling2d", "input_gradient", "pooling")
    assert math.isclose(top["arm_seconds"] - top["baseline_seconds"], 0.154)
    assert explain_of([]) is None


def test_parity_is_judged_against_the_nudged_references_and_the_plot_gets_its_losses() -> None:
    same = parity_of(_runs(BASE))
    assert set(same) == {"xla"}  # bf16 started from other weights: not set beside the baseline
    assert same["xla"].kind == "same" and same["xla"].max_rel_loss_diff == 0.0
    off = tuple(v * 1.01 for v in BASE)  # 1% off from the first step: no rounding does that
    assert parity_of(_runs(off))["xla"].kind == "diverges"
    saved = json.loads(json.dumps(parity_dicts(_runs(off))))
    assert saved["xla"]["kind"] == "diverges"
    assert saved["xla"]["losses"] == list(off) and saved["xla"]["baseline_losses"] == list(BASE)
    assert len(saved["xla"]["reference_losses"]) == len(BASE)


def test_no_reference_no_parity() -> None:
    runs = _runs(BASE)
    runs[0].events = [parse_event(ExplainedEvent(parity=_trace(BASE)).to_json())]
    assert parity_of(runs) == {} and parity_dicts(runs) == {}


def test_a_nan_loss_crosses_the_pipe_as_null_and_comes_back_nan() -> None:
    event = ExplainedEvent(parity=_trace((0.5, math.nan)))
    back = parse_event(event.to_json())
    assert isinstance(back, ExplainedEvent) and back.parity is not None
    assert back.parity.losses[0] == 0.5 and math.isnan(back.parity.losses[1])
