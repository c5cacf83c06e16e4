"""Dataset problems a person can see and act on: selecting one shows its files as images side
by side with their full paths and the whole message; label conflicts, leakage and duplicates
can be left out of the comparison, which says how many files that is and records them. The
dataset folder is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click, click_tree_item, item_at, top_item
from tests.helpers.datasets import elephants_with_problems
from tests.helpers.images import copy, make_split_dataset, tree_snapshot
from tests.helpers.streams import FakeWorker
from tests.ui.conftest import WindowFactory, fake_worker
from xlagui.core.data.scan import DatasetScan, Problem
from xlagui.present.levels import Level
from xlagui.present.scan_problems import problem_text
from xlagui.ui.dataset.problem_view import ProblemView
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.window.main_window import MainWindow

LEAVE_OUT = "Leave these files out of this comparison"
PUT_BACK = "Put these files back"


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    return elephants_with_problems(tmp_path / "elephants")


@pytest.fixture
def worker() -> FakeWorker:
    return fake_worker()


@pytest.fixture
def window(make_window: WindowFactory, worker: FakeWorker) -> MainWindow:
    return make_window(worker=worker)


def load(qtbot: QtBot, window: MainWindow, folder: Path) -> DatasetScan:
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000) as blocker:
        window.open_dataset(folder)
    panel = window.settings_panel
    panel.epochs.setValue(3)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    return blocker.args[0]  # type: ignore[no-any-return]


def group_item(window: MainWindow, words: str) -> QTreeWidgetItem:
    return top_item(window.dataset_panel.problem_tree, words)


def select(qtbot: QtBot, window: MainWindow, item: QTreeWidgetItem) -> ProblemView:
    click_tree_item(qtbot, window.dataset_panel.problem_tree, item)
    view = window.dataset_panel.problem_view
    assert view.isVisible()
    return view


def only(scan: DatasetScan, kind: str) -> Problem:
    return next(p for p in scan.problems if p.kind == kind)


def wait_for_images(qtbot: QtBot, view: ProblemView) -> None:
    qtbot.waitUntil(lambda: all(not c.image.source().isNull() for c in view.cards), timeout=10_000)


def test_selecting_a_label_conflict_shows_both_images_with_full_paths(
    qtbot: QtBot, window: MainWindow, photos: Path
) -> None:
    scan = load(qtbot, window, photos)
    problem = only(scan, "label_conflict")
    group = group_item(window, "same image in different classes (1)")
    item = item_at(group, 0)
    # The list is narrow: the whole message is on the item's tooltip...
    assert problem_text(problem) in item.toolTip(0)
    view = select(qtbot, window, item)
    # ...and in the view beside it, wrapped, with both files as images, side by side.
    assert view.message.text() == problem_text(problem) and view.message.wordWrap()
    assert "Warning: same image in different classes" in view.title.text()
    assert [c.file.path for c in view.cards] == sorted(problem.paths)
    for card in view.cards:
        assert card.path.text().replace("\u200b", "") == card.file.path  # the full path
        assert card.path.toolTip() == card.file.path
        assert card.where.text().startswith(f"<b>{card.file.label}</b>")
    left, right = (c.geometry() for c in view.cards)
    assert left.right() < right.left() and left.top() == right.top()
    wait_for_images(qtbot, view)
    images = [c.image.source().toImage() for c in view.cards]
    assert images[0] == images[1]  # the same picture, twice
    assert images[0].width() == 96  # decoded at its size, not as a stamp
    assert all(c.image.pixmap().width() > 96 for c in view.cards)  # shown larger
    assert view.leave_out_button.text() == LEAVE_OUT
    assert "Would leave out 2 files: every copy, as nobody" in view.rule.text()
    assert "not changed" in view.rule.text()
    # Back to the class images.
    click(qtbot, view.back_button)
    assert not view.isVisible() and window.dataset_panel.grid.isVisible()


def test_leaving_a_conflict_out_is_shown_and_used_by_the_run(
    qtbot: QtBot, window: MainWindow, photos: Path, worker: FakeWorker
) -> None:
    before = tree_snapshot(photos)
    scan = load(qtbot, window, photos)
    problem = only(scan, "label_conflict")
    group = group_item(window, "same image in different classes")
    view = select(qtbot, window, item_at(group, 0))
    click(qtbot, view.leave_out_button)
    # Said where it was done, in the list, on the dataset's status line and in the settings.
    assert view.leave_out_button.text() == PUT_BACK
    assert view.rule.text().startswith("2 files left out of this comparison")
    assert [c.badge.text() for c in view.cards] == ["Left out of this comparison"] * 2
    assert item_at(group, 0).text(0).startswith("Left out: ") and item_at(group, 0).font(0).italic()
    assert group.text(0).endswith("(1, 1 left out)")
    assert "2 files left out of this comparison" in window.dataset_panel.status_label.text()
    note = window.settings_panel.left_out_label
    assert note.isVisible()
    assert note.text().startswith("2 files left out of this comparison (1 × same image in")
    assert window.settings_panel.train_count == len(scan.files_for("train")) - 2
    # The run trains and validates without them, and the JSON lists them.
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    used = {s.path for spec in worker.specs for s in spec.train + spec.val}
    assert used and not used & set(problem.paths)
    assert len(worker.specs[0].train) == len(scan.files_for("train")) - 2
    assert "2 files left out" in window.runs_view.subheading.text()
    assert window.comparisons.report_folder is not None
    saved = json.loads((window.comparisons.report_folder / "comparison.json").read_text())
    assert [f["path"] for f in saved["dataset"]["excluded"]["files"]] == [
        "train/african/elephant-0000.jpg",
        "train/asian/maybe-african.jpg",
    ]
    assert report.dataset["excluded"]["kinds"] == ["conflict"]
    assert saved["reproduce"].endswith("--exclude-problems conflict")
    assert tree_snapshot(photos) == before  # the dataset folder is never touched


def test_the_status_says_what_to_look_at_until_it_is_left_out(
    qtbot: QtBot, window: MainWindow, photos: Path
) -> None:
    load(qtbot, window, photos)
    status = window.dataset_panel.status_label
    # A label conflict, a leak and a duplicate: trainable, but not "ready" in green.
    warning = f"color:{LEVEL_COLORS[Level.WARNING]}; font-weight:600'>"
    assert (warning + "can train; 1 duplicate within a class, 1 cross-class duplicate and "
            "1 train/test leak to look at<") in status.text()
    assert "ready to train" not in status.text()
    for words in ("same image in different classes", "train/test leakage",
                  "duplicates within a class"):
        view = select(qtbot, window, item_at(group_item(window, words), 0))
        click(qtbot, view.leave_out_button)
        click(qtbot, view.back_button)
    assert f"color:{LEVEL_COLORS[Level.OK]}; font-weight:600'>ready to train<" in status.text()


def test_leakage_leaves_out_the_test_copy_and_keeps_the_training_one(
    qtbot: QtBot, window: MainWindow, photos: Path
) -> None:
    scan = load(qtbot, window, photos)
    view = select(qtbot, window, item_at(group_item(window, "leakage"), 0))
    assert [c.file.split for c in view.cards] == ["train", "test"]
    assert "Would leave out 1 file: the test copies; the training copy stays" in view.rule.text()
    assert "Would leave out 1 file:" in view.rule.text()
    click(qtbot, view.leave_out_button)
    assert [c.badge.text() for c in view.cards] == ["Kept", "Left out of this comparison"]
    trained = window.datasets.exclusions.apply(scan)
    assert len(trained.files_for("test")) == len(scan.files_for("test")) - 1
    # And back.
    click(qtbot, view.leave_out_button)
    assert not window.datasets.exclusions and not any(c.badge.isVisible() for c in view.cards)
    assert not window.settings_panel.left_out_label.isVisible()


def test_a_path_in_the_list_shows_its_problem(
    qtbot: QtBot, window: MainWindow, photos: Path
) -> None:
    scan = load(qtbot, window, photos)
    problem = only(scan, "duplicate_in_class")
    entry = item_at(group_item(window, "duplicates within a class"), 0)
    assert entry.childCount() == 2  # the paths, one per line
    view = select(qtbot, window, item_at(entry, 1))
    assert view.message.text() == problem_text(problem)
    assert len(view.cards) == 2
    assert "Would leave out 1 file: all copies but the first" in view.rule.text()


def test_a_whole_group_can_be_left_out(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    root = tmp_path / "many"
    make_split_dataset(root, {"african": 8, "asian": 8}, {"african": 2, "asian": 2}, size=(40, 30))
    for i in range(5):
        copy(
            root / "train" / "african" / f"african_000{i}.jpg",
            root / "train" / "asian" / f"which_{i}.jpg",
        )
    scan = load(qtbot, window, root)
    assert sum(p.kind == "label_conflict" for p in scan.problems) == 5
    view = select(qtbot, window, group_item(window, "same image in different classes (5)"))
    # Every message in full, and one button for all of them.
    for p in scan.problems:
        assert problem_text(p) in view.message.text()
    assert view.cards == [] and "Select one of them" in view.other_paths.text()
    assert "Would leave out 10 files" in view.rule.text()
    click(qtbot, view.leave_out_button)
    assert len(window.datasets.exclusions) == 5
    assert window.settings_panel.left_out_label.text().startswith(
        "10 files left out of this comparison (5 × same image in different classes)"
    )
    # A rescan of the same folder keeps the choice.
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        click(qtbot, window.dataset_panel.rescan_button)
    assert len(window.datasets.exclusions) == 5
    assert "10 files left out" in window.dataset_panel.status_label.text()
    # Another folder starts afresh.
    other = tmp_path / "other"
    make_split_dataset(other, {"a": 3, "b": 3}, {"a": 1, "b": 1})
    load(qtbot, window, other)
    assert not window.datasets.exclusions and not window.settings_panel.left_out_box.isVisible()


def test_a_problem_without_files_to_leave_out_says_so(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    root = tmp_path / "lopsided"
    make_split_dataset(root, {"many": 13, "few": 3}, {"many": 1, "few": 1})
    scan = load(qtbot, window, root)
    view = select(qtbot, window, item_at(group_item(window, "class imbalance"), 0))
    assert view.message.text() == problem_text(only(scan, "imbalance"))
    assert not view.leave_out_button.isVisible() and view.cards == []
    assert "dataset as a whole" in view.other_paths.text()


def test_leaving_out_every_image_of_a_class_blocks_the_run(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    root = tmp_path / "tiny"
    make_split_dataset(root, {"a": 1, "b": 4}, {"a": 1, "b": 1}, size=(40, 30))
    copy(root / "train" / "a" / "a_0000.jpg", root / "train" / "b" / "also_a.jpg")
    load(qtbot, window, root)
    window.settings_panel.batch_size.setValue(1)
    assert window.run_button.isEnabled()
    view = select(qtbot, window, item_at(group_item(window, "different classes"), 0))
    click(qtbot, view.leave_out_button)
    assert not window.run_button.isEnabled()
    assert "no training images of class 'a'" in window.run_hint.text()
    click(qtbot, window.settings_panel.put_back_button)
    assert window.run_button.isEnabled()
