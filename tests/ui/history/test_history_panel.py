"""History: every comparison is saved and listed; reopening one shows its plots and summary."""

from __future__ import annotations

import html
import json
import os
import platform
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QStyle, QTreeWidgetItem, QWidget
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, click, click_tab, item_at, wait_until, watching
from tests.helpers.reports import comparison_report
from tests.ui.conftest import WindowFactory
from xlagui.core.machine.cpu import cpu_name
from xlagui.present.history import cpu_words
from xlagui.present.report import history_title
from xlagui.present.verdicts import history_verdict, short_verdict, verdict_sentence
from xlagui.ui.history.history_panel import HistoryPanel, PathRole
from xlagui.ui.shared import dialogs
from xlagui.ui.window.main_window import TAB_RUNS, MainWindow


def curve(item: object) -> list[float]:
    _x, y = item.getData()  # type: ignore[attr-defined]
    return [] if y is None else list(np.round(y, 6))


def test_a_finished_comparison_is_listed_and_reopens(qtbot: QtBot, loaded_window: MainWindow,
                                                     make_window: WindowFactory,
                                                     tmp_path: Path) -> None:
    window = loaded_window
    panel = window.history_panel
    with qtbot.waitSignal(panel.refreshed, timeout=20_000):
        with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as finished:
            assert window.start_comparison()
    # The message that it finished says the verdict's first sentence, from the comparison's
    # data: the speed and the compile cost.
    c = finished.args[0].comparison
    short = short_verdict(c)
    assert short.startswith("XLA was 2.00× faster") and "Total wall time" not in short
    assert f"Comparison finished.</b> {html.escape(short)} The details" in (
        window.message_bar.text())
    assert len(panel.items) == 1
    item = panel.items[0]
    assert history_title(item) == "XLA vs baseline on elephants"
    assert item.comparison is not None and history_verdict(item) == verdict_sentence(c)
    assert (item.folder / "comparison.json").is_file()
    assert panel.tree.topLevelItemCount() == 1
    row = panel.tree.topLevelItem(0)
    assert row is not None and row.text(3) == "2" and row.text(4) == "XLA 2.00× faster"
    # The machine: this computer, by its CPU and cores; its name only in the tooltip.
    assert row.text(2) == f"{cpu_words(cpu_name())}, {os.cpu_count()} cores"
    assert f"Computer&#x27;s name: {html.escape(platform.node())}" in row.toolTip(2)
    assert panel.selected_folder() == item.folder  # the new one is selected
    live = window.runs_view.columns["xla"]
    live_loss = curve(live.batch_smooth)
    live_time = curve(live._time_curves[0])

    # A fresh window (as after a restart) lists it and replays it into the same columns.
    other = make_window(show=True)
    with qtbot.waitSignal(other.history_panel.refreshed, timeout=10_000):
        other.history_panel.refresh()
    assert [i.folder for i in other.history_panel.items] == [item.folder]
    with qtbot.waitSignal(other.report_shown, timeout=10_000):
        other.history_panel.select_folder(item.folder)
        other.history_panel.open_button.click()
    assert other.tabs.currentIndex() == TAB_RUNS
    view = other.runs_view
    xla = view.columns["xla"]
    assert xla.status_text == "Finished"
    assert curve(xla.batch_smooth) == live_loss
    assert curve(xla._time_curves[0]) == live_time
    assert "2.00× faster" in view.comparison.verdict.text()
    assert view.comparison.rows["Speed per steady epoch"].text() == (
        "2.00× faster (no interval: a single measurement)"
    )
    assert view.comparison.rows["Speed per training step"].text().startswith("2.00× faster")
    assert item.folder.name in view.folder_link.text()
    assert other.export_action.isEnabled()


