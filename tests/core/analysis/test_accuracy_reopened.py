"""An arm is held against the baseline like with like: both sides' training runs where both
trained, else both quick checks; so the recommendation said live is the one said reopened."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.reports import comparison_report
from xlagui.core.results import history
from xlagui.present.verdicts import recommendation_sentence


def _sentence(report: object) -> str:
    c = report.comparison  # type: ignore[attr-defined]
    return recommendation_sentence(c.recommendation)


def test_an_untrained_arm_is_held_against_the_baselines_quick_check(tmp_path: Path) -> None:
    # bf16 the fastest, measured only; the baseline and XLA also trained (their runs end at
    # 90% validation accuracy, every quick check at 75%).
    report = comparison_report(arms=("bf16",), steps={"bf16": 0.05}, training=True)
    report.runs = [r for r in report.runs if r.variant != "bf16"]
    measured = comparison_report(arms=("bf16",), steps={"bf16": 0.05})  # before the training
    report.recompute()
    bf16 = next(a for a in report.comparison.interleaved.arms if a.arm == "bf16")
    assert bf16.baseline_val_accuracy == 0.75  # the baseline's quick check, not its 90%
    assert bf16.val_accuracy == 0.75
    jit = next(a for a in report.comparison.interleaved.arms if a.arm == "jit")
    assert jit.baseline_val_accuracy == jit.val_accuracy == pytest.approx(0.9)  # both trained
    live = _sentence(report)
    assert "bf16" in live and "75.0% vs 75.0% baseline" in live
    assert _sentence(measured) == live  # the training runs of others change nothing of bf16
    folder = history.save(report, tmp_path / "saved").parent
    assert _sentence(history.load(folder)) == live
