"""The ranked arms chart's data: each arm's speed-up, its interval (the Bonferroni-adjusted one,
as in the arms table) and why it is marked, with the words written beside its bar."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xlagui.core.analysis.ranking import ranked
from xlagui.present.format import arm_bounds
from xlagui.present.intervals import speed_range, speed_words

if TYPE_CHECKING:
    from xlagui.core.analysis.pairs import ArmResult
    from xlagui.core.analysis.stats import Comparison


@dataclass(frozen=True)
class ArmBar:
    """One bar of the ranked arms chart: the speed-up (baseline ÷ arm step time), its
    interval, Bonferroni-adjusted as in the arms table (None where there is none yet), and
    why the arm is marked (empty: it is not)."""

    variant: str
    arm: str
    speedup: float
    low: float | None
    high: float | None
    mark: str
    recommended: bool

    @property
    def caption(self) -> str:
        """What is written next to the bar."""
        words = speed_words(self.speedup)
        if self.low is not None and self.high is not None:
            words += f" ({speed_range(self.low, self.high)})"
        if self.recommended:
            words += " ★"
        return f"{words}  {self.mark}" if self.mark else words


def arm_mark(a: ArmResult) -> str:
    """Why an arm is marked on the chart: NOT VALID, learns worse, or a loss that was not
    finite ("" when none of these)."""
    if not a.valid:
        return "NOT VALID"
    if a.nonfinite_losses:
        return "loss not finite"
    if a.accuracy_ok is False:
        return "learns worse"
    return ""


def arm_bars(c: Comparison | None) -> list[ArmBar]:
    """The ranked arms chart, fastest first (arms without a ratio are left out)."""

    if c is None or c.interleaved is None:
        return []
    return [
        ArmBar(
            variant=a.variant,
            arm=a.arm,
            speedup=1 / a.ratio,
            low=arm_bounds(a)[0],
            high=arm_bounds(a)[1],
            mark=arm_mark(a),
            recommended=c.recommended_arm == a.arm,
        )
        for a in ranked(c.interleaved.arms)
        if a.ratio
    ]
