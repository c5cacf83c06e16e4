"""Arms in the window: "Also measure", a column per arm, every arm on the speed-up plot, the
ranked summary and the PNG's bar chart. Driven with real clicks and the fake measuring worker
(an arm with a mixed precision policy runs its blocks at 0.8 × the XLA side's time, so bf16
ranks first)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import shiboken6
from PIL import Image
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QSpinBox
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click
from xlagui.core.analysis.pairs import RecommendationKind
from xlagui.core.protocol.arms import offered_arms
from xlagui.core.protocol.config import DEFAULTS, EXTRA_ARM_BUDGET_SECONDS
from xlagui.core.protocol.problems import Problem, ProblemKind
from xlagui.core.results.report import ComparisonReport
from xlagui.present import format as fmt
from xlagui.present.verdicts import recommendation_sentence, verdict_sentence
from xlagui.ui.report_png import ReportFigure, render_report_png
from xlagui.ui.settings.settings_panel import SettingsPanel
from xlagui.ui.shared.theme import VARIANT_COLORS
from xlagui.ui.window.main_window import MainWindow


def run_speed_only(qtbot: QtBot, window: MainWindow, *arms: str) -> ComparisonReport:
    """Tick `arms` under "Also measure", tick "Measure speed only", press Run comparison."""
    panel = window.settings_panel
    for name in arms:
        click(qtbot, panel.arm_boxes[name])
    if not window.speed_only.isChecked():
        click(qtbot, window.speed_only)
    with qtbot.waitSignal(window.comparison_finished, timeout=30_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    assert isinstance(report, ComparisonReport)
    return report


def xy(item: object) -> tuple[list[float], list[float]]:
    x, y = item.getData()  # type: ignore[attr-defined]
    return ([] if x is None else list(x), [] if y is None else list(y))


def test_nothing_is_ticked_on_a_cpu_without_bf16(qtbot: QtBot) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    assert list(panel.arm_boxes) == list(offered_arms())
    assert panel.arms == ()
    assert panel.config() is not None and panel.config().arms == ()  # type: ignore[union-attr]


@pytest.mark.cpu_flags("avx512f", "amx_bf16", "amx_tile")
def test_no_extra_arm_is_ticked_by_default_even_where_one_runs_well(qtbot: QtBot) -> None:
    """A new user asking about XLA gets XLA against the baseline: bf16 on an AMX CPU is
    offered, not ticked (a third arm would cost budget and take the headline)."""
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    assert panel.arms == ()
    assert panel.config().arms == ()  # type: ignore[union-attr]
    assert not any(box.isChecked() for box in panel.arm_boxes.values())
    # The box says what the arm is; fp16 says that TensorFlow emulates float16 on CPUs.
    assert "mixed_bfloat16" in panel.arm_boxes["bf16"].toolTip()
    assert not panel._arm_notes["bf16"].isVisible()
    assert panel._arm_notes["fp16"].isVisible()
    assert "emulated" in panel._arm_notes["fp16"].text()


@pytest.mark.cpu_flags("avx512f", "amx_bf16")
def test_the_choice_of_arms_is_kept_and_restored(qtbot: QtBot, tmp_path: Path) -> None:
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    click(qtbot, panel.arm_boxes["jit+fp16"])
    click(qtbot, panel.arm_boxes["fp16"])
    assert panel.arms == ("fp16", "jit+fp16")
    panel.save(store)
    again = SettingsPanel()
    qtbot.addWidget(again)
    assert again.arms == ()  # nothing ticked before the restore
    again.restore(store)
    assert again.arms == ("fp16", "jit+fp16")
    assert again.config().arms == ("fp16", "jit+fp16")  # type: ignore[union-attr]
    assert again.restore_problems == []


def test_an_arm_ticked_runs_in_a_third_column_and_ranks(qtbot: QtBot,
                                                        loaded_window: MainWindow) -> None:
    window = loaded_window
    view = window.runs_view
    assert list(view.columns) == ["baseline", "xla"]
    report = run_speed_only(qtbot, window, "bf16")
    assert report.config.arms == ("bf16",)
    # Three columns, side by side, each filled by its measuring worker.
    assert list(view.columns) == ["baseline", "xla", "bf16"]
    bf16 = view.columns["bf16"]
    assert bf16.isVisible() and bf16.title.text() == "bf16"
    assert bf16.subtitle.text() == "mixed_bfloat16"
    for column in view.columns.values():
        assert column.status_text == "Speed measured"
        assert column.measure_trace is not None and len(column.measure_trace.blocks) >= 6
        # Nothing was trained: no empty loss and wall-time plots, a note instead.
        assert not column.loss_plot.isVisible() and not column.time_plot.isVisible()
        assert column.speed_only_note.isVisible()
    # Three fit in the window's own size (`MainWindow` opens at 1440×900).
    window.resize(1440, 900)
    qtbot.waitUntil(lambda: view.strip.horizontalScrollBar().maximum() == 0, timeout=5_000)
    # The speed-up plot: a curve per arm, in its colour, with a legend.
    speed = view.comparison.speed
    assert speed.shown() == ["xla", "bf16"]
    pairs = report.comparison.interleaved.pairs
    assert len(xy(speed.arms["xla"].estimate)[1]) == pairs
    assert xy(speed.arms["bf16"].estimate)[1] == pytest.approx([1 / 0.4] * pairs, rel=1e-6)
    assert xy(speed.arms["xla"].estimate)[1] == pytest.approx([1 / 0.5] * pairs, rel=1e-6)
    assert speed.arms["bf16"].estimate.opts["pen"].color().name() == VARIANT_COLORS["bf16"]
    assert speed.legend.isVisible()
    assert speed.stop.isVisible()
    # The summary: the answer on XLA first, then the arms ranked, then the recommendation.
    panel = view.comparison
    c = report.comparison
    assert panel.verdict.text().startswith("XLA was 2.00× faster")
    assert "On this machine" not in panel.verdict.text()
    assert panel.arms_box.isVisible()
    assert [row[1] for row in panel.arm_rows] == ["bf16 ★", "jit"]
    assert panel.arm_rows == fmt.arm_table(c)
    assert panel.recommendation.isVisible()
    assert c.recommendation is not None and c.recommendation.arm == "bf16"
    assert c.recommendation.kind is RecommendationKind.ACCURACY_UNKNOWN  # a quick check
    text = recommendation_sentence(c.recommendation)
    assert panel.recommendation.text() == text
    assert text.startswith("On this machine, the fastest configuration is bf16")
    assert "2.50× faster" in text


def test_past_three_columns_the_strip_scrolls(qtbot: QtBot,
                                              loaded_window: MainWindow) -> None:
    window = loaded_window
    view = window.runs_view
    run_speed_only(qtbot, window, "bf16", "fp16", "jit+bf16")
    assert list(view.columns) == ["baseline", "xla", "bf16", "fp16", "jit+bf16"]
    bar = view.strip.horizontalScrollBar()
    assert bar.maximum() > 0
    columns = list(view.columns.values())
    # A third of the width each: the first three in view, the others scrolled to.
    width = view.strip.viewport().width()
    assert all(c.width() >= (width - 20) // 3 for c in columns)
    assert not columns[2].visibleRegion().isEmpty()
    assert columns[4].visibleRegion().isEmpty()
    qtbot.keyClick(bar, Qt.Key.Key_End)
    assert bar.value() == bar.maximum()
    assert not columns[4].visibleRegion().isEmpty()
    assert columns[0].visibleRegion().isEmpty()
    assert view.comparison.speed.shown() == ["xla", "bf16", "fp16", "jit+bf16"]
    assert len(view.comparison.arm_rows) == 4
    # The next comparison without them is back to two columns, one curve, no arms table.
    for name in ("bf16", "fp16", "jit+bf16"):
        click(qtbot, window.settings_panel.arm_boxes[name])
    run_speed_only(qtbot, window)
    assert list(view.columns) == ["baseline", "xla"]
    assert bar.maximum() == 0
    assert not shiboken6.isValid(columns[4]) or not columns[4].isVisible()  # freed, or going
    assert view.comparison.speed.shown() == ["xla"]
    assert not view.comparison.speed.legend.isVisible()
    assert xy(view.comparison.speed.arms["bf16"].estimate)[1] == []
    assert not view.comparison.arms_box.isVisible()
    assert not view.comparison.recommendation.isVisible()


def _pixels_near(image: Image.Image, colour: str, alpha: int, tolerance: int = 6) -> int:
    """How many pixels have `colour` painted with `alpha` over white."""
    rgb = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
    target = rgb * alpha / 255 + 255 * (1 - alpha / 255)
    a = np.asarray(image.convert("RGB"), dtype=float)
    return int((np.abs(a - target).max(axis=2) <= tolerance).sum())


def test_the_png_ranks_the_arms_in_a_bar_chart(qtbot: QtBot, loaded_window: MainWindow,
                                               tmp_path: Path) -> None:
    report = run_speed_only(qtbot, loaded_window, "bf16")
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    assert figure.side_plots == []  # speed only: no empty training panels
    chart = figure.arm_chart
    assert chart is not None
    assert [(b.arm, round(b.speedup, 6), b.mark) for b in chart.bars] == [
        ("bf16", 2.5, ""), ("jit", 2.0, "")]
    assert chart.bars[0].recommended
    # Bars are painted in the arms' colours.
    path = render_report_png(report, tmp_path / "report.png")
    image = Image.open(path)
    assert _pixels_near(image, VARIANT_COLORS["bf16"], 220) > 2000
    assert _pixels_near(image, VARIANT_COLORS["xla"], 220) > 2000
    # An arm that did not engage is marked, and drawn pale.
    c = report.comparison
    c.interleaved.arms = [dataclasses.replace(
        a, valid=False, problems=[Problem(ProblemKind.NO_POLICY, "m2-bf16")])
                          if a.arm == "bf16" else a for a in c.interleaved.arms]
    c.recommended_arm, c.recommendation = None, None
    marked = ReportFigure(report)
    qtbot.addWidget(marked)
    assert marked.arm_chart is not None
    assert [b.mark for b in marked.arm_chart.bars] == ["NOT VALID", ""]
    assert "NOT VALID" in marked.arm_chart.bars[0].caption
    image = Image.open(render_report_png(report, tmp_path / "marked.png"))
    assert _pixels_near(image, VARIANT_COLORS["bf16"], 220) < 50
    assert _pixels_near(image, VARIANT_COLORS["bf16"], 70) > 2000


def test_a_comparison_without_other_arms_has_no_chart(qtbot: QtBot,
                                                      loaded_window: MainWindow) -> None:
    report = run_speed_only(qtbot, loaded_window)
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    assert figure.arm_chart is None
    assert not loaded_window.runs_view.comparison.arms_box.isVisible()
    # The verdict is the whole sentence when XLA is the only arm.
    assert loaded_window.runs_view.comparison.verdict.text() == verdict_sentence(
        report.comparison)


def set_by_typing(qtbot: QtBot, box: QSpinBox, value: int) -> None:
    """What a user does to a spin box: click into it, select all, type the number, Enter."""
    click(qtbot, box)
    qtbot.keyClick(box, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(box, str(value))
    qtbot.keyClick(box, Qt.Key.Key_Return)


def test_the_speed_budget_follows_the_arms_until_the_user_sets_it(
    qtbot: QtBot, tmp_path: Path
) -> None:
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    base, extra = DEFAULTS["budget_seconds"], EXTRA_ARM_BUDGET_SECONDS
    assert panel.budget.value() == base  # the XLA side alone
    assert not panel._note_labels["budget_seconds"].isVisible()
    click(qtbot, panel.arm_boxes["bf16"])
    assert panel.budget.value() == base + extra
    assert panel.config().budget_seconds == base + extra  # type: ignore[union-attr]
    note = panel._note_labels["budget_seconds"]
    assert note.isVisible() and "for each other arm (bf16)" in note.text()
    click(qtbot, panel.arm_boxes["jit+bf16"])
    assert panel.budget.value() == base + 2 * extra
    assert "(bf16, jit+bf16)" in note.text()
    # autocluster is an arm of its own besides the XLA side (jit_compile)
    click(qtbot, panel.arm_boxes["jit+bf16"])
    click(qtbot, panel.arm_boxes["autocluster"])
    assert panel.budget.value() == base + 2 * extra
    # Once the user types a budget, ticking arms leaves it alone, and it is saved.
    set_by_typing(qtbot, panel.budget, 150)
    assert panel.budget.value() == 150
    assert not panel._note_labels["budget_seconds"].isVisible()
    click(qtbot, panel.arm_boxes["bf16"])
    assert panel.budget.value() == 150 and panel.config().budget_seconds == 150  # type: ignore[union-attr]
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    panel.save(store)
    again = SettingsPanel()
    qtbot.addWidget(again)
    again.restore(store)
    assert again.budget.value() == 150 and again.restore_problems == []
    click(qtbot, again.arm_boxes["fp16"])
    assert again.budget.value() == 150
    # Reset: it follows the arms again.
    again.reset_defaults()
    assert again.budget.value() == base
    click(qtbot, again.arm_boxes["fp16"])
    assert again.budget.value() == base + extra


def test_a_budget_the_user_never_set_is_not_saved(qtbot: QtBot, tmp_path: Path) -> None:
    store = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    # Versions before this one saved the default budget every time, under another key.
    store.setValue("settings/budget_seconds", 120)
    panel = SettingsPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.restore(store)
    click(qtbot, panel.arm_boxes["bf16"])
    assert panel.budget.value() == DEFAULTS["budget_seconds"] + EXTRA_ARM_BUDGET_SECONDS
    panel.save(store)
    store.sync()
    keys = store.allKeys()
    assert "settings/budget_seconds" not in keys and "settings/speed_budget" not in keys
    again = SettingsPanel()
    qtbot.addWidget(again)
    again.restore(store)
    assert again.arms == ("bf16",)
    assert again.budget.value() == DEFAULTS["budget_seconds"] + EXTRA_ARM_BUDGET_SECONDS


def test_an_arms_column_is_freed_once_no_comparison_shows_it(
        qtbot: QtBot, loaded_window: MainWindow) -> None:
    """Long sessions: a column holds every point of its last run, so the column of an arm
    the next comparison does not measure is deleted, not kept hidden."""
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    window = loaded_window
    run_speed_only(qtbot, window, "bf16")
    view = window.runs_view
    bf16, xla = view.columns["bf16"], view.columns["xla"]
    run_speed_only(qtbot, window, "bf16")  # untick bf16: XLA alone
    assert list(view.columns) == ["baseline", "xla"]
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert not shiboken6.isValid(bf16)
    assert shiboken6.isValid(xla) and view.columns["xla"] is xla  # always shown: reused
