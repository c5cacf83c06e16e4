"""Every XLA mode has what the window and the reports say and draw for it: a new mode added
to `XlaMode` without its words or its colour fails here, not in front of a user."""

from __future__ import annotations

from xlagui.core.protocol.config import XlaMode
from xlagui.present.levers import mode_words
from xlagui.ui.shared import plots, theme


def test_every_xla_mode_has_its_words_and_its_colour() -> None:
    for mode in XlaMode:
        words = mode_words(mode)
        assert words.label and words.short and words.words and words.how and words.brief, mode
        if mode is not XlaMode.OFF:  # the baseline's colour is the baseline's
            assert mode in theme.MODE_COLORS, mode
            assert plots.color(mode.value).name() == theme.MODE_COLORS[mode], mode


def test_each_mode_has_a_colour_of_its_own() -> None:
    colours = list(theme.MODE_COLORS.values())
    assert len(set(colours)) == len(colours)
    assert not set(colours) & {theme.VARIANT_COLORS["baseline"], theme.VARIANT_COLORS["xla"]}
