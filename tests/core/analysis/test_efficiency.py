"""Achieved FLOP/s per arm and per run, and the % of the measured peak, in the comparison's
JSON and CSV."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.helpers.limits import CEILING, PEAK, known_limits, limits_report, measure_events
from xlagui.core.analysis.efficiency import gap_factors
from xlagui.core.model import flops
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results import export
from xlagui.present.limits import efficiency_rows as limits_rows
from xlagui.present.limits import roofline

STEP = flops.article_cnn_count(48, 2).train_per_step(8)


def test_each_arm_and_run_has_its_achieved_rate_and_share_of_the_peak() -> None:
    report = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4)
    e = report.comparison.efficiency
    assert e is not None and e.flops_per_step == STEP
    base, xla = e.arm("m1-baseline"), e.arm("m2-xla")
    assert base is not None and xla is not None
    assert base.achieved_flops_per_second == pytest.approx(STEP / 0.2)
    assert xla.achieved_flops_per_second == pytest.approx(STEP / 0.4)
    assert xla.percent_of_peak == pytest.approx(STEP / 0.4 / PEAK)
    assert xla.percent_of_ceiling == pytest.approx(STEP / 0.4 / CEILING)
    # A training run: 4 full batches of 8 and the forward pass over 100 validation images
    # in its 1.0 s steady epoch (the recorded stream's figures).
    count = flops.article_cnn_count(48, 2)
    run = e.arm("01-baseline-r1")
    assert run is not None and run.source == "steady epoch"
    assert run.achieved_flops_per_second == pytest.approx(
        4 * count.train_per_step(8) + 100 * count.forward_per_sample)
    assert [a.key for a in e.arms] == ["m1-baseline", "m2-xla", "01-baseline-r1", "02-xla-r1"]
    assert all(a.bound == "overhead" for a in e.arms)


def test_gap_is_named_by_its_largest_factor() -> None:
    e = limits_report(limits=known_limits()).comparison.efficiency
    assert e is not None
    # At 80% of the ceiling, the remaining factor (1.25) is smaller than compute's (100/80).
    factors = gap_factors(e, 0.8 * CEILING)
    assert max(factors, key=lambda k: factors[k]) == "compute"
    e.bandwidth_bytes_per_second = 1e8  # a slow memory: the roof drops far below the peak
    factors = gap_factors(e, e.roof_flops_per_second * 0.9)  # type: ignore[operator]
    assert max(factors, key=lambda k: factors[k]) == "memory"


def test_the_figures_round_trip_through_the_json(tmp_path: Path) -> None:
    report = limits_report(limits=known_limits())
    path = export.write_json(report, tmp_path / "comparison.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    arms = {a["key"]: a for a in data["comparison"]["efficiency"]["arms"]}
    assert arms["m2-xla"]["achieved_flops_per_second"] == pytest.approx(STEP / 0.4)
    assert arms["m2-xla"]["percent_of_peak"] == pytest.approx(STEP / 0.4 / PEAK)
    assert data["machine_limits"]["matmul_flops_per_second"] == PEAK
    again = export.read_json(path)
    assert again.comparison is not None and again.comparison.efficiency == (
        report.comparison.efficiency)
    # A reopened comparison recomputes the same figures from its events and limits.
    assert again.recompute().efficiency == report.comparison.efficiency


def test_the_csv_has_a_row_per_arm_and_run(tmp_path: Path) -> None:
    report = limits_report(limits=known_limits())
    rows = export.read_csv(export.write_csv(report, tmp_path / "c.csv"))
    achieved = {r["run_id"]: float(r["value"]) for r in rows
                if r["row"] == "efficiency" and r["metric"] == "achieved_flops_per_second"}
    assert set(achieved) == {"m1-baseline", "m2-xla", "01-baseline-r1", "02-xla-r1"}
    assert achieved["m2-xla"] == pytest.approx(STEP / 0.4)
    share = {r["run_id"]: float(r["value"]) for r in rows
             if r["row"] == "efficiency" and r["metric"] == "percent_of_peak"}
    assert share["m1-baseline"] == pytest.approx(STEP / 0.2 / PEAK)
    peak_row = next(r for r in rows if r["metric"] == "peak_flops_per_second")
    assert float(peak_row["value"]) == PEAK


def test_without_limits_only_the_achieved_rates() -> None:
    e = limits_report(limits=None).comparison.efficiency
    assert e is not None and e.peak_flops_per_second is None
    xla = e.arm("m2-xla")
    assert xla is not None and xla.achieved_flops_per_second > 0
    assert xla.percent_of_peak is None and xla.bound == ""


def test_a_16_bit_arm_is_held_to_its_own_dtypes_peak() -> None:
    """bf16 on AMX outruns the float32 peak: against float32's it would read over 100%."""
    limits = dataclasses.replace(known_limits(), matmul_peaks={"float32": PEAK,
                                                               "bfloat16": 4 * PEAK})
    report = limits_report(limits=limits, training=False)
    bf16 = RunEntry("m3-bf16", "bf16", 1, "off", "finished",
                    measure_events("m3-bf16", "bf16", "off", 0.008), precision="mixed_bfloat16")
    report.measure_runs.append(bf16)
    report.recompute()
    e = report.comparison.efficiency if report.comparison else None
    assert e is not None
    arm = e.arm("m3-bf16")
    base = e.arm("m1-baseline")
    assert arm is not None and base is not None
    assert arm.compute_dtype == "bfloat16" and arm.peak_flops_per_second == 4 * PEAK
    assert arm.percent_of_peak == pytest.approx(arm.achieved_flops_per_second / (4 * PEAK))
    assert arm.percent_of_peak < 1 < arm.achieved_flops_per_second / PEAK
    assert arm.percent_of_ceiling is None  # the layer ceiling was measured in float32
    assert base.compute_dtype == "float32" and base.peak_flops_per_second == PEAK
    rows = dict(limits_rows(report.comparison))
    assert "of the bfloat16 peak" in rows["bf16, steady step"]
    assert ", bfloat16 400 GFLOP/s" in rows["Machine limit"]
    roof = roofline(report.comparison)
    assert roof is not None and roof.other_peaks == {"bfloat16": 4 * PEAK}


