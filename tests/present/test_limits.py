"""How far from the limit in words: the rows, the verdict and the roofline's data."""

from __future__ import annotations

import pytest

from tests.helpers.limits import PEAK, known_limits, limits_report
from xlagui.core.model import flops
from xlagui.present import limits

STEP = flops.article_cnn_count(48, 2).train_per_step(8)


def test_rates_in_words() -> None:
    assert limits.flop_rate(38.2e9) == "38.2 GFLOP/s"
    assert limits.flop_rate(1.5e12) == "1.5 TFLOP/s"
    assert limits.flop_rate(None) == limits.DASH


def test_rows_name_every_arm_and_run() -> None:
    c = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4).comparison
    rows = dict(limits.efficiency_rows(c))
    assert rows["XLA jit, steady step"] == (
        f"{STEP / 0.4 / 1e9:.3g} GFLOP/s, {STEP / 0.4 / PEAK:.1%} of peak, "
        f"{STEP / 0.4 / 80e9:.0%} of the layer ceiling, gap: overhead"
    )
    assert "XLA off, training run 1" in rows and "XLA jit, training run 1" in rows
    assert rows["Work per step"].startswith(f"{STEP / 1e9:.3g} GFLOP (forward + backward")
    assert "batch 8, 48 px" in rows["Work per step"]


def test_verdict_names_the_gap() -> None:
    c = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4).comparison
    text = limits.limit_verdict(c)
    base, xla = STEP / 0.2 / PEAK, STEP / 0.4 / PEAK
    assert text.startswith(
        f"Against the measured peak of 100 GFLOP/s, the model reaches {base:.0%} with XLA off, "
        f"{xla:.0%} with XLA jit per steady step.")
    assert "mostly overhead" in text and "memory is no limit" in text
    # A step near the layer ceiling leaves compute as the gap.
    fast = limits_report(limits=known_limits(), base_step=STEP / 75e9, xla_step=STEP / 70e9)
    assert "mostly compute" in limits.limit_verdict(fast.comparison)


def test_no_peak_no_roofline() -> None:
    c = limits_report(limits=None).comparison
    assert limits.roofline(c) is None
    assert "peak was not measured" in limits.limit_verdict(c)
    assert dict(limits.efficiency_rows(c))["Machine limit"] == (
        "not measured: achieved FLOP/s only")


def test_roofline_points_are_the_measuring_arms() -> None:
    c = limits_report(limits=known_limits(), base_step=0.2, xla_step=0.4).comparison
    roof = limits.roofline(c)
    assert roof is not None
    assert [(p.label, p.flops_per_second) for p in roof.points] == [
        ("XLA off, steady step", pytest.approx(STEP / 0.2)),
        ("XLA jit, steady step", pytest.approx(STEP / 0.4)),
    ]
    assert roof.ridge == pytest.approx(PEAK / 10e9)
    low, high = roof.x_range
    assert low < roof.ridge < high and low < roof.points[0].intensity < high
    assert roof.roof(1.0) == pytest.approx(10e9) and roof.roof(1e3) == PEAK


def test_no_layer_ceiling_below_a_measured_arm() -> None:
    """Steps at 90 GFLOP/s against layers measured alone at 80: that probe is no ceiling, and
    nothing draws or words it as one (a bf16 arm once sat above "the largest layers alone")."""
    c = limits_report(limits=known_limits(), base_step=STEP / 90e9,
                      xla_step=STEP / 60e9).comparison
    roof = limits.roofline(c)
    assert roof is not None and roof.ceiling is None
    assert all(p.flops_per_second <= roof.peak for p in roof.points)
    rows = dict(limits.efficiency_rows(c))
    assert "of the layer ceiling" not in "".join(rows.values())
    assert "measured at 80 GFLOP/s, no ceiling: an arm reached 90 GFLOP/s" in (
        rows["Machine limit"])
    assert "largest layers alone run at" not in limits.limit_verdict(c)


def test_without_a_roofline_it_says_what_was_measured() -> None:
    """A measured peak without a measured bandwidth: the percentages of the peak stand, and
    the note does not say the peak was not measured."""
    import dataclasses

    no_bandwidth = dataclasses.replace(known_limits(), bandwidth_bytes_per_second=None)
    c = limits_report(limits=no_bandwidth).comparison
    assert limits.roofline(c) is None
    assert limits.limit_verdict(c).startswith("Against the measured peak of 100 GFLOP/s")
    words = limits.no_roofline_words(c)
    assert words.startswith("No roofline: the peak was measured (100 GFLOP/s), the memory "
                            "bandwidth was not")
    assert limits.no_roofline_words(limits_report(limits=None).comparison).startswith(
        "No roofline: neither the machine's peak nor its memory bandwidth was measured")
    assert limits.no_roofline_words(limits_report(limits=known_limits()).comparison) == ""
