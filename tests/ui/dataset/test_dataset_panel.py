"""Opening a dataset: drag and drop (and what is refused), the scan summary, thumbnails."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.helpers.images import copy, make_class_folders, make_file, make_jpeg
from tests.ui.conftest import drag_enter, drop, url_mime
from xlagui.present.levels import Level
from xlagui.ui.shared.theme import LEVEL_COLORS
from xlagui.ui.window.main_window import MainWindow


def test_dropping_a_folder_scans_and_shows_it(qtbot: QtBot, window: MainWindow,
                                              dataset: Path) -> None:
    mime = url_mime(dataset)
    enter = drag_enter(window, mime)
    assert enter.isAccepted()
    assert window.drop_overlay.isVisible() and window.drop_overlay.accepted
    assert "elephants" in window.drop_overlay.message
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000) as blocker:
        drop(window, mime)
    assert not window.drop_overlay.isVisible()
    scan = blocker.args[0]
    assert scan.class_names == ["african", "asian"]
    assert window.windowTitle() == "xlagui — elephants"
    panel = window.dataset_panel
    table = panel.class_table
    rows = [[table.item(r, c).text() for c in range(3)] for r in range(table.rowCount())]
    assert rows == [["african", "6", "2"], ["asian", "6", "2"]]
    assert table.item(0, 3).text() == "40×30"
    assert "ready to train" in panel.status_label.text()
    assert "train/ and test/" in panel.layout_label.text()


def test_the_class_table_covers_both_splits_with_real_image_sizes(
        qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    root = tmp_path / "elephants"
    make_jpeg(root / "train" / "african" / "square.jpg", size=(100, 100))
    make_jpeg(root / "train" / "african" / "widest.jpg", size=(348, 145))
    make_jpeg(root / "train" / "african" / "tallest.jpg", size=(200, 278))
    make_jpeg(root / "test" / "african" / "small.jpg", size=(90, 90), mode="L")
    make_jpeg(root / "train" / "asian" / "a.jpg", size=(64, 64))
    make_jpeg(root / "test" / "asian" / "b.jpg", size=(64, 64))
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        drop(window, url_mime(root))
    table = window.dataset_panel.class_table
    headings = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    assert headings == ["Class", "Train", "Test", "Sizes, train + test (px)",
                        "Colour, train + test"]
    assert "training and test images" in table.horizontalHeaderItem(3).toolTip()
    # The smallest image is a test image; the largest is 200×278, not the widest width with
    # the tallest height (348×278, an image nobody has).
    assert [table.item(0, c).text() for c in range(5)] == [
        "african", "3", "1", "90×90 to 200×278", "3 RGB, 1 grayscale"]
    status = window.dataset_panel.status_label.text()
    assert f"color:{LEVEL_COLORS[Level.OK]}; font-weight:600'>ready to train<" in status


def test_a_folder_dropped_on_a_child_widget_is_opened_too(qtbot: QtBot, window: MainWindow,
                                                          dataset: Path) -> None:
    # The thumbnail grid and the plots take drops themselves; the window must still get
    # folders dropped on them.
    targets = [window.dataset_panel.grid, window.dataset_panel.grid.viewport(),
               window.runs_view.columns["xla"].loss_plot]
    for target in targets:
        assert target.acceptDrops() or target.parentWidget().acceptDrops()
        window.drop_overlay.hide()
        drag_enter(target, url_mime(dataset))
        assert window.drop_overlay.isVisible()
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        drop(targets[-1], url_mime(dataset))
    assert window.datasets.scan is not None


def test_dropping_a_file_says_what_to_drop(window: MainWindow, dataset: Path) -> None:
    file = next(dataset.rglob("*.jpg"))
    mime = url_mime(file)
    drag_enter(window, mime)
    assert window.drop_overlay.isVisible() and not window.drop_overlay.accepted
    drop(window, mime)
    assert window.message_bar.isVisible() and window.message_bar.level == "error"
    assert "is a file" in window.message_bar.text()
    assert window.datasets.scan is None and not window.is_scanning()


def test_dropping_two_folders_asks_for_one(window: MainWindow, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    drop(window, url_mime(a, b))
    assert "one dataset folder at a time" in window.message_bar.text()
    assert "2 items" in window.message_bar.text()
    assert not window.is_scanning()


def test_dropping_a_web_link_is_refused(window: MainWindow) -> None:
    drop(window, url_mime("https://example.com/data"))
    assert "web link" in window.message_bar.text()


def test_a_folder_without_images_is_explained(qtbot: QtBot, window: MainWindow,
                                              tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    make_file(folder / "readme.txt", "hello")
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        drop(window, url_mime(folder))
    assert window.message_bar.level == "error"
    assert "cannot be trained on" in window.message_bar.text()
    assert "No usable images" in window.message_bar.text()
    assert not window.run_button.isEnabled()
    assert "errors" in window.run_hint.text()


def test_a_missing_folder_is_explained(qtbot: QtBot, window: MainWindow, tmp_path: Path) -> None:
    with qtbot.waitSignal(window.dataset_failed, timeout=10_000) as blocker:
        window.open_dataset(tmp_path / "nowhere")
    assert "nowhere" in blocker.args[0]
    assert window.message_bar.level == "error"
    assert window.dataset_panel.stack.currentIndex() == 0  # still the empty page


def test_problems_are_listed_with_details_on_demand(qtbot: QtBot, window: MainWindow,
                                                    dataset: Path) -> None:
    # The same image in train and test: leakage, a warning.
    copy(dataset / "train" / "african" / "african_0000.jpg",
         dataset / "test" / "african" / "leaked.jpg")
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    tree = window.dataset_panel.problem_tree
    tops = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    leakage = [t for t in tops if t is not None and "leakage" in t.text(0)]
    assert leakage, [t.text(0) for t in tops if t is not None]
    group = leakage[0]
    assert not group.isExpanded()  # warnings wait until asked for
    message = group.child(0)
    assert "leaked.jpg" in message.text(0) or "leaked.jpg" in message.toolTip(0)
    assert message.childCount() >= 1  # the paths, one per line
    assert window.message_bar.level == "warning"


def test_thumbnails_load_and_a_click_shows_the_image(qtbot: QtBot, window: MainWindow,
                                                     dataset: Path) -> None:
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_dataset(dataset)
    panel = window.dataset_panel
    model = panel.thumbnails
    assert model.rowCount() == 6  # african, training images
    first = model.files[0]
    qtbot.waitUntil(lambda: model.is_cached(first.path), timeout=10_000)
    icon = model.data(model.index(0), Qt.ItemDataRole.DecorationRole)
    assert (icon.width(), icon.height()) == (40, 30)  # small images are not blown up
    rect = panel.grid.visualRect(model.index(0))
    qtbot.mouseClick(panel.grid.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    preview = panel.preview
    assert preview.name.text() == os.path.basename(first.path)
    assert "40 × 30 px" in preview.info.text() and "JPEG" in preview.info.text()
    qtbot.waitUntil(lambda: not preview.image.source().isNull(), timeout=10_000)
    assert (preview.image.source().width(), preview.image.source().height()) == (40, 30)
    shown = preview.image.pixmap()
    assert shown.width() > 40  # enlarged to fit the pane, proportions kept
    assert abs(shown.width() / shown.height() - 4 / 3) < 0.05
    # Another class shows its own files.
    panel.class_combo.setCurrentIndex(1)
    assert model.rowCount() == 6 and all(f.label == "asian" for f in model.files)
    panel.split_combo.setCurrentIndex(1)
    assert model.rowCount() == 2 and all(f.split == "test" for f in model.files)


def test_the_demo_dataset_opens_in_the_background(qtbot: QtBot, window: MainWindow,
                                                  tmp_path: Path, monkeypatch: object) -> None:
    root = tmp_path / "demo"
    make_class_folders(root, {"african": 3, "asian": 3})
    import xlagui.core.data.demo as demo

    monkeypatch.setattr(demo, "ensure_demo_dataset", lambda seed=0: root)  # type: ignore[attr-defined]
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000):
        window.open_demo()
    assert window.datasets.demo
    assert window.windowTitle() == "xlagui — demo elephants"
