"""What compiling costs a comparison, recompiles counted: XLA's extra compile time over every
compilation its measuring worker reported beside the baseline's (`extra_compiles`), and the
training steps its faster steps take to pay it back (`break_even_steps`).

The measuring workers report each compilation as a `compiled` event
(`xlagui.core.worker.compiles`): the training step's first call, the evaluation's, and every
recompile (a last partial validation batch under XLA). Comparisons saved before those events
keep the first step's figure (`CompileBasis.FIRST_STEP`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xlagui.core.analysis.stats import Comparison, CompileBasis
from xlagui.core.protocol.compiles import CompileReasonKind
from xlagui.core.protocol.identity import Role
from xlagui.core.protocol.record import RunEntry


def compile_seconds(entry: RunEntry) -> float | None:
    """What every compilation of the run cost, in all; None for a run that reported none (a
    stream from before `compiled` events)."""
    found = entry.compilations
    return sum(c.seconds for c in found) if found else None


def recompiles(entry: RunEntry) -> int:
    """The run's compilations beyond each function's first call."""
    return sum(1 for c in entry.compilations if c.reason.kind is not CompileReasonKind.FIRST_CALL)


def extra_compiles(c: Comparison, measure_runs: Sequence[RunEntry]) -> None:
    """XLA's extra compile time over all its compilations (the baseline's taken away), in
    place of the first step's, when both measuring workers reported theirs; then the
    break-even in training steps."""
    base = next((r for r in measure_runs if r.variant == Role.BASELINE), None)
    xla = next((r for r in measure_runs if r.variant == Role.XLA), None)
    if base is None or xla is None or c.compile_measured_on != CompileBasis.FIRST_STEP:
        return
    b, x = compile_seconds(base), compile_seconds(xla)
    if b is None or x is None:
        return
    c.extra_compile_seconds = x - b if x > b else None
    c.compile_measured_on = CompileBasis.COMPILATIONS
    c.break_even_steps = break_even_steps(c)


def break_even_steps(c: Comparison) -> int | None:
    """The training steps after which XLA's faster steps pay back its extra compile time: only
    when XLA is clearly faster (the speed-up's interval lies above 1)."""
    extra = c.extra_compile_seconds
    base, xla = c.baseline_steady_step_seconds, c.xla_steady_step_seconds
    speedup = c.speedup
    if extra is None or base is None or xla is None or speedup is None:
        return None
    clearly_faster = speedup.value > 1 and speedup.low is not None and speedup.low > 1
    if not clearly_faster or xla >= base:
        return None
    return math.ceil(extra / (base - xla))
