"""Every lever value, chip state and level has what the window and the reports draw for it: a
new XLA mode or precision added to the lever table without its words or its colour fails here,
not in front of a user."""

from __future__ import annotations

import pytest

from tests.helpers.levers import KNOB, register_knob
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.identity import Role
from xlagui.core.protocol.levers import PRECISION, XLA, registered
from xlagui.present.levels import Level
from xlagui.present.levers import mode_words
from xlagui.present.run_status import ChipState
from xlagui.ui.shared import dialogs, plots, theme

XLA_AUTOCLUSTER = XLA.of(XlaMode.AUTOCLUSTER)


def test_every_xla_mode_has_its_words() -> None:
    for mode in XlaMode:
        words = mode_words(mode)
        assert words.label and words.short and words.words and words.how and words.brief, mode


def test_every_lever_value_has_its_colour() -> None:
    # A colour key has its colour; a lever that brings none takes the fallback palette's
    # (below). The levers shipped bring theirs.
    for lever in registered():
        assert not lever.default.colour, lever.name  # the baseline's colour is the baseline's
        for value in lever.values[1:]:
            assert value.colour or lever.name not in (XLA.name, PRECISION.name), value.value
            if value.colour:
                assert value.colour in theme.VALUE_COLORS, value.value
                assert plots.color(value.colour).name() == theme.VALUE_COLORS[value.colour]
                assert theme.value_color(value) == theme.VALUE_COLORS[value.colour]


def test_each_value_has_a_colour_of_its_own() -> None:
    colours = list(theme.VALUE_COLORS.values())
    assert len(set(colours)) == len(colours)
    assert not set(colours) & {theme.VARIANT_COLORS[Role.BASELINE],
                               theme.VARIANT_COLORS[Role.XLA]}
    assert plots.color("xla").name() == theme.VARIANT_COLORS[Role.XLA]  # a variant as saved


def test_a_value_without_a_colour_takes_the_fallback_palettes_as_its_arm_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    register_knob(monkeypatch)
    knob2 = KNOB.values[1]
    assert not knob2.colour and knob2.colour not in theme.VALUE_COLORS
    colour = theme.value_color(knob2)
    assert colour in theme.EXTRA_COLORS and colour == theme.value_color(knob2)  # stable
    assert plots.color("knob2").name() == colour  # the arm of it alone: its column, its curve
    assert theme.value_color(XLA_AUTOCLUSTER) == theme.VALUE_COLORS["autocluster"]


def test_every_chip_state_and_level_has_its_colours() -> None:
    assert set(theme.STATUS_COLORS) == set(ChipState)
    assert set(theme.LEVEL_COLORS) == set(Level)
    assert set(dialogs.MESSAGE_COLORS) == set(Level)
