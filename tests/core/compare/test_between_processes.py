"""A comparison against the earlier ones of its settings on this machine (issue 37, item 7):
the workflow reads them from History, checks its interval against them and widens it when
fresh pairs of workers disagree beyond their intervals; a comparison saved elsewhere (the
command line's `--out`) is kept in History for the next. The workers are fakes that speak the
protocol (tests/helpers/fake_measure_worker.py), each run a fresh pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.core.compare.test_workflow import fake_command
from tests.core.compare.test_workflow import scan as scan  # the fixture, shared
from xlagui.core import compare
from xlagui.core.compare import ComparisonRequest, Watcher
from xlagui.core.data.scan import DatasetScan
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import history
from xlagui.core.results.report import ComparisonReport
from xlagui.present.machine_load import load_lines


def quick(scan: DatasetScan, out: Path, root: Path | None, ratio: float,
          **changes: Any) -> ComparisonReport:
    """A speed-only comparison whose XLA side is `ratio` × the baseline, each block drawn
    within ±5% (the same draws every run: only the ratio differs between runs)."""
    fake = {"step": 0.01, "ratio": ratio, "jitters": {"xla": 0.05}, **changes.pop("fake", {})}
    config = RunConfig(batch_size=changes.pop("batch_size", 4), image_size=48, quick=True,
                       budget_seconds=10, target_percent=3.0, extra={"fake": fake}, **changes)
    request = ComparisonRequest(scan=scan, config=config, out_dir=out, inspect=False,
                                worker_command=fake_command, history=root)
    return compare.run(request, Watcher(), TaskState())


def interval(report: ComparisonReport) -> tuple[float, float, float]:
    i = report.comparison.interleaved if report.comparison is not None else None
    assert i is not None and i.ratio is not None and i.low is not None and i.high is not None
    return i.ratio, i.low, i.high


def test_a_rerun_that_disagrees_widens_its_interval_and_says_so(
        scan: DatasetScan, tmp_path: Path) -> None:
    root = tmp_path / "history"
    first = quick(scan, tmp_path / "one", root, 2.0)
    assert first.earlier == [] and first.comparison is not None
    assert first.comparison.interleaved is not None
    assert first.comparison.interleaved.processes is None
    assert len(history.list_items(root)) == 1  # kept in History: its --out is elsewhere

    second = quick(scan, tmp_path / "two", root, 2.6)
    c = second.comparison
    assert c is not None and c.interleaved is not None
    p = c.interleaved.processes
    assert p is not None and p.widened and p.earlier == 1 and p.p < 0.05
    ratio, low, high = interval(second)
    assert ratio == pytest.approx(2.6, rel=0.02)
    assert low < p.pair_low and high > p.pair_high  # the spread between processes included
    assert c.speedup is not None and c.speedup.low == pytest.approx(1 / high)
    assert c.interleaved.arms[0].low == pytest.approx(low)  # one figure, everywhere
    saved = json.loads((tmp_path / "two" / "comparison.json").read_text(encoding="utf-8"))
    assert [round(e["ratio"], 1) for e in saved["earlier"]] == [2.0]
    assert saved["comparison"]["interleaved"]["processes"]["widened"] is True
    assert saved["comparison"]["interleaved"]["low"] == pytest.approx(low)
    reopened = history.load(tmp_path / "two")  # recomputed from the events and the record
    assert interval(reopened) == pytest.approx((ratio, low, high))
    line = next(t for t in load_lines(c) if "processes" in t)
    assert "Fresh worker processes disagree" in line and "1 earlier measurement " in line


def test_a_rerun_that_agrees_keeps_its_interval(scan: DatasetScan, tmp_path: Path) -> None:
    root = tmp_path / "history"
    quick(scan, tmp_path / "one", root, 2.0)
    again = quick(scan, tmp_path / "two", root, 2.0)
    c = again.comparison
    assert c is not None and c.interleaved is not None
    p = c.interleaved.processes
    assert p is not None and not p.widened and p.earlier == 1
    assert interval(again)[1:] == (p.pair_low, p.pair_high)
    assert any(t.startswith("It agrees with 1 earlier measurement") for t in load_lines(c))


@pytest.mark.parametrize("other", [{"batch_size": 8}, {"fake": {"other_share": 0.5},
                                                        "busy_percent": 10}])
def test_other_settings_and_a_busy_machine_are_not_counted(
        scan: DatasetScan, tmp_path: Path, other: dict[str, Any]) -> None:
    # An earlier comparison of other settings, or one measured on a busy machine (its spread
    # is its neighbour's), is not a fresh pair of the same measurement.
    root = tmp_path / "history"
    quick(scan, tmp_path / "one", root, 2.0, **other)
    later = quick(scan, tmp_path / "two", root, 2.6)
    assert later.earlier == []
    assert later.comparison is not None and later.comparison.interleaved is not None
    assert later.comparison.interleaved.processes is None


def test_without_history_nothing_is_read_or_kept(scan: DatasetScan, tmp_path: Path) -> None:
    report = quick(scan, tmp_path / "one", None, 2.0)
    assert report.earlier == []
    assert history.list_items(tmp_path / "history") == []
