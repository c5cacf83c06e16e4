"""The break-even counts recompiles: with `compiled` events from both measuring workers, XLA's
extra compile time is over every compile and recompile, and the interleaved measurement says
after how many steps XLA's faster steps pay it back (`xlagui.core.analysis.compiles`)."""

from __future__ import annotations

import math

from tests.helpers.reports import comparison_report
from xlagui.core.analysis.compiles import compile_seconds, recompiles
from xlagui.core.analysis.stats import Comparison, CompileBasis
from xlagui.core.protocol.compiles import CompileReason, CompileReasonKind, StepFunction
from xlagui.core.protocol.events import CompiledEvent
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results.report import ComparisonReport
from xlagui.present.format import compile_cost

FIRST = CompileReason(CompileReasonKind.FIRST_CALL)
PARTIAL = CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 2, True)


def with_compiles(entry: RunEntry, *found: tuple[StepFunction, float, CompileReason]) -> None:
    """`found` compiled events, inserted before the run's last (its `finished`)."""
    events = [CompiledEvent(function=fn, shapes=["float32[8,48,48,3]"], seconds=secs,
                            reason=why, step_seconds=secs + 0.1) for fn, secs, why in found]
    entry.events[-1:-1] = events


def compiled_report() -> ComparisonReport:
    """A comparison whose measuring workers reported their compilations: the baseline's
    training step (1.0 s) and evaluation (0.2 s); XLA's (4.0 s, 0.5 s) and the evaluation
    again for the last partial batch (0.5 s)."""
    report = comparison_report()
    base, xla = report.measure_runs[:2]
    with_compiles(base, (StepFunction.TRAIN, 1.0, FIRST), (StepFunction.EVAL, 0.2, FIRST))
    with_compiles(xla, (StepFunction.TRAIN, 4.0, FIRST), (StepFunction.EVAL, 0.5, FIRST),
                  (StepFunction.EVAL, 0.5, PARTIAL))
    return report


def test_without_compiled_events_the_first_step_is_the_basis() -> None:
    report = comparison_report()
    c = report.comparison
    assert c is not None and c.compile_measured_on == CompileBasis.FIRST_STEP
    assert c.break_even_steps is None
    assert compile_seconds(report.measure_runs[0]) is None


def test_recompiles_count_in_the_compile_cost_and_the_break_even() -> None:
    report = compiled_report()
    base, xla = report.measure_runs[:2]
    c = report.recompute()
    assert (recompiles(base), recompiles(xla)) == (0, 1)
    assert c.compile_measured_on == CompileBasis.COMPILATIONS
    assert math.isclose(c.extra_compile_seconds or 0, 5.0 - 1.2)
    assert c.baseline_steady_step_seconds and c.xla_steady_step_seconds
    gain = c.baseline_steady_step_seconds - c.xla_steady_step_seconds
    assert c.break_even_steps == math.ceil(3.8 / gain)  # 0.1 s a step: 38 steps
    assert compile_cost(c).endswith("in compiles and recompiles over the baseline's")
    # Saved and reopened: the figures are kept, and a recompute finds them again.
    again = ComparisonReport.from_dict(report.to_dict())
    assert again.comparison is not None and again.comparison.break_even_steps == c.break_even_steps
    assert again.recompute().break_even_steps == c.break_even_steps
    assert again.measure_runs[1].compilations[2].reason.partial_batch


def test_no_break_even_when_xla_is_not_faster() -> None:
    report = comparison_report(steps={"xla": 0.2})
    base, xla = report.measure_runs[:2]
    with_compiles(base, (StepFunction.TRAIN, 1.0, FIRST))
    with_compiles(xla, (StepFunction.TRAIN, 3.0, FIRST))
    c = report.recompute()
    assert c.compile_measured_on == CompileBasis.COMPILATIONS
    assert c.break_even_steps is None


def test_a_comparison_saved_before_has_no_break_even_steps() -> None:
    saved = comparison_report().comparison
    assert saved is not None
    data = saved.to_dict()
    del data["break_even_steps"]
    assert Comparison.from_dict(data).break_even_steps is None



def test_each_sides_compile_figure_is_what_the_compile_cost_subtracts() -> None:
    """The sides' "compile + warm-up" (the CLI's speed table, the window's columns: see
    tests/ui/runs/test_one_definition.py) and the compile cost are one figure: each side's
    every compilation, summed, and their difference. The columns once showed the training
    step's first step alone (7.82 s and 1.75 s beside a compile cost of +9.03 s that also
    counted the evaluation's compiles)."""
    from xlagui.core.analysis.summary import run_compile_seconds

    report = compiled_report()
    base, xla = report.measure_runs[:2]
    c = report.recompute()
    assert c.interleaved is not None and c.interleaved.baseline and c.interleaved.xla
    assert [t.compile_seconds for t in (c.interleaved.baseline, c.interleaved.xla)] == [1.2, 5.0]
    assert run_compile_seconds(base.events) == 1.2 and run_compile_seconds(xla.events) == 5.0
    assert math.isclose(c.extra_compile_seconds or 0, 5.0 - 1.2)
    # Without compiled events (an older stream): the first step beyond a steady one.
    assert run_compile_seconds([e for e in base.events if e.type != "compiled"]) != 1.2
