"""How far each run is from the machine's limit: achieved FLOP/s per arm and per training run,
against the measured peak, the model's layer ceiling and the memory roofline.

Achieved FLOP/s is the counted work (`xlagui.core.model.flops`) divided by the measured time:
- an arm of the interleaved measurement: FLOPs of one training step ÷ its steady step time
  (the median block's seconds per step; blocks are full batches);
- a training run: the work of one epoch (its full training batches, the optimizer once per
  step, and the forward pass over the validation images) ÷ its steady epoch time, which
  includes the input pipeline and validation: so a training run's figure is lower than its
  measuring arm's whenever the pipeline or validation costs time.

The gap is split along the roofline: peak → what memory bandwidth allows at the model's
estimated arithmetic intensity ("memory") → what the model's largest layers reach alone
("compute": the kernels themselves) → what the whole step reaches ("overhead": everything
between and around those kernels). The largest of the three factors names the gap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from xlagui.core.analysis.summary import arm_timing
from xlagui.core.machine.peak import MachineLimits
from xlagui.core.model.flops import ModelCount, article_cnn_count
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.core.protocol.identity import Role, RunStatus
from xlagui.core.protocol.precision import FLOAT32_DTYPE
from xlagui.core.protocol.record import RunEntry


class ComparisonReport(Protocol):
    """What `compute` reads of a comparison. `xlagui.core.results.report.ComparisonReport` has
    it; that report computes its efficiency with this module, so the type is spelled here instead
    of imported from above."""

    @property
    def config(self) -> RunConfig: ...
    @property
    def dataset(self) -> dict[str, Any]: ...
    @property
    def runs(self) -> Sequence[RunEntry]: ...
    @property
    def measure_runs(self) -> Sequence[RunEntry]: ...
    @property
    def model_check(self) -> ModelEvent | None: ...


@dataclass
class ArmEfficiency:
    """One arm (a measuring worker) or one training run."""

    key: str  # the run id: "m2-xla", "01-baseline-r1", ...
    variant: str  # `Role.BASELINE`, `Role.XLA`, or another arm's name
    xla_mode: str
    source: str  # "steady step" (interleaved) or "steady epoch" (a training run)
    flops: float  # counted FLOPs of what `seconds` timed
    seconds: float
    achieved_flops_per_second: float
    # The arm's compute dtype ("bfloat16" for a bf16 arm), whose matmul peak it is held to.
    compute_dtype: str = FLOAT32_DTYPE
    peak_flops_per_second: float | None = None  # that dtype's peak
    percent_of_peak: float | None = None  # fractions: 0.25 is 25%
    percent_of_ceiling: float | None = None  # the layer ceiling is float32's: float32 arms only
    percent_of_roof: float | None = None
    bound: str = ""  # "compute", "memory" or "overhead" (the largest factor of the gap)


@dataclass
class Efficiency:
    """`comparison.efficiency`: the counted work, the machine's limits, and every arm."""

    image_size: int
    batch_size: int
    flops_per_step: float
    flops_per_sample_train: float
    flops_per_sample_forward: float
    bytes_per_step: float  # estimated
    intensity: float  # FLOPs per byte, estimated
    peak_flops_per_second: float | None = None  # float32's
    peaks: dict[str, float] = field(default_factory=dict)  # per compute dtype (probe 2 on)
    bandwidth_bytes_per_second: float | None = None
    ceiling_flops_per_second: float | None = None
    ceiling_layers: list[str] = field(default_factory=list)
    # The layers' probe when an arm ran faster than it (then `ceiling_flops_per_second` is
    # None: it is no ceiling), and that arm's FLOP/s.
    beaten_ceiling: float | None = None
    ceiling_beaten_by: float | None = None
    device: str = ""
    device_name: str = ""
    limits_key: str = ""
    arms: list[ArmEfficiency] = field(default_factory=list)

    def peak(self, dtype: str = FLOAT32_DTYPE) -> float | None:
        """The matmul peak of a compute dtype (None: not measured)."""
        if dtype in self.peaks:
            return self.peaks[dtype]
        return self.peak_flops_per_second if dtype == FLOAT32_DTYPE else None

    def roof(self, dtype: str = FLOAT32_DTYPE) -> float | None:
        """What the roofline allows at the model's intensity: min(peak, bandwidth × AI)."""
        peak = self.peak(dtype)
        if peak is None or self.bandwidth_bytes_per_second is None:
            return peak
        return min(peak, self.bandwidth_bytes_per_second * self.intensity)

    @property
    def roof_flops_per_second(self) -> float | None:
        return self.roof(FLOAT32_DTYPE)

    def arm(self, key: str) -> ArmEfficiency | None:
        return next((a for a in self.arms if a.key == key), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Efficiency:
        d = dict(d)
        d["arms"] = [ArmEfficiency(**a) for a in d.get("arms", [])]
        return cls(**d)


def gap_factors(e: Efficiency, achieved: float, dtype: str = FLOAT32_DTYPE) -> dict[str, float]:
    """Peak ÷ achieved, split into memory, compute and overhead factors (their product), all
    against the peak of the arm's compute dtype (the layer ceiling is float32's only)."""
    peak = e.peak(dtype)
    if peak is None or achieved <= 0 or e.intensity <= 0:  # no traffic estimate: no split
        return {}
    roof = e.roof(dtype) or peak
    measured = e.ceiling_flops_per_second if dtype == FLOAT32_DTYPE else None
    ceiling = min(measured or roof, roof)
    return {
        "memory": peak / roof,
        "compute": roof / ceiling,
        "overhead": max(ceiling / achieved, 1.0),
    }


def _arm(e: Efficiency, entry: RunEntry, source: str, flops: float,
         seconds: float) -> ArmEfficiency:
    achieved = flops / seconds
    dtype = entry.arm.precision.compute_dtype
    a = ArmEfficiency(
        key=entry.run_id, variant=entry.variant, xla_mode=entry.xla_mode, source=source,
        flops=flops, seconds=seconds, achieved_flops_per_second=achieved,
        compute_dtype=dtype, peak_flops_per_second=e.peak(dtype),
    )
    if a.peak_flops_per_second:
        a.percent_of_peak = achieved / a.peak_flops_per_second
    if e.ceiling_flops_per_second and dtype == FLOAT32_DTYPE:
        a.percent_of_ceiling = achieved / e.ceiling_flops_per_second
    roof = e.roof(dtype) if e.intensity > 0 else None
    if roof:
        a.percent_of_roof = achieved / roof
    factors = gap_factors(e, achieved, dtype)
    if factors:
        a.bound = max(factors, key=lambda k: factors[k])
    return a


def epoch_flops(count: ModelCount, batch_size: int, steps: int, val_count: int) -> float:
    """One training epoch's work: `steps` full batches and the validation forward pass."""
    return float(steps * count.train_per_step(batch_size) + val_count * count.forward_per_sample)


def compute(report: ComparisonReport, limits: MachineLimits | None) -> Efficiency | None:
    """The efficiency figures of `report` from its events, its config and `limits` (None: the
    counted work and achieved FLOP/s only, no percentages)."""
    cfg = report.config
    if not cfg.model.is_article_cnn:
        return _other_model(report, limits)
    classes = len(report.dataset.get("class_names") or []) or 2
    try:
        count = article_cnn_count(cfg.image_size, classes)
    except ValueError:
        return None
    batch = cfg.batch_size
    e = Efficiency(
        image_size=cfg.image_size,
        batch_size=batch,
        flops_per_step=float(count.train_per_step(batch)),
        flops_per_sample_train=float(count.train_per_sample),
        flops_per_sample_forward=float(count.forward_per_sample),
        bytes_per_step=float(count.bytes_per_step(batch)),
        intensity=count.intensity(batch),
    )
    if limits is not None:
        e.peak_flops_per_second = limits.matmul_flops_per_second
        e.peaks = dict(limits.matmul_peaks)
        e.bandwidth_bytes_per_second = limits.bandwidth_bytes_per_second
        e.device, e.device_name, e.limits_key = limits.device, limits.device_name, limits.key
        ceiling = limits.ceiling(cfg.image_size, batch)
        if ceiling is not None:
            e.ceiling_flops_per_second = ceiling.flops_per_second
            e.ceiling_layers = list(ceiling.layers)
    timed: list[tuple[RunEntry, str, float, float]] = []  # entry, source, FLOPs, seconds
    for entry in (e for e in report.measure_runs if e.role is not Role.CHECK):
        timing = arm_timing(entry.variant, entry.xla_mode, entry.events)
        if timing.steady_step_seconds:
            timed.append((entry, "steady step", e.flops_per_step, timing.steady_step_seconds))
    for entry in report.runs:
        summary, started = entry.summary, entry.started
        if entry.status != RunStatus.FINISHED or summary is None or started is None:
            continue
        steady = summary.steady_epoch_seconds
        if not steady or not started.steps_per_epoch:
            continue
        work = epoch_flops(count, batch, started.steps_per_epoch, started.val_count)
        timed.append((entry, "steady epoch", work, float(steady)))
    fastest = max((flops / seconds for _e, _s, flops, seconds in timed), default=0.0)
    if e.ceiling_flops_per_second is not None and fastest > e.ceiling_flops_per_second:
        # A whole step ran faster than the largest layers alone: that probe is no ceiling
        # (a bf16 arm against a float32 probe, or a noisy probe). Shown, it read as a limit
        # below a measured arm; it is kept as a figure, never as a limit.
        e.ceiling_beaten_by = fastest
        e.ceiling_flops_per_second, e.beaten_ceiling = None, e.ceiling_flops_per_second
    e.arms = [_arm(e, entry, source, flops, seconds) for entry, source, flops, seconds in timed]
    return e


def _other_model(report: ComparisonReport, limits: MachineLimits | None) -> Efficiency | None:
    """Any model but the article's CNN: the FLOPs its check counted in the HLO of the compiled
    step (`xlagui.core.model.flops.hlo_flops`) ÷ each arm's steady step, and that as a share of the
    machine's matmul peak of the arm's dtype. No roofline and no gap split: there is no
    memory-traffic estimate nor a layer ceiling for it (`intensity` stays 0). None when the
    step could not be counted."""
    check = report.model_check
    cfg = report.config
    if check is None or not check.flops_per_step or check.batch_size != cfg.batch_size:
        return None
    e = Efficiency(
        image_size=cfg.image_size,
        batch_size=cfg.batch_size,
        flops_per_step=check.flops_per_step,
        flops_per_sample_train=check.flops_per_step / cfg.batch_size,
        flops_per_sample_forward=check.flops_forward_per_sample or 0.0,
        bytes_per_step=0.0,
        intensity=0.0,
    )
    if limits is not None:
        e.peak_flops_per_second = limits.matmul_flops_per_second
        e.peaks = dict(limits.matmul_peaks)
        e.device, e.device_name, e.limits_key = limits.device, limits.device_name, limits.key
    for entry in (e for e in report.measure_runs if e.role is not Role.CHECK):
        timing = arm_timing(entry.variant, entry.xla_mode, entry.events)
        if timing.steady_step_seconds:
            e.arms.append(_arm(e, entry, "steady step", e.flops_per_step,
                               timing.steady_step_seconds))
    return e
