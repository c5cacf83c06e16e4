"""How far from the limit, in words and rows: achieved FLOP/s, % of the measured peak, the
roofline's points and the verdict on the gap. Shared by the CLI, the window and the PNG.

Every figure comes from `xlagui.core.analysis.efficiency` (counted work ÷ measured time) and
`xlagui.core.machine.peak` (the probe); this module only formats them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xlagui.core.analysis.efficiency import ArmEfficiency, Efficiency, gap_factors
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.identity import Role
from xlagui.present.levers import mode_words

if TYPE_CHECKING:
    from xlagui.core.analysis.stats import Comparison

DASH = "—"
INTENSITY_NOTE = (
    "arithmetic intensity is estimated from the layer shapes (each layer's input, output and "
    "weights crossing memory once per pass), the same for every arm: the traffic XLA's fusion "
    "saves is not measured"
)


def flop_rate(value: float | None) -> str:
    """FLOP/s with an SI prefix: 38.2 GFLOP/s."""
    if value is None:
        return DASH
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}FLOP/s"
    return f"{value:.3g} FLOP/s"


def flop_count(value: float) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}FLOP"
    return f"{value:.0f} FLOP"


def byte_rate(value: float | None) -> str:
    return DASH if value is None else f"{value / 1e9:.3g} GB/s"


def arm_words(a: ArmEfficiency) -> str:
    """“XLA jit” for the two sides of the XLA question, the arm's own name (“bf16”) else."""
    if a.variant in (Role.BASELINE, Role.XLA):
        try:
            return mode_words(XlaMode(a.xla_mode)).brief
        except ValueError:  # a mode this version does not know (a newer file)
            return a.xla_mode
    return a.variant


def arm_label(a: ArmEfficiency) -> str:
    """“XLA jit, steady step” for a measuring arm, “XLA off, training run 1” for a run (its
    repeat, from the run's id "01-baseline-r1": the id itself is no word of the user's)."""
    mode = arm_words(a)
    if a.source == "steady step":
        return f"{mode}, steady step"
    repeat = re.search(r"-r(\d+)$", a.key)
    return f"{mode}, training run {int(repeat.group(1))}" if repeat else f"{mode}, run {a.key}"


def arm_value(a: ArmEfficiency) -> str:
    parts = [flop_rate(a.achieved_flops_per_second)]
    if a.percent_of_peak is not None:
        parts.append(f"{a.percent_of_peak:.1%} of {peak_words(a)}")
    if a.percent_of_ceiling is not None:
        parts.append(f"{a.percent_of_ceiling:.0%} of the layer ceiling")
    if a.bound:
        parts.append(f"gap: {a.bound}")
    return ", ".join(parts)


def peak_words(a: ArmEfficiency) -> str:
    """Which peak a figure is against: "peak" for float32, "the bfloat16 peak" otherwise."""
    return "peak" if a.compute_dtype == "float32" else f"the {a.compute_dtype} peak"


def other_peaks(e: Efficiency) -> str:
    """The 16-bit peaks beside float32's: ", bfloat16 1.9 TFLOP/s, float16 360 GFLOP/s"."""
    return "".join(
        f", {dtype} {flop_rate(rate)}" for dtype, rate in e.peaks.items() if dtype != "float32"
    )


def headline_arms(e: Efficiency) -> list[ArmEfficiency]:
    """The arms a verdict speaks of: the measuring arms (steady steps), else the runs."""
    steps = [a for a in e.arms if a.source == "steady step"]
    return steps or list(e.arms)


def efficiency_rows(c: Comparison | None) -> list[tuple[str, str]]:
    """(what, value) rows: the work counted, the machine's limits, then every arm and run."""
    e = c.efficiency if c is not None else None
    if e is None:
        return []
    # A model other than the article's CNN is counted in the HLO of its compiled step, with no
    # traffic estimate (`xlagui.core.analysis.efficiency._other_model`): bytes_per_step is 0 then.
    work = (
        f"{flop_count(e.flops_per_step)} (forward + backward + Adam, batch {e.batch_size}, "
        f"{e.image_size} px); est. {e.bytes_per_step / 1e9:.3g} GB moved, "
        f"{e.intensity:.0f} FLOP/byte"
        if e.bytes_per_step
        else f"{flop_count(e.flops_per_step)} (the compiled training step's HLO, batch "
        f"{e.batch_size}, {e.image_size} px)"
    )
    rows = [("Work per step", work)]
    if e.peak_flops_per_second is not None:
        ceiling = (
            f"; largest layers alone ({', '.join(e.ceiling_layers)}) "
            f"{flop_rate(e.ceiling_flops_per_second)}"
            if e.ceiling_flops_per_second is not None
            else f"; largest layers alone ({', '.join(e.ceiling_layers)}) measured at "
            f"{flop_rate(e.beaten_ceiling)}, no ceiling: an arm reached "
            f"{flop_rate(e.ceiling_beaten_by)}"
            if e.beaten_ceiling is not None
            else ""
        )
        rows.append(
            (
                "Machine limit",
                f"{flop_rate(e.peak_flops_per_second)} float32 matmul peak{other_peaks(e)}"
                + (f"; memory {byte_rate(e.bandwidth_bytes_per_second)}"
                   if e.bandwidth_bytes_per_second is not None else "")
                + ceiling,
            )
        )
    else:
        rows.append(("Machine limit", "not measured: achieved FLOP/s only"))
    for a in e.arms:
        rows.append((arm_label(a), arm_value(a)))
    return rows


