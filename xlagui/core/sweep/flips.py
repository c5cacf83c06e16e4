"""Where each arm's verdict flips along each swept axis, as data (`xlagui.present.sweep` says
it in words: "jit faster from batch 128 up at 64 px; slower below").

A cell's verdict for an arm is its interval's: `faster` when the whole 95% interval of the ratio
(arm ÷ baseline step time) is below 1, `slower` when above, `ties` when it contains 1, `unknown`
when the cell failed, the arm did not engage or has no interval, `busy` when it was measured on a
busy machine (a flip is claimed only between cells measured quiet). Verdicts are compared between
cells, never ratios divided: and cells from different hosts are never put on one line (each
host has its own lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.sweep.cell import ArmRatio, CellResult, CellStatus
from xlagui.core.sweep.plan import ARMS, HOST, LOCAL_HOST, Axis, SweepPlan


class Verdict(StrEnum):
    FASTER = "faster"
    SLOWER = "slower"
    TIES = "ties"
    UNKNOWN = "unknown"
    # Measured on a busy machine: shown, never a side of a flip.
    BUSY = "busy"


# Verdicts no flip is claimed from.
UNCLAIMED = frozenset({Verdict.UNKNOWN, Verdict.BUSY})


def verdict_of(result: CellResult | None, arm: str) -> Verdict:
    """`arm`'s verdict in the cell of `result` (unknown without a valid interval)."""
    found: ArmRatio | None = None
    if result is not None and result.status == CellStatus.DONE:
        found = result.arm(arm)
    if found is None or not found.valid or found.low is None or found.high is None:
        return Verdict.UNKNOWN
    if found.busy:
        return Verdict.BUSY
    if found.high < 1:
        return Verdict.FASTER
    if found.low > 1:
        return Verdict.SLOWER
    return Verdict.TIES


@dataclass(frozen=True)
class Stretch:
    """Consecutive values of the axis (in the order swept) with one verdict."""

    verdict: Verdict
    values: tuple[str, ...]


@dataclass(frozen=True)
class Line:
    """One arm along one swept axis, the other swept axes held at `context` ((axis, value) in
    the plan's order), on one host (`host`: the host axis's value; "" without one)."""

    host: str
    arm: str
    axis: str
    context: tuple[tuple[str, str], ...]
    stretches: tuple[Stretch, ...]

    @property
    def flips(self) -> bool:
        known = {s.verdict for s in self.stretches if s.verdict not in UNCLAIMED}
        return len(known) > 1


def lines(plan: SweepPlan, results: Sequence[CellResult]) -> list[Line]:
    """Every arm along every swept axis (but the host and the arm lists), for each value of
    the other swept axes, host by host. An arm measured in no cell of a line has none."""
    by_key = {r.key: r for r in results}
    swept = [a for a in plan.swept if a.name not in (HOST, ARMS)]
    # Swept arm lists hold a line's other settings (an arm is said per list it was measured
    # in), but no line runs along them: the arms are the lines themselves.
    held = [a for a in plan.swept if a.name == ARMS]
    hosts = next((a.values for a in plan.axes if a.name == HOST), ("",))
    out: list[Line] = []
    for host in hosts:
        cells = [c for c in plan.cells if host in ("", c.setting(HOST))]
        for arm in _arms(results):
            for axis in swept:
                others = [*(a for a in swept if a is not axis), *held]
                for context in _contexts(others):
                    along = [c for c in cells if all(c.setting(n) == v for n, v in context)]
                    verdicts = [(c.setting(axis.name) or "", verdict_of(by_key.get(c.key), arm))
                                for c in along]
                    if all(v is Verdict.UNKNOWN for _, v in verdicts):
                        continue
                    out.append(Line(host=_host(host), arm=arm, axis=axis.name,
                                    context=context, stretches=_stretches(axis, verdicts)))
    return out


def single(plan: SweepPlan, results: Sequence[CellResult]) -> list[tuple[str, str, Verdict]]:
    """(host, arm, verdict) of a sweep with no axis to walk along (one cell per host)."""
    by_key = {r.key: r for r in results}
    return [(_host(c.setting(HOST) or ""), arm, verdict_of(by_key.get(c.key), arm))
            for c in plan.cells for arm in _arms([by_key[c.key]] if c.key in by_key else [])]


def sorted_values(axis: Axis) -> tuple[str, ...]:
    """The axis's values in the order a line walks them: by number when they all are (a batch
    of 128 comes after 16 whatever order they were typed in), else as typed."""
    if all(v.isdigit() for v in axis.values):
        return tuple(sorted(axis.values, key=int))
    return axis.values


def _host(value: str) -> str:
    return "" if value == LOCAL_HOST else value


def _arms(results: Sequence[CellResult]) -> list[str]:
    seen: list[str] = []
    for r in results:
        for a in r.arms:
            if a.arm not in seen:
                seen.append(a.arm)
    return seen


def _contexts(axes: Sequence[Axis]) -> list[tuple[tuple[str, str], ...]]:
    contexts: list[tuple[tuple[str, str], ...]] = [()]
    for axis in axes:
        contexts = [(*c, (axis.name, v)) for c in contexts for v in axis.values]
    return contexts


def _stretches(axis: Axis, verdicts: list[tuple[str, Verdict]]) -> tuple[Stretch, ...]:
    order = {v: i for i, v in enumerate(sorted_values(axis))}
    out: list[Stretch] = []
    for value, verdict in sorted(verdicts, key=lambda p: order.get(p[0], 0)):
        if out and out[-1].verdict is verdict:
            out[-1] = Stretch(verdict, (*out[-1].values, value))
        else:
            out.append(Stretch(verdict, (value,)))
    return tuple(out)
