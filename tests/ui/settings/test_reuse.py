"""A reopened comparison's "Use these settings": one click sets the settings panel to the
comparison's settings (model, arms, budget, image size…)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from tests.helpers.models import FakeModelChecker
from tests.helpers.reports import comparison_report
from tests.ui.conftest import WindowFactory
from xlagui.core.protocol.config import ModelChoice, XlaMode
from xlagui.core.results import history


def _reopen(qtbot: QtBot, window: object, folder: Path) -> None:
    with qtbot.waitSignal(window.report_shown, timeout=10_000):  # type: ignore[attr-defined]
        assert window.open_history_item(folder)  # type: ignore[attr-defined]


def test_use_these_settings_sets_every_field_with_one_click(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path) -> None:
    report = comparison_report(arms=("bf16",))
    report.config = dataclasses.replace(
        report.config, epochs=7, batch_size=16, image_size=96, seed=3, repeats=2,
        augment=False, budget_seconds=200, target_percent=2.0, check=True, drop_remainder=True,
        explain=False,
        xla=XlaMode.AUTOCLUSTER, model=ModelChoice(name="mixer", params=1234))
    history.save(report, tmp_path / "saved")
    window = make_window(model_checker=FakeModelChecker())
    panel = window.settings_panel
    assert (panel.epochs.value(), panel.image_size.value()) != (7, 96)
    _reopen(qtbot, window, tmp_path / "saved")
    button = window.runs_view.reuse_button
    assert button.isVisible()
    click(qtbot, button)
    v = panel.values()
    assert (v["epochs"], v["batch_size"], v["image_size"], v["seed"], v["repeats"]) == (
        7, 16, 96, 3, 2)
    assert (v["augment"], v["budget_seconds"], v["target_percent"], v["check"]) == (
        False, 200, 2.0, True)
    assert v["arms"] == ("bf16",) and v["xla"] == "autocluster"
    assert v["drop_remainder"] is True and v["explain"] is False
    assert v["model"] == ModelChoice(name="mixer")
    assert window.speed_only.isChecked()  # the saved comparison measured speed only
    # The run buttons now run exactly that comparison again.
    config = panel.config()
    assert config is not None and config.budget_seconds == 200


def test_a_model_file_gone_since_is_said_and_the_rest_is_set(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path) -> None:
    report = comparison_report()
    gone = tmp_path / "gone.py"
    report.config = dataclasses.replace(
        report.config, epochs=5,
        model=ModelChoice(source="python", name="gone", file=str(gone), sha256="ab" * 32))
    history.save(report, tmp_path / "saved")
    window = make_window(model_checker=FakeModelChecker())
    _reopen(qtbot, window, tmp_path / "saved")
    click(qtbot, window.runs_view.reuse_button)
    assert window.settings_panel.epochs.value() == 5
    assert window.settings_panel.model_panel.choice().is_article_cnn
    assert "The model was not set" in window.message_bar.label.text()
    assert "gone.py" in window.message_bar.label.text()


def test_a_live_comparison_has_no_reuse_button(qtbot: QtBot, loaded_window: object) -> None:
    window = loaded_window
    with qtbot.waitSignal(window.comparison_finished, timeout=60_000):  # type: ignore[attr-defined]
        assert window.start_comparison()  # type: ignore[attr-defined]
    assert not window.runs_view.reuse_button.isVisible()  # type: ignore[attr-defined]