def test_a_comparison_saved_in_words_is_listed_with_its_sentence_and_reopens(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    """A comparison.json from before verdicts were data holds its verdict as a sentence and
    nothing typed: History lists it with that sentence; reopened, it is derived from its
    events again and the summary says the verdict from that."""
    from xlagui.core.results import history

    report = comparison_report(arms=("bf16",), training=True)
    folder = tmp_path / "history" / "old"
    history.save(report, folder)
    path = folder / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    saved = data["comparison"]
    for key in ("break_even", "accuracy", "recommendation"):
        saved.pop(key)
    for arm in saved["interleaved"]["arms"]:
        arm.pop("accuracy")
        arm.update(accuracy_text="as the old version said it", accuracy_from="")
    words = "XLA was 2.00× faster (in an old version's words)."
    saved.update(verdict=words, accuracy_text="", break_even_text="", break_even_epoch=None,
                 recommendation="On this machine, (old words).")
    path.write_text(json.dumps(data), encoding="utf-8")
    panel = window.history_panel
    with qtbot.waitSignal(panel.refreshed, timeout=10_000):
        panel.refresh()
    row = panel.tree.topLevelItem(0)
    assert row is not None and row.text(4) == "XLA was 2.00× faster (in an old version's words)"
    assert html.escape(words) in row.toolTip(4)
    with qtbot.waitSignal(window.report_shown, timeout=10_000):
        panel.select_folder(folder)
        panel.open_button.click()
    c = window.comparisons.report.comparison  # type: ignore[union-attr]
    assert c is not None and c.recommendation is not None and c.break_even is not None
    summary = window.runs_view.comparison
    assert summary.verdict.text() == verdict_sentence(c) != words
    assert summary.recommendation.text().startswith("On this machine, the fastest")


def test_the_rows_fit_the_list_and_say_which_arms_on_which_machine(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path) -> None:
    """At 1280×800 and 1920×1080 every cell is readable or elided with all of it in its
    tooltip, the verdict is never cut, nothing hides behind a horizontal scroll bar; a
    comparison of other arms names them, the machine is its CPU (the host name "vm" only in
    the tooltip), and a speed-only comparison says so, not "Runs 0" (issue 31)."""
    from xlagui.core.results import history

    for name, arms, training in (("a-plain", (), True), ("b-bf16", ("bf16",), False),
                                 ("c-three", ("bf16", "jit+bf16"), False)):
        report = comparison_report(arms=arms, training=training)
        report.environment.update(hostname="vm", cpu_count=16,
                                  cpu="Intel(R) Xeon(R) Platinum 8480+ CPU @ 2.00GHz")
        history.save(report, tmp_path / "history" / name)
    window = make_window()
    window.resize(1280, 800)
    panel = window.history_panel
    with watching(window, ModalAnswerer()):
        click_tab(qtbot, window.tabs, "History")
        with qtbot.waitSignal(panel.refreshed, timeout=10_000):
            click(qtbot, panel.refresh_button)
        listed = [item_at(panel.tree, i) for i in range(panel.tree.topLevelItemCount())]
        rows = {Path(row.data(0, PathRole)).name: row for row in listed}
        three, bf16, plain = rows["c-three"], rows["b-bf16"], rows["a-plain"]
        assert bf16.text(1) == "XLA and bf16 vs baseline on tiny"
        assert three.text(1) == "XLA, bf16 and jit+bf16 vs baseline on tiny"
        assert three.text(2) == "Intel Xeon Platinum 8480+, 16 cores"
        assert "vm" in three.toolTip(2) and "vm" not in three.text(2)
        assert (three.text(3), bf16.text(3), plain.text(3)) == (
            "speed only, 8 pairs", "speed only, 8 pairs", "2")
        assert three.text(4) == "XLA 2.00× faster ★; bf16 1.25× faster; jit+bf16 1.25× faster"
        for size in ((1280, 800), (1920, 1080)):
            resize(qtbot, window, size)
            for row in (three, bf16, plain):
                _assert_readable(panel, row, size)


def resize(qtbot: QtBot, window: MainWindow, size: tuple[int, int]) -> None:
    window.resize(*size)
    wait_until(qtbot, lambda: window.size().toTuple() == size, f"the window is {size}")


def _assert_readable(panel: HistoryPanel, row: QTreeWidgetItem, size: tuple[int, int]) -> None:
    tree = panel.tree
    header = tree.header()
    margin = 2 * (tree.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree)
                  + 1)
    assert header.length() <= tree.viewport().width(), f"{size}: scrolls sideways"
    assert tree.horizontalScrollBar().maximum() == 0, size
    for column in range(tree.columnCount()):
        text = row.text(column)
        fits = tree.fontMetrics().horizontalAdvance(text) + margin <= header.sectionSize(column)
        if column == 4:
            assert fits, f"{size}: the verdict is cut: {text!r}"
        assert fits or html.escape(text) in row.toolTip(column), (size, column, text)


