"""How figures read on screen and in the PNG report: seconds, bytes, ratios, XLA evidence.

Formatting only; every figure itself comes from `xlagui.core.stats` or a run's summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xlagui.core.evidence import describe

if TYPE_CHECKING:
    from xlagui.core.stats import Comparison

DASH = "—"


def created(stamp: str) -> str:
    """An ISO time stamp in the reader's local time: 2024-05-01 14:03."""
    import datetime as _dt

    try:
        when = _dt.datetime.fromisoformat(stamp)
    except ValueError:
        return stamp or "?"
    if when.tzinfo is not None:
        when = when.astimezone()
    return when.strftime("%Y-%m-%d %H:%M")


def seconds(value: float | None) -> str:
    if value is None:
        return DASH
    if abs(value) >= 100:
        return f"{value:.0f} s"
    if abs(value) >= 10:
        return f"{value:.1f} s"
    return f"{value:.2f} s"


def duration(value: float | None) -> str:
    """A clock-like duration for an ETA: 42 s, 3:07, 1:02:03."""
    if value is None or value < 0:
        return DASH
    total = round(value)
    if total < 60:
        return f"{total} s"
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def size_bytes(value: float | None) -> str:
    if value is None or value <= 0:
        return DASH
    units = ("B", "KB", "MB", "GB", "TB")
    size = float(value)
    unit = 0
    while size >= 1024 and unit < len(units) - 1:
        size /= 1024
        unit += 1
    return f"{size:.0f} {units[unit]}" if unit == 0 or size >= 100 else f"{size:.1f} {units[unit]}"


def overhead(value: float | None) -> str:
    """A first epoch's extra time; below zero it was faster than the steady median, i.e. the
    overhead is lost in the epoch-to-epoch noise, and the raw figure says by how much."""
    if value is None:
        return DASH
    if value < 0:
        return f"none measurable ({seconds(value)})"
    return seconds(value)


def percent(value: float | None) -> str:
    return DASH if value is None else f"{value:.1%}"


def ratio(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f}×"


def evidence(summary: dict[str, Any] | None) -> str:
    """What shows that XLA compiled (or did not) in one run, in words."""
    return describe(summary.get("xla_evidence")) if summary else DASH


def speedup(c: Comparison) -> str:
    """“2.00× faster (95% CI 1.90–2.10×)” from the comparison's speed-up interval."""
    s = c.speedup
    if s is None:
        return DASH
    if s.value >= 1:
        words = f"{s.value:.2f}× faster"
    else:
        words = f"{1 / s.value:.2f}× slower ({s.value:.2f}×)"
    if s.low is not None and s.high is not None and s.low != s.high:
        words += f" (95% CI {s.low:.2f}–{s.high:.2f}×)"
    return words


def total_time(c: Comparison) -> str:
    if c.total_time_ratio is None:
        return DASH
    pct = (1 - c.total_time_ratio) * 100
    change = f"{abs(pct):.0f}% {'less' if pct >= 0 else 'more'}"
    return (
        f"{seconds(c.xla_total_seconds)} with XLA vs {seconds(c.baseline_total_seconds)} "
        f"without ({c.total_time_ratio:.2f}×, {change})"
    )


def compile_cost(c: Comparison) -> str:
    if c.extra_compile_seconds is None:
        return DASH
    extra = c.extra_compile_seconds
    return f"{'+' if extra >= 0 else '−'}{seconds(abs(extra))} in XLA's first epoch"


def memory(c: Comparison) -> str:
    parts = []
    if c.memory_ratio is not None:
        parts.append(f"RAM {c.memory_ratio:.2f}× the baseline's")
    if c.device_memory_ratio is not None:
        parts.append(f"GPU memory {c.device_memory_ratio:.2f}×")
    return ", ".join(parts) or DASH


def comparison_rows(c: Comparison) -> list[tuple[str, str]]:
    """The comparison as (what, value) rows, shared by the window and the PNG report."""
    return [
        ("Speed per steady epoch", speedup(c)),
        (
            "Steady epoch",
            f"{seconds(c.xla_steady_seconds)} with XLA vs "
            f"{seconds(c.baseline_steady_seconds)} without",
        ),
        ("Total wall time", total_time(c)),
        ("Compile cost", compile_cost(c)),
        ("Break-even", c.break_even_text or DASH),
        ("Peak memory", memory(c)),
        ("Accuracy", c.accuracy_text or DASH),
        ("Runs compared", ", ".join(f"{n} {k}" for k, n in c.runs_compared.items()) or DASH),
    ]
