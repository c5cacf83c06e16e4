"""Every button, toolbar button, menu item and shortcut of the window, pressed with real mouse
and key events in each state (empty, dataset loaded, running, finished, history reopened), the
modal dialogs answered by the test. Nothing may reach the crash handler or open an error box.

Calling a slot skips the signal's arguments: `clicked(bool)` once reached
`start_comparison(only=...)` as False and crashed the main button while every test passed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QApplication
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import (
    ModalAnswerer,
    activate,
    choose_combo_item,
    click,
    click_menu_item,
    click_tree_item,
    each_click,
    item_at,
    menu_items,
    press_keys,
    shortcuts,
    top_item,
    visible_buttons,
    watching,
)
from tests.helpers.datasets import elephants_with_problems
from tests.helpers.streams import FakeWorker
from tests.ui.conftest import WindowFactory, fake_worker, is_closed
from xlagui.core.measure.runner import RunResult
from xlagui.core.protocol.events import EpochEvent, Event
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.ui.window.main_window import TAB_DATASET, TAB_HISTORY, TAB_RUNS, MainWindow

# The crash handler, not pytest-qt, must see what a slot raises: that is what a user meets.
pytestmark = pytest.mark.qt_no_exception_capture

DATASET_DIALOG = "Choose a dataset folder"
EXPORT_DIALOG = "Export the report to"
STOP_QUESTION = "Stop the comparison?"


class HeldWorker:
    """The fake worker, holding each run after its first epoch until `release` is set or the
    run is asked to stop: a comparison that is running for as long as a test needs."""

    def __init__(self) -> None:
        self.fake: FakeWorker = fake_worker()
        self.release = threading.Event()
        self.started = threading.Event()

    @property
    def variants(self) -> list[str]:
        return [s.variant for s in self.fake.specs]

    def __call__(
        self, spec: RunSpec, state: TaskState, on_event: Callable[[Event], None]
    ) -> RunResult:
        def relay(event: Event) -> None:
            on_event(event)
            if isinstance(event, EpochEvent) and event.epoch == 1:
                self.started.set()
                while not (self.release.is_set() or state.is_interruption_requested()):
                    self.release.wait(0.01)

        return self.fake(spec, state, relay)


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    return elephants_with_problems(tmp_path / "elephants")


@pytest.fixture
def held() -> Iterator[HeldWorker]:
    worker = HeldWorker()
    yield worker
    worker.release.set()


# What pressing every control opens, and a user closes again with Escape: each is expected
# here (any other dialog is a finding, `ModalAnswerer.unexpected`). Closing the stop question
# answers "Keep running".
DISMISSED = {"About xlagui", DATASET_DIALOG, "Export the report to", "Open a model file",
             "Scan report", STOP_QUESTION}


@pytest.fixture
def answerer() -> ModalAnswerer:
    return ModalAnswerer(dismiss=set(DISMISSED))


@pytest.fixture
def window(
    make_window: WindowFactory, held: HeldWorker, tmp_path: Path, opened_urls: list[QUrl]
) -> MainWindow:
    w = make_window(worker=held, log_folder=tmp_path / "logs")
    activate_now(w)
    return w


def activate_now(window: MainWindow) -> None:
    window.activateWindow()
    QApplication.processEvents()


def load(qtbot: QtBot, window: MainWindow, folder: Path) -> None:
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(folder)
    panel = window.settings_panel
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    assert window.cannot_run_reason() == ""


def start_run(qtbot: QtBot, window: MainWindow, held: HeldWorker) -> None:
    with qtbot.waitSignal(window.comparison_started, timeout=5_000):
        click(qtbot, window.run_button)
    qtbot.waitUntil(held.started.is_set, timeout=10_000)


def finish_run(qtbot: QtBot, window: MainWindow, held: HeldWorker) -> None:
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        held.release.set()


def reopen_from_history(qtbot: QtBot, window: MainWindow) -> None:
    panel = window.history_panel
    press_keys(qtbot, window, QKeySequence("Ctrl+3"))
    assert window.tabs.currentIndex() == TAB_HISTORY
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() > 0, timeout=5_000)
    click_tree_item(qtbot, panel.tree, item_at(panel.tree, 0))
    with qtbot.waitSignal(window.report_shown, timeout=5_000):
        click(qtbot, panel.open_button)


def settle(qtbot: QtBot, window: MainWindow) -> None:
    """Let a scan a click started finish, and give the window the keyboard back."""
    qtbot.waitUntil(lambda: not window.is_scanning(), timeout=10_000)
    activate(qtbot, window)


# -- the main button and its relatives -------------------------------------------------------


def test_a_click_on_run_comparison_starts_a_run_and_stop_ends_it(
    qtbot: QtBot, window: MainWindow, held: HeldWorker, photos: Path, answerer: ModalAnswerer
) -> None:
    load(qtbot, window, photos)
    with watching(window, answerer):
        assert window.run_button.text() == "Run comparison" and window.run_button.isEnabled()
        start_run(qtbot, window, held)
        assert window.is_running() and window.tabs.currentIndex() == TAB_RUNS
        assert window.stop_button.isEnabled() and not window.run_button.isEnabled()
        with qtbot.waitSignal(window.comparison_finished, timeout=10_000) as blocker:
            click(qtbot, window.stop_button)
        report = blocker.args[0]
        assert [r.status for r in report.runs] == ["cancelled", "cancelled"]
        assert held.variants == ["baseline"]  # stopped before the XLA run began
        assert not window.is_running() and window.run_button.isEnabled()
        assert window.message_bar.level == "warning" and "Stopped" in window.message_bar.text()


def test_a_click_on_run_xla_only_runs_that_side_and_stop_ends_it(
    qtbot: QtBot, window: MainWindow, held: HeldWorker, photos: Path, answerer: ModalAnswerer
) -> None:
    load(qtbot, window, photos)
    with watching(window, answerer):
        assert window.run_one_button.text() == "Run XLA only"
        with qtbot.waitSignal(window.comparison_started, timeout=5_000):
            click(qtbot, window.run_one_button)
        qtbot.waitUntil(held.started.is_set, timeout=10_000)
        with qtbot.waitSignal(window.comparison_finished, timeout=10_000) as blocker:
            click(qtbot, window.stop_button)
        assert held.variants == ["xla"]
        assert {r.variant: r.status for r in blocker.args[0].runs}["xla"] == "cancelled"
        # The choice beside it picks the side: the baseline, and the same button runs it.
        choose_combo_item(qtbot, window.one_side_choice, 1)
        assert window.run_one_button.text() == "Run baseline only"
        held.release.set()
        with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as blocker:
            click(qtbot, window.run_one_button)
        assert held.variants == ["xla", "baseline"]
        assert {r.variant: r.status for r in blocker.args[0].runs}["baseline"] == "finished"


def test_one_run_and_one_stop_on_screen(
    qtbot: QtBot, window: MainWindow, held: HeldWorker, photos: Path, answerer: ModalAnswerer
) -> None:
    """One Run comparison and one Stop on screen, the sidebar's, before and during a run: the
    toolbar had a second pair."""
    load(qtbot, window, photos)

    def on_screen(words: str) -> list[QAbstractButton]:
        return [b for b in window.findChildren(QAbstractButton)
                if b.isVisible() and b.text().replace("&", "").startswith(words)]

    assert on_screen("Run comparison") == [window.run_button]
    assert on_screen("Stop") == [window.stop_button]
    with watching(window, answerer):
        with qtbot.waitSignal(window.comparison_started, timeout=5_000):
            click(qtbot, on_screen("Run comparison")[0])
        qtbot.waitUntil(held.started.is_set, timeout=10_000)
        assert on_screen("Stop") == [window.stop_button] and window.stop_button.isEnabled()
        with qtbot.waitSignal(window.comparison_finished, timeout=10_000):
            click(qtbot, on_screen("Stop")[0])


@pytest.mark.parametrize("how", ["sidebar", "menu", "keys"])
def test_run_and_stop_from_the_sidebar_the_menu_and_the_keyboard(
    qtbot: QtBot,
    window: MainWindow,
    held: HeldWorker,
    photos: Path,
    answerer: ModalAnswerer,
    how: str,
) -> None:
    load(qtbot, window, photos)

    def press(action_name: str) -> None:
        action = getattr(window, action_name)
        if how == "sidebar":
            click(qtbot, window.run_button if action_name == "run_action" else window.stop_button)
        elif how == "menu":
            assert click_menu_item(qtbot, window, action)
        else:
            press_keys(qtbot, window, action.shortcuts()[-1 if action_name == "stop_action" else 0])

    with watching(window, answerer):
        with qtbot.waitSignal(window.comparison_started, timeout=5_000):
            press("run_action")
        qtbot.waitUntil(held.started.is_set, timeout=10_000)
        with qtbot.waitSignal(window.comparison_finished, timeout=10_000):
            press("stop_action")
        assert not window.is_running()
        if how == "menu":  # the menu's one-side item too
            held.started.clear()
            with qtbot.waitSignal(window.comparison_started, timeout=5_000):
                assert click_menu_item(qtbot, window, window.run_one_action)
            qtbot.waitUntil(held.started.is_set, timeout=10_000)
            with qtbot.waitSignal(window.comparison_finished, timeout=10_000):
                press_keys(qtbot, window, QKeySequence("Esc"))
            assert held.variants == ["baseline", "xla"]


# -- every control, in every state ------------------------------------------------------------


def press_everything(qtbot: QtBot, window: MainWindow, answerer: ModalAnswerer) -> list[str]:
    """Every visible button on each tab, every menu item and every shortcut, except those
    that start or stop a run or quit (pressed by their own tests). Returns what was pressed."""
    keep_state = {
        window.run_action,
        window.run_one_action,
        window.stop_action,
        window.quit_action,
        window.demo_action,
    }
    skip_buttons = [
        window.run_button,
        window.run_one_button,
        window.stop_button,
        *[
            b
            for b in window.dataset_panel.findChildren(type(window.run_button))
            if b.text() == "Try the demo dataset"
        ],
    ]
    pressed: list[str] = []
    for tab in (TAB_DATASET, TAB_RUNS, TAB_HISTORY):

        def show_tab(tab: int = tab) -> None:  # a click may have switched to another tab
            if window.tabs.currentIndex() != tab:
                press_keys(qtbot, window, QKeySequence(f"Ctrl+{tab + 1}"))
            assert window.tabs.currentIndex() == tab

        show_tab()
        pressed += each_click(
            qtbot,
            visible_buttons(window, skip_buttons),
            before=show_tab,
            after=lambda: settle(qtbot, window),
        )
    for action in menu_items(window):
        if action not in keep_state:
            click_menu_item(qtbot, window, action)
            pressed.append(action.text())
            settle(qtbot, window)
    for action, keys in shortcuts(dict.fromkeys([*window.actions(), *menu_items(window)])):
        if action not in keep_state:
            press_keys(qtbot, window, keys)
            pressed.append(keys.toString())
            settle(qtbot, window)
    return pressed


def test_every_control_when_empty(
    qtbot: QtBot, window: MainWindow, answerer: ModalAnswerer, opened_urls: list[QUrl]
) -> None:
    with watching(window, answerer):
        pressed = press_everything(qtbot, window, answerer)
    assert {"Browse…", "&About xlagui", "Show &log folder", "Ctrl+O", "Ctrl+E"} <= set(pressed)
    assert "About xlagui" in answerer.titles() and DATASET_DIALOG in answerer.titles()
    assert window.datasets.scan is None and not window.is_running()
    assert QUrl.fromLocalFile(str(window.log_folder)) in opened_urls


def test_every_control_with_a_dataset_loaded(
    qtbot: QtBot, window: MainWindow, photos: Path, answerer: ModalAnswerer
) -> None:
    load(qtbot, window, photos)
    panel = window.dataset_panel
    tree = panel.problem_tree
    conflict = top_item(tree, "different classes")
    with watching(window, answerer):
        # The buttons that appear once a problem is selected and its files left out.
        click_tree_item(qtbot, tree, item_at(conflict, 0))
        view = panel.problem_view
        assert view.isVisible() and view.leave_out_button.isVisible()
        click(qtbot, view.leave_out_button)
        put_back = window.settings_panel.put_back_button
        assert put_back.isVisible() and view.leave_out_button.text() == "Put these files back"
        click(qtbot, put_back)
        assert not put_back.isVisible() and not window.datasets.exclusions
        click(qtbot, view.back_button)
        assert not view.isVisible() and panel.grid.isVisible()
        pressed = press_everything(qtbot, window, answerer)
    assert {"Rescan", "Details…", "Browse…"} <= set(pressed)
    assert "Scan report" in answerer.titles()
    assert window.datasets.scan is not None and not window.is_running()


def test_every_control_while_running(
    qtbot: QtBot, window: MainWindow, held: HeldWorker, photos: Path, answerer: ModalAnswerer
) -> None:
    load(qtbot, window, photos)
    with watching(window, answerer):
        start_run(qtbot, window, held)
        press_everything(qtbot, window, answerer)
        assert window.is_running()  # nothing but Stop (and Quit) ends it
        finish_run(qtbot, window, held)


def test_every_control_when_finished(
    qtbot: QtBot,
    window: MainWindow,
    held: HeldWorker,
    photos: Path,
    answerer: ModalAnswerer,
    tmp_path: Path,
) -> None:
    load(qtbot, window, photos)
    out = tmp_path / "export"
    out.mkdir()
    answerer.folders[EXPORT_DIALOG] = out
    with watching(window, answerer):
        start_run(qtbot, window, held)
        finish_run(qtbot, window, held)
        pressed = press_everything(qtbot, window, answerer)
        assert not window.is_running()
    assert {"&Export report…", "Ctrl+E"} <= set(pressed)
    assert answerer.titles().count(EXPORT_DIALOG) == 5  # 3 toolbar clicks, menu, keys
    suffixes = sorted(p.suffix for p in out.iterdir())
    assert suffixes == [".csv"] * 5 + [".json"] * 5 + [".png"] * 5


def test_every_control_with_a_comparison_reopened(
    qtbot: QtBot,
    window: MainWindow,
    held: HeldWorker,
    photos: Path,
    answerer: ModalAnswerer,
    opened_urls: list[QUrl],
) -> None:
    load(qtbot, window, photos)
    with watching(window, answerer):
        start_run(qtbot, window, held)
        finish_run(qtbot, window, held)
        reopen_from_history(qtbot, window)
        pressed = press_everything(qtbot, window, answerer)
    assert {"Open", "Show folder", "Refresh"} <= set(pressed)
    assert any(u.isLocalFile() and "history" in u.toLocalFile() for u in opened_urls)


# -- opening, quitting, scanning ------------------------------------------------------------------


def test_browse_opens_the_folder_chosen_in_the_dialog(
    qtbot: QtBot, window: MainWindow, photos: Path, answerer: ModalAnswerer
) -> None:
    answerer.folders[DATASET_DIALOG] = photos
    browse = next(b for b in visible_buttons(window) if b.text() == "Browse…")
    with (
        watching(window, answerer),
        qtbot.waitSignal(window.dataset_loaded, timeout=10_000) as blocker,
    ):
        click(qtbot, browse)
    assert blocker.args[0].root == str(photos)


def test_the_demo_button_opens_the_demo(
    qtbot: QtBot,
    window: MainWindow,
    photos: Path,
    answerer: ModalAnswerer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import xlagui.core.data.demo as demo

    monkeypatch.setattr(demo, "ensure_demo_dataset", lambda seed=0: photos)
    button = next(b for b in visible_buttons(window) if b.text() == "Try the demo dataset")
    with watching(window, answerer), qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        click(qtbot, button)
    assert window.datasets.demo


def test_cancel_stops_a_scan(
    qtbot: QtBot, window: MainWindow, photos: Path, answerer: ModalAnswerer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cancel during a scan held at its first image: the scan ends and its result never
    arrives (the window loads nothing). A scan that ignored the cancel would load the set."""
    from xlagui.core.data.scan import probe as probing

    gate, entered = threading.Event(), threading.Event()
    real_probe = probing.probe

    def held_probe(ctx: object, cand: object) -> object:
        entered.set()
        assert gate.wait(30), "the test never released the scan"
        return real_probe(ctx, cand)  # type: ignore[arg-type]

    monkeypatch.setattr(probing, "probe", held_probe)
    loaded: list[object] = []
    window.dataset_loaded.connect(loaded.append)
    panel = window.dataset_panel
    with watching(window, answerer):
        window.open_dataset(photos)
        qtbot.waitUntil(entered.is_set, timeout=10_000)
        assert panel.cancel_button.isVisible()
        click(qtbot, panel.cancel_button)
        gate.set()  # the scan goes on to its next image, where it must see the cancel
        qtbot.waitUntil(lambda: not window.is_scanning(), timeout=10_000)
        qtbot.wait(300)  # a result that still arrived would be delivered by now
    assert not panel.cancel_button.isVisible()
    assert loaded == [] and window.windowTitle() == "xlagui"


def test_quit_when_idle_closes_the_window(
    qtbot: QtBot, window: MainWindow, answerer: ModalAnswerer
) -> None:
    with watching(window, answerer):
        assert click_menu_item(qtbot, window, window.quit_action)
    assert is_closed(window) and answerer.seen == []


def test_quit_while_running_asks_and_stops_cleanly(
    qtbot: QtBot, window: MainWindow, held: HeldWorker, photos: Path, answerer: ModalAnswerer
) -> None:
    load(qtbot, window, photos)
    with watching(window, answerer):
        start_run(qtbot, window, held)
        press_keys(qtbot, window, QKeySequence("Ctrl+Q"))  # answered "Keep running"
        assert answerer.titles() == [STOP_QUESTION]
        assert window.isVisible() and window.is_running()
        answerer.buttons[STOP_QUESTION] = "Stop and close"
        with qtbot.waitSignal(window.comparison_finished, timeout=10_000):
            assert click_menu_item(qtbot, window, window.quit_action)
        qtbot.waitUntil(lambda: is_closed(window), timeout=5_000)
    assert window.comparisons.supervisor is None
