"""The allowed range and the default of every setting, and the error a setting outside its
range raises.

Below `config` and `arms`: both check settings against these.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# With its three unpadded 5x5 convolutions and 2x2 poolings, the article's CNN needs
# ((s - 4) // 2 - 4) // 2 - 4 >= 1, i.e. s >= 36.
MIN_IMAGE_SIZE = 36
# The smallest image any model takes: keras.applications refuse inputs under 32x32.
SMALLEST_IMAGE_SIZE = 32


class ConfigError(ValueError):
    """A setting outside its allowed range; the message names the range."""


@dataclass(frozen=True)
class Range:
    low: int
    high: int

    def check(self, name: str, value: Any) -> int:
        number: int
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                number = int(str(value), 10)
            except ValueError:
                raise ConfigError(f"{name} must be a whole number, got {value!r}") from None
        else:
            number = value
        if not self.low <= number <= self.high:
            raise ConfigError(f"{name} must be between {self.low} and {self.high}, got {number}")
        return number


RANGES: dict[str, Range] = {
    "epochs": Range(1, 1000),
    "batch_size": Range(1, 4096),
    "image_size": Range(SMALLEST_IMAGE_SIZE, 1024),
    "repeats": Range(1, 20),
    "seed": Range(0, 2**31 - 1),
    "holdout_percent": Range(5, 50),
    "budget_seconds": Range(10, 3600),
    # What else may use the machine's cores during a timed block or epoch before it counts as
    # disturbed (`xlagui.core.protocol.interference`), in percent.
    "busy_percent": Range(1, 100),
}
# Each arm measured besides the first adds this much to the default speed budget: every arm
# needs pairs of its own, and the rounds are shared. At 150 px on 2 cores, with jit and bf16,
# 120 s in all left the bf16 interval at ±5–9%; 210 s gave ±3.0–3.5% in 250 s of wall time;
# 180 s keeps the whole comparison near 4 minutes (BENCHMARKS.md, "Arms on this machine").
EXTRA_ARM_BUDGET_SECONDS = 60


def default_budget_seconds(measured_arms: int) -> int:
    """The speed budget a comparison gets unless the user sets one: `DEFAULTS["budget_seconds"]`
    for the XLA side alone, plus `EXTRA_ARM_BUDGET_SECONDS` for every further arm."""
    extra = max(0, measured_arms - 1) * EXTRA_ARM_BUDGET_SECONDS
    return min(RANGES["budget_seconds"].high, int(DEFAULTS["budget_seconds"]) + extra)


# The interleaved measurement's precision goal: stop at a 95% interval of ±target percent.
TARGET_PERCENT_RANGE = (0.5, 50.0)

DEFAULTS: dict[str, Any] = {
    "epochs": 50,
    "batch_size": 64,
    "image_size": 150,
    "repeats": 1,
    "seed": 0,
    "holdout_percent": 20,
    "device": "cpu",
    "xla": "jit",
    "augment": True,
    "budget_seconds": 120,
    "target_percent": 3.0,
    "quick": False,
    "arms": (),
    # Calibrated on this project's 2-core machine (BENCHMARKS.md, "What a busy machine looks
    # like", run twice): quiet, anything else used 0.5–0.7% of the cores in the median block,
    # at most 9.5% in any block; beside one busy core, 48.8–49.2% in the median block. 10 sits
    # between them: a quiet block's rare spike sets one round aside, which costs a round; a
    # neighbour missed would move the answer.
    "busy_percent": 10,
}


def _busy_percent_from_environment() -> None:
    """`XLAGUI_BUSY_PERCENT` sets the default threshold (a whole percentage; the test suite
    sets 100, the rule off, where a test is not about it: two tests side by side are each
    other's busy neighbour)."""
    text = os.environ.get("XLAGUI_BUSY_PERCENT", "")
    if text:
        DEFAULTS["busy_percent"] = RANGES["busy_percent"].check("XLAGUI_BUSY_PERCENT", text)


_busy_percent_from_environment()
