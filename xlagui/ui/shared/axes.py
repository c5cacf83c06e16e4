"""Axes that say their values in words people read at 100%: a log axis labelled on its decades
alone, and speed-ups as "2× slower … same … 2× faster"."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def decade_label(exponent: int) -> str:
    """10**exponent as people write it on an axis: 0.01, 1, 100, 10000, then 10⁵."""
    if -2 <= exponent <= 4:
        return f"{10.0 ** exponent:.{max(0, -exponent)}f}"
    return "10" + str(exponent).translate(SUPERSCRIPTS)


class DecadeAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A log axis whose words are on its decades alone (1, 10, 100): pyqtgraph labels every
    minor tick of an axis spanning a decade or two, and "3·10¹4·10¹5·10¹…" ran together. An
    axis that holds fewer than two decades labels 2 and 5 times them too."""

    def tickValues(self, minVal: float, maxVal: float,  # pyqtgraph's names
                   size: float) -> list[tuple[float, list[float]]]:
        # pyqtgraph's log levels repeat the decades among the minor ticks: each once.
        seen: set[float] = set()
        levels = []
        for spacing, values in super().tickValues(minVal, maxVal, size):
            fresh = [v for v in values if round(v, 6) not in seen]
            seen.update(round(v, 6) for v in fresh)
            levels.append((spacing, fresh))
        return levels

    def logTickStrings(self, values: list[float], scale: float,  # pyqtgraph's name
                       spacing: float) -> list[str]:
        low, high = sorted(self.range)
        decades = math.floor(high) - math.ceil(low) + 1
        words = []
        for v in values:
            exponent = round(v)
            if abs(v - exponent) < 1e-6:
                words.append(decade_label(exponent))
                continue
            mantissa = 10 ** (v - math.floor(v))
            near = round(mantissa)
            if decades < 2 and near in (2, 5) and abs(mantissa - near) < 1e-3:
                words.append(f"{near * 10.0 ** math.floor(v):g}")
            else:
                words.append("")
        return words


def speed_ticks(low: float, high: float) -> list[tuple[float, str]]:
    """Ticks of a log axis of speed-ups between `low` and `high` (log10), in the words every
    table uses: "5× slower", "same", "2× faster"; never a ratio below 1."""
    ticks = []
    for exponent in range(-4, 5):
        for mantissa in (1, 2, 5):
            factor = mantissa * 10.0 ** exponent
            if factor < 1 or not low <= np.log10(factor) <= high:
                continue
            name = f"{factor:g}×"
            ticks.append((float(np.log10(factor)), "same" if factor == 1 else f"{name} faster"))
            if factor > 1 and low <= -np.log10(factor):
                ticks.append((float(-np.log10(factor)), f"{name} slower"))
    return sorted(set(ticks))


def speed_label(value: float) -> str:
    """A speed-up tick in words: "same" at 1, "1.5× faster" above, "2.5× slower" below."""
    if value <= 0:
        return ""
    if abs(value - 1) < 1e-9:
        return "same"
    return f"{value:.3g}× faster" if value > 1 else f"{1 / value:.3g}× slower"


class SpeedAxis(pg.AxisItem):  # type: ignore[misc]  # pyqtgraph is untyped
    """A linear axis of speed-ups that says them as every table does ("2× slower", "same",
    "1.5× faster"): a tick at 0.5 read as a speed-up of a half beside "2.00× slower"."""

    def tickValues(self, minVal: float, maxVal: float,  # pyqtgraph's names
                   size: float) -> list[tuple[float, list[float]]]:
        """Ticks where the words are round on both sides of "same": 1.25× and 2× slower (0.8,
        0.5), not 1.11× and 1.43× (0.9, 0.7), which pyqtgraph's linear ticks gave."""
        ticks = round_speedups(minVal, maxVal, max(3, int(size // 45)))
        if len(ticks) < 2:  # a narrow range far from "same": pyqtgraph's own, said in words
            return super().tickValues(minVal, maxVal, size)  # type: ignore[no-any-return]
        return [(1.0, ticks)]

    def tickStrings(self, values: list[float], scale: float,  # pyqtgraph's name
                    spacing: float) -> list[str]:
        return [speed_label(v * scale) for v in values]


# Round factors of a speed-up, coarsest first: each is said as "N× faster" (N) and "N× slower"
# (1/N), and the axis takes the finest list that fits.
SPEED_STEPS = (
    (2.0, 5.0, 10.0, 20.0, 50.0, 100.0),
    (1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0),
    (1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 10.0, 20.0),
    (1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 7.5, 10.0),
    (1.05, 1.1, 1.15, 1.2, 1.25, 1.3, 1.4, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0),
    (1.02, 1.04, 1.06, 1.08, 1.1, 1.12, 1.15, 1.2, 1.25, 1.3, 1.4, 1.5, 2.0),
)


def round_speedups(low: float, high: float, most: int) -> list[float]:
    """The speed-ups between `low` and `high` to tick, "same" among them when in range: of
    `SPEED_STEPS`, the list with the most ticks there, at most `most` (the coarsest's when
    none fits)."""
    chosen: list[float] = []
    for steps in SPEED_STEPS:
        values = sorted({1.0, *steps, *(1 / k for k in steps)})
        inside = [v for v in values if low <= v <= high]
        if not chosen or len(chosen) < len(inside) <= most:
            chosen = inside
    return chosen
