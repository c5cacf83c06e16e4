"""Colours and the style sheet shared by the window and the PNG report."""

from __future__ import annotations

from xlagui.core.protocol.config import XlaMode

# An XLA mode measured as an arm of its own (`--arms autocluster`): one colour per mode, every
# mode but the baseline's (tests/ui/shared/test_theme.py checks none is missing).
MODE_COLORS = {
    XlaMode.AUTOCLUSTER: "#c0392b",
    XlaMode.JIT: "#b8860b",
    XlaMode.AUTO: "#795548",
}
VARIANT_COLORS = {
    "baseline": "#3b6ea8",
    "xla": "#e07b22",
    "val": "#4d5560",
    # The other arms (`xlagui.core.protocol.arms.OFFERED`), each its own.
    "bf16": "#2e9e5b",
    "fp16": "#8e44ad",
    "jit+bf16": "#16a3b8",
    "jit+fp16": "#d35f9a",
    **{mode.value: colour for mode, colour in MODE_COLORS.items()},
}
# Arms without a colour of their own take one of these, always the same for the same name.
EXTRA_COLORS = ("#6d8c1f", "#7b5e3b", "#3f51b5", "#00897b", "#ad1457", "#5d4037")
VARIANT_TITLES = {"baseline": "Baseline", "xla": "XLA"}

# Status chips: (text colour, background)
STATUS_COLORS = {
    "idle": ("#5f6368", "#eceff1"),
    "queued": ("#5f6368", "#eceff1"),
    "not run": ("#5f6368", "#eceff1"),
    "starting": ("#1a5fb4", "#e3edfb"),
    "compiling": ("#6a3fb0", "#efe7fb"),
    "running": ("#1a5fb4", "#e3edfb"),
    "stopping": ("#8a5a00", "#fdf0d5"),
    "finished": ("#1e7b34", "#e3f4e6"),
    "cancelled": ("#8a5a00", "#fdf0d5"),
    "interrupted": ("#8a5a00", "#fdf0d5"),
    "error": ("#b3261e", "#fbe4e2"),
}

SEVERITY_COLORS = {"error": "#b3261e", "warning": "#9a6700", "info": "#5f6368", "ok": "#1e7b34"}

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


def chip_style(state: str) -> str:
    fg, bg = STATUS_COLORS.get(state, STATUS_COLORS["idle"])
    return f"color: {fg}; background: {bg};"
