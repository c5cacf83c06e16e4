"""Seconds in words, and what compiling cost: one meaning everywhere, the extra over the
baseline's (its first step, first epoch, or compiles), never an arm's whole first step."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.analysis.stats import CompileBasis
from xlagui.present.units import DASH as DASH  # re-exported

if TYPE_CHECKING:
    from xlagui.core.analysis.pairs import ArmResult


# What the extra is over, by what it was measured on.
OVER: dict[str, str] = {
    CompileBasis.FIRST_STEP: "over the baseline's first step",
    CompileBasis.FIRST_EPOCH: "over the baseline's first epoch",
    CompileBasis.COMPILATIONS: "in compiles and recompiles over the baseline's",
}


def seconds(value: float | None) -> str:
    if value is None:
        return DASH
    if abs(value) >= 100:
        return f"{value:.0f} s"
    if abs(value) >= 10:
        return f"{value:.1f} s"
    return f"{value:.2f} s"


def extra_compile_words(extra: float, basis: str) -> str:
    """"+5.07 s over the baseline's first step"; at or below zero, plainly none."""
    if extra <= 0:
        return f"none (its first step was {seconds(-extra)} shorter than the baseline's)"
    return f"+{seconds(extra)} {OVER.get(basis, OVER[CompileBasis.FIRST_STEP])}"


def arm_compile_cost(a: ArmResult) -> str:
    """An arm's compile cost, as XLA's is said: its compile and warm-up beyond the baseline's
    (each first step less its steady step), not its whole first step."""
    if a.extra_compile_seconds is None:
        return "not measurable"
    return extra_compile_words(a.extra_compile_seconds, CompileBasis.FIRST_STEP)
