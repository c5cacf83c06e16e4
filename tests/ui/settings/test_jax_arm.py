"""The JAX arm under "Also measure" (issue 39): offered when JAX is installed; listed but greyed,
with its install line, when it is not. With real clicks."""

from __future__ import annotations

import importlib.util

import pytest
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from xlagui.ui.settings.settings_panel import SettingsPanel


def _panel(qtbot: QtBot) -> SettingsPanel:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    return panel


def test_without_jax_the_arm_is_greyed_with_its_install_line(
        qtbot: QtBot, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "jax" else real(name, *a))
    panel = _panel(qtbot)
    box = panel.arm_boxes["jax"]
    assert not box.isEnabled()
    assert box.toolTip().endswith("Needs JAX: pip install 'xlagui[jax]'")
    note = panel._arm_notes["jax"]
    assert note.isVisible() and note.text() == "Needs JAX: pip install 'xlagui[jax]'"
    click(qtbot, box)  # a click on a greyed box does nothing
    assert panel.arms == ()


def test_with_jax_the_arm_is_ticked_like_any_other(qtbot: QtBot,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == "jax" else real(name, *a))
    panel = _panel(qtbot)
    box = panel.arm_boxes["jax"]
    assert box.isEnabled() and not panel._arm_notes["jax"].isVisible()
    assert "KERAS_BACKEND=jax" in box.toolTip()
    click(qtbot, box)
    config = panel.config()
    assert panel.arms == ("jax",) and config is not None and config.arms == ("jax",)
