"""What a drag carries, in words: a folder, a file, several items, nothing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QUrl

from tests.helpers.images import make_image
from xlagui.ui.window.drops import classify_drop


def test_classify_drop(tmp_path: Path) -> None:
    def mime(*urls: QUrl) -> QMimeData:
        m = QMimeData()
        m.setUrls(list(urls))
        return m

    folder = tmp_path / "data"
    folder.mkdir()
    file = make_image(tmp_path / "x.png")
    assert classify_drop(mime(QUrl.fromLocalFile(str(folder)))) == (folder, "")
    assert "is a file" in classify_drop(mime(QUrl.fromLocalFile(str(file))))[1]
    assert "one dataset folder at a time" in classify_drop(
        mime(QUrl.fromLocalFile(str(folder)), QUrl.fromLocalFile(str(file))))[1]
    assert "does not exist" in classify_drop(mime(QUrl.fromLocalFile(str(tmp_path / "no"))))[1]
    assert classify_drop(QMimeData())[0] is None

