"""Colours and the style sheet shared by the window and the PNG report."""

from __future__ import annotations

import zlib

from xlagui.core.protocol.identity import Role
from xlagui.core.protocol.levers import LeverValue
from xlagui.present.chips import ChipState
from xlagui.present.levels import Level

# Each lever value measured as an arm of its own (`--arms autocluster`, `bf16`), keyed by the
# value's colour key (`LeverValue.colour` in `xlagui.core.protocol.levers`): one colour per
# value of the levers that bring colours (tests/ui/shared/test_theme.py checks none is
# missing); a value without a colour key takes one of `EXTRA_COLORS` (`value_color`).
VALUE_COLORS = {
    "autocluster": "#c0392b",
    "jit": "#b8860b",
    "auto": "#795548",
    "bf16": "#2e9e5b",
    "fp16": "#8e44ad",
    "dnn": "#546e7a",
    "nodnn": "#827717",
    "jax": "#6a1b9a",
}
VARIANT_COLORS: dict[str, str] = {
    Role.BASELINE: "#3b6ea8",
    Role.XLA: "#e07b22",
    "val": "#4d5560",
    # The other arms (`xlagui.core.protocol.arms.offered_arms`), each its own: a value of one lever
    # by its colour key, and the arms that join two.
    "jit+bf16": "#16a3b8",
    "jit+fp16": "#d35f9a",
    **VALUE_COLORS,
}
# Arms and values without a colour of their own take one of these, always the same for the
# same name (`fallback_color`).
EXTRA_COLORS = ("#6d8c1f", "#7b5e3b", "#3f51b5", "#00897b", "#ad1457", "#5d4037")
VARIANT_TITLES: dict[str, str] = {Role.BASELINE: "Baseline", Role.XLA: "XLA"}

# Status chips: (text colour, background)
STATUS_COLORS = {
    ChipState.IDLE: ("#5f6368", "#eceff1"),
    ChipState.QUEUED: ("#5f6368", "#eceff1"),
    ChipState.NOT_RUN: ("#5f6368", "#eceff1"),
    ChipState.STARTING: ("#1a5fb4", "#e3edfb"),
    ChipState.COMPILING: ("#6a3fb0", "#efe7fb"),
    ChipState.RUNNING: ("#1a5fb4", "#e3edfb"),
    ChipState.STOPPING: ("#8a5a00", "#fdf0d5"),
    ChipState.FINISHED: ("#1e7b34", "#e3f4e6"),
    ChipState.CANCELLED: ("#8a5a00", "#fdf0d5"),
    ChipState.INTERRUPTED: ("#8a5a00", "#fdf0d5"),
    ChipState.ERROR: ("#b3261e", "#fbe4e2"),
}

# The colour of a line's text at each level (a note, a problem, a scan's state).
LEVEL_COLORS = {
    Level.ERROR: "#b3261e",
    Level.WARNING: "#9a6700",
    Level.INFO: "#5f6368",
    Level.OK: "#1e7b34",
}

APP_STYLE = """
QLabel#Heading { font-size: 15pt; font-weight: 600; }
QLabel#SubHeading { color: #5f6368; }
QLabel#ColumnTitle { font-size: 14pt; font-weight: 600; }
QLabel#Caption { color: #6b6f76; font-size: 8.5pt; }
QLabel#Figure { font-weight: 600; }
QLabel#Placeholder { color: #6b6f76; font-size: 12pt; }
QLabel#Note { font-size: 8.5pt; }
QLabel#Chip { border-radius: 9px; padding: 2px 10px; font-weight: 600; }
QFrame#Card { background: palette(base); border: 1px solid #d8dce1; border-radius: 6px; }
QPushButton#Primary { font-weight: 600; padding: 6px 14px; }
"""


def chip_style(state: ChipState) -> str:
    fg, bg = STATUS_COLORS[state]
    return f"color: {fg}; background: {bg};"


def fallback_color(key: str) -> str:
    """The colour of `EXTRA_COLORS` for a name without one of its own: the same every time."""
    return EXTRA_COLORS[zlib.crc32(key.encode()) % len(EXTRA_COLORS)]


def variant_color(variant: str) -> str:
    """The colour of a side ("baseline", "xla") or an arm ("bf16", "jit+fp16", "threads2")."""
    return VARIANT_COLORS.get(variant) or fallback_color(variant)


def value_color(value: LeverValue) -> str:
    """The colour of a lever's value: its own (`VALUE_COLORS`), else the fallback palette's
    for its colour key or its part, which is the colour of the arm of that value alone."""
    return VALUE_COLORS.get(value.colour) or fallback_color(value.colour or value.part)