def test_another_model_is_held_to_the_peak_without_a_roofline() -> None:
    """A model other than the article's CNN: its work is what its check counted in the HLO;
    each arm gets its share of the peak, but no roofline and no gap split (there is no
    traffic estimate for it)."""
    from xlagui.core.protocol.config import ModelChoice
    from xlagui.core.protocol.events import PROTOCOL_VERSION, ModelEvent
    from xlagui.present.limits import limit_verdict

    report = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4, training=False)
    mixer = ModelChoice(name="mixer", params=309_649)
    report.config = report.config.replace(model=mixer)
    report.model_check = ModelEvent(protocol=PROTOCOL_VERSION, model=mixer, image_size=48,
                                    batch_size=8, flops_per_step=4e9,
                                    flops_forward_per_sample=1.5e8)
    report.recompute()
    e = report.comparison.efficiency
    assert e is not None and e.flops_per_step == 4e9 and e.intensity == 0
    xla = e.arm("m2-xla")
    assert xla is not None
    assert xla.percent_of_peak == pytest.approx(4e9 / 0.4 / PEAK)
    assert xla.percent_of_ceiling is None and xla.percent_of_roof is None and not xla.bound
    assert roofline(report.comparison) is None
    rows = dict(limits_rows(report.comparison))
    assert "the compiled training step's HLO" in rows["Work per step"]
    assert "matmul peak" in rows["Machine limit"] and "memory" not in rows["Machine limit"]
    verdict = limit_verdict(report.comparison)
    assert verdict.startswith("Against the measured peak") and "gap" not in verdict
    # Checked at another batch size, the count does not apply: no figures at all.
    report.model_check = dataclasses.replace(report.model_check, batch_size=16)
    report.recompute()
    assert report.comparison.efficiency is None
