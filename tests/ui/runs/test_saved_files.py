"""A comparison run from the window leaves the same files as one run from the CLI (issue 38's
one save step): the workflow writes `comparison.md` beside the JSON and the CSV, whoever
asked, and `xlagui inspect` reads the folder."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, watching
from tests.ui.runs.test_runs import loaded_window, run_to_end
from xlagui.cli import main
from xlagui.core.results import history
from xlagui.present.markdown import folder_markdown
from xlagui.ui.window.main_window import MainWindow

__all__ = ["loaded_window"]  # the fixture, used by name


def test_a_window_comparison_folder_has_the_markdown_the_cli_writes(
        qtbot: QtBot, loaded_window: MainWindow) -> None:
    window = loaded_window
    with watching(window, ModalAnswerer()):
        report = run_to_end(qtbot, window)
    folder = history.list_items(window.history_panel.root)[0].folder
    names = {p.name for p in folder.iterdir() if p.is_file()}
    assert {"comparison.json", "comparison.csv", "comparison.md"} <= names
    assert not [n for n in names if n.startswith(".") or n.endswith(".tmp")]  # atomic
    written = (folder / "comparison.md").read_text(encoding="utf-8")
    assert written == folder_markdown(report, folder)  # type: ignore[arg-type]
    assert written.startswith("#") and "baseline" in written
    assert main(["inspect", str(folder)]) == 0  # the folder re-renders as a CLI one does
