"""Durations, sizes, time stamps and speed-ups in words, with no other import: what an empty
window's first screen may word (a sweep's progress, a file's size) without loading
`present.format` and the analysis it words."""

from __future__ import annotations

DASH = "—"


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
    """A size in bytes, in the largest unit under 1024 of it: 512 B, 1.5 MB, 120 GB."""
    if value is None or value <= 0:
        return DASH
    units = ("B", "KB", "MB", "GB", "TB")
    size = float(value)
    unit = 0
    while size >= 1024 and unit < len(units) - 1:
        size /= 1024
        unit += 1
    return f"{size:.0f} {units[unit]}" if unit == 0 or size >= 100 else f"{size:.1f} {units[unit]}"


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


def speed_words(value: float) -> str:
    """A speed-up (baseline ÷ arm time: above 1 faster) the one way every plot and table says
    it: "2.00× faster", "1.46× slower", never a ratio below 1."""
    return f"{value:.2f}× faster" if value >= 1 else f"{1 / value:.2f}× slower"


def speed_range(low: float, high: float) -> str:
    """An interval of speed-ups in the same words: "1.90–2.10× faster", "1.38–1.56× slower",
    "1.10× slower to 1.05× faster" for one that includes no difference."""
    if low >= 1:
        return f"{low:.2f}–{high:.2f}× faster"
    if high <= 1:
        return f"{1 / high:.2f}–{1 / low:.2f}× slower"
    return f"{1 / low:.2f}× slower to {high:.2f}× faster"
