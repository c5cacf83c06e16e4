"""A comparison's why, from its inspecting runs' `explained` events (`worker/explain.py`):
where each arm's step time goes beside the baseline's (`explain_of`, `comparison.json`'s
`explain`), and whether each arm's numbers stay the baseline's (`parity_of`, its `parity`).
Computed from the events each time, so a reopened comparison says the same."""

from __future__ import annotations

from typing import Any

from xlagui.core.analysis.parity import Parity, judge, loss_differences
from xlagui.core.explain.attribute import top_differences
from xlagui.core.protocol.identity import Role
from xlagui.core.protocol.jsoncodec import plain
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.why import ArmProfile


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


def parity_dicts(inspect_runs: list[RunEntry]) -> dict[str, dict[str, Any]]:
    """`comparison.json`'s `parity`: each arm's `Parity`, with the losses per step the plot
    draws (the arm's, the baseline's, and the reference that drifted most)."""
    base = next((e for e in inspect_runs if e.role is Role.BASELINE), None)
    said = base.explained if base is not None else None
    out: dict[str, dict[str, Any]] = {}
    for arm, parity in parity_of(inspect_runs).items():
        entry = next(e for e in inspect_runs if str(e.variant) == arm)
        found = entry.explained
        if said is None or said.parity is None or found is None or found.parity is None:
            continue
        baseline = said.parity
        reference = max(said.references,
                        key=lambda r: max(loss_differences(r, baseline, parity.steps)))
        losses = {"losses": found.parity.losses, "baseline_losses": baseline.losses,
                  "reference_losses": reference.losses}
        out[arm] = {**parity.to_dict(), **{k: plain(v) for k, v in losses.items()}}
    return out


def parity_of(inspect_runs: list[RunEntry]) -> dict[str, Parity]:
    """Each arm's parity with the baseline, judged against the baseline's nudged reference;
    an arm whose steps cannot be set beside the baseline's (another start) is left out."""
    base = next((e for e in inspect_runs if e.role is Role.BASELINE), None)
    said = base.explained if base is not None else None
    if said is None or said.parity is None or not said.references:
        return {}
    out: dict[str, Parity] = {}
    for entry in inspect_runs:
        found = entry.explained
        if entry is base or found is None or found.parity is None:
            continue
        try:
            out[str(entry.variant)] = judge(said.parity, found.parity, said.references,
                                            entry.arm.precision)
        except ValueError:
            continue
    return out
