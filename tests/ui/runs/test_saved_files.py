"""A comparison run from the window leaves the same files as one run from the CLI (issue 38's
one save step): the workflow writes `comparison.md` beside the JSON and the CSV, whoever
asked, and `xlagui inspect` reads the folder."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, watching
from tests.ui.conftest import WindowFactory
from tests.ui.runs.test_runs import drop_dataset, run_to_end
from xlagui.core.results import history
from xlagui.present.markdown import folder_markdown


def test_a_window_comparison_folder_has_the_markdown_the_cli_writes(
        qtbot: QtBot, make_window: WindowFactory, dataset: Path) -> None:
    window = make_window()
    drop_dataset(qtbot, window, dataset)
    panel = window.settings_panel
    panel.epochs.setValue(2)
    panel.batch_size.setValue(4)
    panel.image_size.setValue(48)
    with watching(window, ModalAnswerer()):
        report = run_to_end(qtbot, window)
    folder = history.list_items(window.history_panel.root)[0].folder
    names = {p.name for p in folder.iterdir() if p.is_file()}
    assert {"comparison.json", "comparison.csv", "comparison.md"} <= names
    assert not [n for n in names if n.startswith(".") or n.endswith(".tmp")]  # atomic
    written = (folder / "comparison.md").read_text(encoding="utf-8")
    assert written == folder_markdown(report, folder)  # type: ignore[arg-type]
    assert written.startswith("#") and "baseline" in written
