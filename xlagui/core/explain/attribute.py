"""Where a step's time goes, per arm (`attribute`), and where two arms differ most
(`top_differences`).

Every kept event of a `Trace` is attributed to a row (layer, pass, op kind): a TensorFlow
kernel through its op path, an XLA thunk through the op its instruction came from
(`hlo_op_names`, read from the dump by `hlo_names`), both by `ops`. A row's figure is its
events' time per step, clipped to the step windows: thread-time, so rows add up across cores
(and an asynchronous thunk counts the time its work was in flight, `trace`). Coverage is the
share of the steps' wall time in which at least one event ran (the union of their intervals);
the rest is the `not traced` row, never spread over the others.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from xlagui.core.explain.hlo_names import qualified
from xlagui.core.explain.ops import Where, where_hlo, where_tf
from xlagui.core.explain.trace import EventSource, Trace, TraceEvent
from xlagui.core.protocol.why import NOT_TRACED, ArmProfile, OpKind, Pass, ProfileRow

NS = 1e-9


@dataclass(frozen=True)
class Difference:
    arm: str
    layer: str
    pass_: Pass
    op_kind: OpKind
    baseline_seconds: float
    arm_seconds: float

    @property
    def change(self) -> float:
        return self.arm_seconds - self.baseline_seconds

    def to_dict(self) -> dict[str, Any]:
        return {"arm": self.arm, "layer": self.layer, "pass": str(self.pass_),
                "op_kind": str(self.op_kind), "baseline_seconds": self.baseline_seconds,
                "arm_seconds": self.arm_seconds}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Difference:
        return cls(str(d["arm"]), str(d["layer"]), Pass(d["pass"]), OpKind(d["op_kind"]),
                   float(d["baseline_seconds"]), float(d["arm_seconds"]))


def union_length(intervals: Iterable[tuple[float, float]]) -> float:
    """The length of the union of (start, end) intervals."""
    total, cur_start, cur_end = 0.0, None, 0.0
    for start, end in sorted(intervals):
        if cur_start is None or start > cur_end:
            if cur_start is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_start is not None:
        total += cur_end - cur_start
    return total


def where_event(event: TraceEvent, trace: Trace, hlo_op_names: dict[str, str] | None) -> Where:
    if event.source == EventSource.HLO:
        ops = hlo_op_names or {}
        op = ops.get(qualified(event.module, event.name)) or ops.get(event.name)
        return where_hlo(event.name, op, trace.names)
    return where_tf(event.name, trace.names)


def _windows(trace: Trace) -> list[tuple[float, float]]:
    """The step windows; a trace without them is one window from its first event to its last."""
    if trace.steps:
        return list(trace.steps)
    if not trace.events:
        return []
    return [(min(e.start_ns for e in trace.events), max(e.end_ns for e in trace.events))]


def attribute(trace: Trace, hlo_op_names: dict[str, str] | None, steps: int) -> ArmProfile:
    """The `ArmProfile` of `trace`: per row, its events' time per step inside the step windows;
    `steps` divides when the trace has no windows of its own (one window spans them all)."""
    windows = _windows(trace)
    n = len(trace.steps) or max(steps, 1)
    wall = sum(b - a for a, b in windows)
    per_row: dict[tuple[str, Pass, OpKind], float] = defaultdict(float)
    covered: list[tuple[float, float]] = []
    cache: dict[tuple[str, str], Where] = {}
    for ev in trace.events:
        for a, b in windows:
            start, end = max(ev.start_ns, a), min(ev.end_ns, b)
            if end <= start:
                continue
            key = (ev.source, ev.name)
            if key not in cache:
                cache[key] = where_event(ev, trace, hlo_op_names)
            w = cache[key]
            per_row[(w.layer, w.pass_, w.op_kind)] += end - start
            covered.append((start, end))
    coverage = union_length(covered) / wall if wall > 0 else 0.0
    rows = sorted((ProfileRow(layer, p, k, t * NS / n) for (layer, p, k), t in per_row.items()),
                  key=lambda r: (-r.seconds_per_step, r.key))
    step_seconds = wall * NS / n
    untraced = ProfileRow(NOT_TRACED, Pass.OTHER, OpKind.OTHER, (1 - coverage) * step_seconds)
    return ArmProfile(step_seconds, coverage, (*rows, untraced))


ALL_LAYERS = "*"  # the layer of a row summed over every layer (`by_kind`)


def by_kind(profile: ArmProfile) -> ArmProfile:
    """`profile` with its rows summed over layers, per (pass, op kind): layer `*` ("the
    depthwise convolutions' input gradients", all blocks together); `not traced` kept apart."""
    sums: dict[tuple[Pass, OpKind], float] = defaultdict(float)
    untraced = []
    for r in profile.rows:
        if r.layer == NOT_TRACED:
            untraced.append(r)
        else:
            sums[(r.pass_, r.op_kind)] += r.seconds_per_step
    rows = sorted((ProfileRow(ALL_LAYERS, p, k, t) for (p, k), t in sums.items()),
                  key=lambda r: (-r.seconds_per_step, r.key))
    return ArmProfile(profile.step_seconds, profile.coverage, (*rows, *untraced))


def top_differences(profiles: dict[str, ArmProfile], baseline: str = "baseline",
                    n: int = 3) -> list[Difference]:
    """Per arm other than `baseline`, its `n` rows farthest from the baseline's (by |arm −
    baseline| seconds per step; a row one side lacks counts 0 there; no row that does not
    differ); the `not traced` rows are left out (they are said on their own)."""
    base = profiles.get(baseline)
    if base is None:
        return []
    out: list[Difference] = []
    for arm, prof in profiles.items():
        if arm == baseline:
            continue
        keys = {r.key for r in (*base.rows, *prof.rows) if r.layer != NOT_TRACED}
        diffs = [d for d in (Difference(arm, *k, base.seconds(k), prof.seconds(k)) for k in keys)
                 if d.change != 0]
        diffs.sort(key=lambda d: (-abs(d.change), d.layer, d.pass_, d.op_kind))
        out += diffs[:n]
    return out