def test_a_damaged_history_entry_is_explained(qtbot: QtBot, window: MainWindow,
                                              tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "history" / "broken"
    folder.mkdir(parents=True)
    (folder / "comparison.json").write_text('{"format": "something else"}')
    shown: list[str] = []

    def record(parent: QWidget | None, title: str, message: str, hint: str = "",
               details: str = "") -> None:
        shown.append(title)

    monkeypatch.setattr(dialogs, "show_error", record)
    assert not window.open_history_item(folder)
    assert shown == ["Cannot reopen"]
    assert window.comparisons.report is None


def test_reopening_waits_while_a_comparison_runs(qtbot: QtBot, make_window: WindowFactory,
                                                 dataset: Path, tmp_path: Path) -> None:
    from tests.ui.conftest import fake_worker

    window = make_window(worker=fake_worker(delay=0.03))
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    window.settings_panel.batch_size.setValue(4)
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as blocker:
        assert window.start_comparison()
        assert not window.open_history_item(tmp_path)
        assert "running" in window.message_bar.text()
    assert blocker.args[0].runs[0].status == "finished"


def test_reopening_a_long_measurement_estimates_each_round_once(
        qtbot: QtBot, window: MainWindow, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The speed-up plot's curves are replayed round on round: each arm's estimate is updated
    once per round, never estimated from scratch per round (which formed and sorted all the
    Walsh averages of every prefix again: O(n³ log n) for n rounds)."""
    from xlagui.core.analysis import pairs
    from xlagui.core.results import history

    calls = {"rounds": 0, "from_scratch": 0}
    add, walsh = pairs.RunningEstimate.add, pairs.walsh_averages

    def counted_add(self: pairs.RunningEstimate, ratio: float) -> pairs.RatioEstimate:
        calls["rounds"] += 1
        return add(self, ratio)

    def counted_walsh(values: list[float]) -> object:
        calls["from_scratch"] += 1
        return walsh(values)

    monkeypatch.setattr(pairs.RunningEstimate, "add", counted_add)
    monkeypatch.setattr(pairs, "walsh_averages", counted_walsh)
    seen = {}
    for rounds in (30, 120):
        report = comparison_report(arms=("bf16",), rounds=rounds, jitter=0.05)
        folder = tmp_path / f"rounds-{rounds}"
        history.save(report, folder)
        calls.update(rounds=0, from_scratch=0)
        with qtbot.waitSignal(window.report_shown, timeout=10_000):
            assert window.open_history_item(folder)
        seen[rounds] = dict(calls)
        # What is drawn is still each round's estimate from scratch.
        speed = window.runs_view.comparison.speed
        assert speed.shown() == ["xla", "bf16"]
        for arm in report.comparison.interleaved.arms:
            drawn = curve(speed.arms[arm.variant].estimate)
            assert len(drawn) == rounds
            assert drawn[-1] == round(1 / arm.ratio, 6)
            ratios = [p.ratio for p in _pairs_of(report, arm.variant)]
            assert drawn[9] == round(1 / walsh_free(ratios[:10]), 6)
    # One update per round and arm; the from-scratch estimates do not grow with the rounds.
    assert seen[30]["rounds"] == 2 * 30 and seen[120]["rounds"] == 2 * 120
    assert seen[120]["from_scratch"] == seen[30]["from_scratch"]


def _pairs_of(report: object, variant: str) -> list:  # type: ignore[type-arg]
    from xlagui.core.analysis.summary import pair_up

    runs = {r.variant: r for r in report.measure_runs}  # type: ignore[attr-defined]
    return pair_up(runs["baseline"].events, runs[variant].events)


def walsh_free(ratios: list[float]) -> float:
    """The Hodges–Lehmann ratio of `ratios` by its definition: the median of all pairwise
    means of the log ratios, with no Walsh array kept or counted."""
    import math
    import statistics

    logs = [math.log(r) for r in ratios]
    means = [(logs[i] + logs[j]) / 2 for i in range(len(logs)) for j in range(i, len(logs))]
    return math.exp(statistics.median(means))
