"""A comparison's why, from its inspecting runs' `explained` events (`worker/explain.py`):
where each arm's step time goes beside the baseline's (`explain_of`, `comparison.json`'s
`explain`), and whether each arm's numbers stay the baseline's (`parity_of`, its `parity`).
Computed from the events each time, so a reopened comparison says the same."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from xlagui.core.analysis.parity import Parity, judge, loss_differences
from xlagui.core.explain.attribute import top_differences
from xlagui.core.protocol.identity import Role
from xlagui.core.protocol.jsoncodec import plain
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.why import ArmProfile, ParityTrace


def explain_of(inspect_runs: list[RunEntry]) -> dict[str, Any] | None:
    """`{arms: {arm: profile}, top_differences: [...]}`, or None when no arm was profiled."""
    profiles: dict[str, ArmProfile] = {}
    for entry in inspect_runs:
        found = entry.explained
        if found is not None and found.profile is not None:
            profiles[str(entry.variant)] = found.profile
    if not profiles:
        return None
    baseline = str(Role.BASELINE)
    tops = top_differences(profiles, baseline=baseline) if baseline in profiles else []
    return {"arms": {arm: p.to_dict() for arm, p in profiles.items()},
            "top_differences": [d.to_dict() for d in tops]}


def _judged(inspect_runs: list[RunEntry]
            ) -> Iterator[tuple[str, Parity, ParityTrace, ParityTrace, tuple[ParityTrace, ...]]]:
    """Each arm's (variant, parity, its trace, the baseline's, the baseline's references),
    judged against those references; an arm whose steps cannot be set beside the baseline's
    (another start) is left out."""
    base = next((e for e in inspect_runs if e.role is Role.BASELINE), None)
    said = base.explained if base is not None else None
    if said is None or said.parity is None or not said.references:
        return
    for entry in inspect_runs:
        found = entry.explained
        if entry is base or found is None or found.parity is None:
            continue
        try:
            parity = judge(said.parity, found.parity, said.references, entry.arm.precision)
        except ValueError:
            continue
        yield str(entry.variant), parity, found.parity, said.parity, said.references


def parity_of(inspect_runs: list[RunEntry]) -> dict[str, Parity]:
    """Each arm's parity with the baseline (`_judged`)."""
    return {arm: parity for arm, parity, *_ in _judged(inspect_runs)}


def parity_dicts(inspect_runs: list[RunEntry]) -> dict[str, dict[str, Any]]:
    """`comparison.json`'s `parity`: each arm's `Parity`, with the losses per step the plot
    draws (the arm's, the baseline's, and the reference that drifted most)."""
    out: dict[str, dict[str, Any]] = {}
    for arm, parity, trace, baseline, references in _judged(inspect_runs):
        reference = max(references,
                        key=lambda r: max(loss_differences(r, baseline, parity.steps)))
        losses = {"losses": trace.losses, "baseline_losses": baseline.losses,
                  "reference_losses": reference.losses}
        out[arm] = {**parity.to_dict(), **{k: plain(v) for k, v in losses.items()}}
    return out
