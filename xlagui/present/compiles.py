"""Every compile and recompile in words (issue 29): per run the count and the time they cost,
each with its function, shapes and reason ("the last partial batch of 8"), and the fix when a
partial batch recompiles (`drop_remainder=True`, or padding to the batch size). One wording for
the window's "Why" tab, the PNG, the Markdown and `xlagui inspect`.

The figures come from `why_data.RunCompilations` (the saved `runs[*].compilations`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence

from xlagui.core.protocol.events import CompiledEvent, WarmupEvent
from xlagui.present.explain import arm_words
from xlagui.present.units import DASH
from xlagui.present.why_data import Compilation, CompileReason, RunCompilations

COMPILE_COLUMNS = ("run", "function", "input shapes", "time", "reason")
FUNCTION_WORDS = {"train": "training step", "eval": "evaluation step", "predict": "prediction"}
FIX = ("The fix: drop the last partial batch (drop_remainder=True: the setting "
       "\u201cDrop the last partial batch\u201d, --drop-remainder), or pad it to the batch size")


def function_words(function: str) -> str:
    return FUNCTION_WORDS.get(function, function)


def _dimension(reason: CompileReason) -> str:
    return "a dimension" if reason.dimension is None else f"dimension {reason.dimension}"


def reason_words(reason: CompileReason) -> str:
    """"the first call"; "the last partial batch of 8"; "a new shape (dimension 1 was 64, now
    48)"; "a new dtype"; "another reason"."""
    if reason.kind == "first_call":
        return "the first call"
    if reason.kind == "new_shape":
        if reason.partial_batch:
            return ("the last partial batch" if reason.now is None
                    else f"the last partial batch of {reason.now}")
        if reason.was is not None and reason.now is not None:
            return f"a new shape ({_dimension(reason)} was {reason.was}, now {reason.now})"
        return f"a new shape ({_dimension(reason)} changed)"
    if reason.kind == "new_dtype":
        return "a new dtype"
    return "another reason (not a new shape or dtype)"


def _time(seconds: float | None) -> str:
    return DASH if seconds is None else f"{seconds:.2f} s"


def compile_rows(runs: Sequence[RunCompilations]) -> list[tuple[str, ...]]:
    """A row per compilation of every run, as `COMPILE_COLUMNS`."""
    return [(run.run_id, c.function, ", ".join(c.shapes) or DASH, _time(c.seconds),
             reason_words(c.reason))
            for run in runs for c in run.compilations]


def run_summary(run: RunCompilations) -> str:
    """"xla-1 (XLA jit_compile): 3 compilations, 6.10 s: training step ×1 (the first call),
    evaluation step ×2 (the first call; the last partial batch of 8)"."""
    n = len(run.compilations)
    head = f"{run.run_id} ({arm_words(run.arm)}): "
    if n == 0:
        return head + "no compilation recorded."
    by_function: dict[str, list[Compilation]] = {}
    for c in run.compilations:
        by_function.setdefault(c.function, []).append(c)
    parts = []
    for function, items in by_function.items():
        reasons = list(Counter(reason_words(c.reason) for c in items).items())
        why = "; ".join(r if k == 1 else f"{r} ×{k}" for r, k in reasons)
        parts.append(f"{function_words(function)} ×{len(items)} ({why})")
    return (f"{head}{n} compilation{'s' if n != 1 else ''}, {_time(run.seconds)}: "
            + ", ".join(parts) + ".")


def partial_batch_advice(runs: Sequence[RunCompilations]) -> str | None:
    """When a last partial batch recompiled a function: which, how often, what it cost, and the
    fix; None when none did."""
    found = [(run, c) for run in runs for c in run.compilations if c.reason.partial_batch]
    if not found:
        return None
    functions = sorted({function_words(c.function) for _run, c in found})
    sizes = sorted({c.reason.now for _run, c in found if c.reason.now is not None})
    cost = sum(c.seconds or 0.0 for _run, c in found)
    size = f" of {', '.join(str(s) for s in sizes)}" if sizes else ""
    n = len(found)
    times = "once" if n == 1 else f"{n} times"
    return (f"The last partial batch{size} recompiled the {' and the '.join(functions)} "
            f"{times} ({cost:.2f} s in all). {FIX}.")


def compile_lines(runs: Sequence[RunCompilations]) -> list[str]:
    """A line per run, then the partial batch's advice when there is one."""
    lines = [run_summary(run) for run in runs]
    advice = partial_batch_advice(runs)
    return [*lines, advice] if advice else lines


def compile_parts(warmup: WarmupEvent, compiled: Sequence[CompiledEvent]) -> str:
    """A measuring worker's "compile + warm-up" figure, its parts in words (its tooltip): each
    compilation it reported, or, before those events, its first step less a steady one."""
    if not compiled:
        return (f"First step {_time(warmup.first_step_seconds)} minus the median of "
                f"{len(warmup.warm_step_seconds)} steady steps; below their spread it is not "
                "measurable")
    parts = [f"{function_words(c.function)}, "
             f"{reason_words(CompileReason.read(dataclasses.asdict(c.reason)))}: {_time(c.seconds)}"
             for c in compiled]
    return ("Every compilation this worker reported, summed (the compile cost subtracts the "
            "baseline's):\n" + "\n".join(parts))
