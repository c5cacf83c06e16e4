"""Reopening a saved comparison (`history.load`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.helpers.reports import comparison_report
from xlagui.core.results import history


def test_a_reopened_comparison_is_computed_from_its_events(tmp_path: Path) -> None:
    """The figures of a reopened comparison are those its runs' events give, as the live one
    computed them, not a summary saved beside them (another version's, or an earlier one)."""
    report = comparison_report(arms=("bf16",), training=True, rounds=10, jitter=0.05)
    live = report.comparison
    assert live is not None and live.speedup is not None
    stale = dataclasses.replace(live, speedup=dataclasses.replace(live.speedup, value=9.0),
                                baseline_steady_step_seconds=None)
    report.comparison = stale
    history.save(report, tmp_path / "saved")
    reopened = history.load(tmp_path / "saved").comparison
    assert reopened is not None
    assert reopened.to_dict() == live.to_dict()
