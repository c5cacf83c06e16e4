"""A representative part of the bad-input corpus (tests/helpers/corpus.py) through the window:
each problem shown in words, a refusal blocks the run with its reason, nothing crashes."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QTreeWidgetItem
from pytestqt.qtbot import QtBot

from tests.helpers.corpus import CASES_BY_NAME
from xlagui.present.scan_problems import problem_text
from xlagui.ui.window.main_window import MainWindow

SUBSET = [
    "file_not_folder",
    "empty_folder",
    "one_class",
    "class_mismatch",
    "zero_byte_jpg",
    "truncated_jpeg",
    "text_named_jpg",
    "png_bomb",
    "same_image_two_classes",
    "same_image_train_test",
    "cmyk_jpeg",
    "animated_gif",
    "os_litter",
    "non_ascii_and_spaces",
]


def shown_problems(window: MainWindow) -> list[str]:
    tree = window.dataset_panel.problem_tree
    texts: list[str] = []

    def walk(item: QTreeWidgetItem) -> None:
        texts.append(item.text(0))
        for i in range(item.childCount()):
            walk(item.child(i))

    for i in range(tree.topLevelItemCount()):
        top = tree.topLevelItem(i)
        assert top is not None
        walk(top)
    return texts


@pytest.mark.parametrize("name", SUBSET)
def test_bad_dataset_in_the_window(qtbot: QtBot, window: MainWindow, tmp_path: Path,
                                   name: str) -> None:
    case = CASES_BY_NAME[name]
    path = case.build(tmp_path / "case")
    if case.raises:
        with qtbot.waitSignal(window.dataset_failed, timeout=10_000) as blocker:
            window.open_dataset(path)
        assert case.raises in blocker.args[0]
        assert not window.run_button.isEnabled()
        return
    with qtbot.waitSignal(window.dataset_loaded, timeout=10_000) as blocker:
        window.open_dataset(path)
    scan = blocker.args[0]
    assert len(scan.files) == case.usable
    texts = "\n".join(shown_problems(window))
    for expected in case.problems:
        message = next(problem_text(p) for p in scan.problems if p.kind == expected.kind)
        assert message in texts  # every problem is on screen, in the scan's words
        assert expected.severity.capitalize() in texts
    if not case.problems:
        assert "No problems found" in texts
    if case.refused:
        reason = window.cannot_run_reason()
        assert reason and not window.run_button.isEnabled()
    else:
        window.settings_panel.batch_size.setValue(1)
        window.settings_panel.image_size.setValue(48)
        assert window.cannot_run_reason() == ""
