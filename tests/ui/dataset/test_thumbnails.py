"""Thumbnails: every colour mode decoded, a 16-bit PNG stretched, only the rows in view."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage
from pytestqt.qtbot import QtBot

from tests.helpers.images import make_image, make_rgb16_png
from xlagui.ui.dataset.thumbnails import ThumbnailModel, decode_image


@pytest.mark.parametrize("mode", ["RGB", "L", "P", "RGBA", "CMYK", "I;16"])
def test_thumbnails_decode_every_colour_mode(tmp_path: Path, qtbot: QtBot, mode: str) -> None:
    ext = ".jpg" if mode == "CMYK" else ".png"
    path = make_image(tmp_path / f"img{ext}", (300, 200), mode)
    image = decode_image(str(path), 96)
    assert (image.width(), image.height()) == (96, 64)
    assert not image.isNull()


def test_a_sixteen_bit_png_is_shown_stretched(tmp_path: Path, qtbot: QtBot) -> None:
    image = decode_image(str(make_rgb16_png(tmp_path / "deep.png", (20, 10))), 96)
    assert (image.width(), image.height()) == (20, 10)


def test_only_visible_thumbnails_are_decoded(qtbot: QtBot, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """10,000 images: a scrolled grid asks for the rows in view (and a margin), not all."""
    from xlagui.core.data.scan import ImageFile
    from xlagui.ui.dataset import thumbnails
    from xlagui.ui.dataset.thumbnails import ThumbnailView

    source = make_image(tmp_path / "one.png", (64, 64))
    decoded: list[str] = []

    def fake_decode(path: str, size: int) -> object:
        decoded.append(path)
        return QImage(str(source)).scaled(size, size)

    monkeypatch.setattr(thumbnails, "decode_image", fake_decode)
    files = [ImageFile(path=f"/nowhere/img{i:05d}.png", rel=f"img{i:05d}.png", split="train",
                       label="a", width=64, height=64, format="PNG", mode="RGB", size_bytes=1)
             for i in range(10_000)]
    model = ThumbnailModel()
    view = ThumbnailView()
    qtbot.addWidget(view)
    view.setModel(model)
    view.resize(800, 600)
    view.show()
    qtbot.waitExposed(view)
    model.set_files(files)
    qtbot.waitUntil(lambda: model.is_cached(files[0].path), timeout=5_000)
    qtbot.waitUntil(lambda: not model.is_loading(), timeout=5_000)
    assert 10 <= len(decoded) < 300, len(decoded)
    # Scrolling to the end (once the grid is laid out) loads the end, not what lies between.
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 1_000 * view.gridSize().height(), timeout=5_000)
    before = len(decoded)
    view.scrollToBottom()
    qtbot.waitUntil(lambda: model.is_cached(files[-1].path), timeout=5_000)
    qtbot.waitUntil(lambda: not model.is_loading(), timeout=5_000)
    assert len(decoded) - before < 300
    assert not model.is_cached(files[5_000].path)
    model.shutdown()