def no_roofline_words(c: Comparison | None) -> str:
    """Why there is no roofline, saying exactly what was and was not measured ("" when there
    is one, or nothing to say)."""
    e = c.efficiency if c is not None else None
    if e is None or not e.arms or roofline(c) is not None:
        return ""
    if e.peak_flops_per_second is None:
        return ("No roofline: neither the machine's peak nor its memory bandwidth was "
                "measured, so only the achieved FLOP/s are shown.")
    if e.bandwidth_bytes_per_second is None:
        return (f"No roofline: the peak was measured ({flop_rate(e.peak_flops_per_second)}), "
                "the memory bandwidth was not, so the percentages above are of the peak alone.")
    return ""


def limit_verdict(c: Comparison | None) -> str:
    """One or two sentences: how far the arms are from the peak, and what the gap is."""
    e = c.efficiency if c is not None else None
    if e is None or not e.arms:
        return ""
    arms = headline_arms(e)
    unit = "per steady step" if arms[0].source == "steady step" else "per steady epoch"
    if e.peak_flops_per_second is None:
        each = ", ".join(f"{arm_words(a)} "
                         f"{flop_rate(a.achieved_flops_per_second)}" for a in arms)
        return f"Achieved {unit}: {each}; the machine's peak was not measured."
    each = ", ".join(
        f"{a.percent_of_peak:.0%} with {arm_words(a)}"
        + ("" if a.compute_dtype == "float32" or a.peak_flops_per_second is None
           else f" (of the {a.compute_dtype} peak, {flop_rate(a.peak_flops_per_second)})")
        for a in arms
        if a.percent_of_peak is not None
    )
    text = (f"Against the measured peak of {flop_rate(e.peak_flops_per_second)}, the model "
            f"reaches {each} {unit}.")
    # The gap is read for the float32 arms: the layer ceiling was measured in float32.
    plain = [a for a in arms if a.compute_dtype == "float32"] or arms
    best = max(plain, key=lambda a: a.achieved_flops_per_second)
    factors = gap_factors(e, best.achieved_flops_per_second, best.compute_dtype)
    if not factors:
        return text
    bound = max(factors, key=lambda k: factors[k])
    roof = e.roof_flops_per_second
    memory_words = (
        f"memory bandwidth would allow {flop_rate(roof)} at the model's estimated "
        f"{e.intensity:.0f} FLOP/byte"
        if roof is not None and roof < e.peak_flops_per_second
        else f"memory is no limit at the model's estimated {e.intensity:.0f} FLOP/byte "
        f"({flop_rate(e.bandwidth_bytes_per_second * e.intensity)} allowed)"
        if e.bandwidth_bytes_per_second is not None
        else "memory bandwidth was not measured"
    )
    ceiling = e.ceiling_flops_per_second
    if bound == "overhead":
        if ceiling is not None:
            why = (f"the model's largest layers alone run at {flop_rate(ceiling)}, "
                   f"{factors['overhead']:.1f}× the fastest arm's whole step")
        else:
            why = f"the step runs {factors['overhead']:.1f}× below the roofline"
        text += f" The gap is mostly overhead: {why}; {memory_words}."
    elif bound == "compute":
        text += (f" The gap is mostly compute: the model's largest layers alone reach only "
                 f"{flop_rate(ceiling)} ({(ceiling or 0) / e.peak_flops_per_second:.0%} of the "
                 f"peak), and the step gets {1 / factors['overhead']:.0%} of that; "
                 f"{memory_words}.")
    else:
        text += f" The gap is mostly memory: {memory_words}."
    return text


@dataclass(frozen=True)
class RooflinePoint:
    label: str
    variant: str
    intensity: float  # FLOP/byte
    flops_per_second: float
    compute_dtype: str = "float32"


@dataclass(frozen=True)
class Roofline:
    """What a roofline plot draws: the peak and bandwidth lines, the ceiling, a dot per arm."""

    peak: float
    bandwidth: float
    ceiling: float | None
    points: list[RooflinePoint]
    x_range: tuple[float, float]  # FLOP/byte, for a log axis
    note: str = INTENSITY_NOTE
    # The peaks of the other compute dtypes the arms use ({"bfloat16": 1.9e12}): one ceiling
    # each, beside float32's `peak`.
    other_peaks: dict[str, float] = field(default_factory=dict)

    def roof(self, intensity: float) -> float:
        return min(self.peak, self.bandwidth * intensity)

    @property
    def ridge(self) -> float:
        """The intensity where the bandwidth line meets the peak."""
        return self.peak / self.bandwidth


def roofline(c: Comparison | None) -> Roofline | None:
    """The roofline of the headline arms, or None where the data do not allow it honestly
    (no measured peak or bandwidth): then the plain percentages are shown instead."""
    e = c.efficiency if c is not None else None
    if (e is None or e.peak_flops_per_second is None or e.bandwidth_bytes_per_second is None
            or not e.arms):
        return None
    points = [
        RooflinePoint(arm_label(a), a.variant, e.intensity, a.achieved_flops_per_second,
                      a.compute_dtype)
        for a in headline_arms(e)
    ]
    others = {
        p.compute_dtype: peak
        for p in points
        if p.compute_dtype != "float32" and (peak := e.peak(p.compute_dtype)) is not None
    }
    ridge = e.peak_flops_per_second / e.bandwidth_bytes_per_second
    low = min(ridge, e.intensity) / 10
    high = max(ridge, e.intensity) * 10
    return Roofline(
        peak=e.peak_flops_per_second,
        bandwidth=e.bandwidth_bytes_per_second,
        ceiling=e.ceiling_flops_per_second,
        points=points,
        x_range=(low, high),
        other_peaks=others,
    )
