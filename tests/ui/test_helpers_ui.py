"""The Qt-free pieces of the GUI: traces from events, figures in words, drop checks,
thumbnail decoding."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QUrl
from pytestqt.qtbot import QtBot

from tests.helpers.images import make_image, make_rgb16_png
from tests.helpers.streams import run_events
from xlagui.core.events import BatchEvent, EpochEvent, StartedEvent
from xlagui.core.stats import Comparison, Interval
from xlagui.present import format as fmt
from xlagui.present.traces import trace_of
from xlagui.ui.main_window import classify_drop
from xlagui.ui.thumbnails import ThumbnailModel, decode_image


def test_a_trace_gathers_the_curves_of_a_run() -> None:
    trace = trace_of(run_events(epoch_seconds=(3.0, 1.0, 1.0), steps=4), epochs_planned=3)
    assert trace.steps_per_epoch == 4 and trace.total_steps == 12
    assert trace.batch_x[:4] == [0.25, 0.5, 0.75, 1.0]
    assert trace.cumulative == [3.0, 4.0, 5.0]
    assert trace.fraction == 1.0
    assert trace.summary is not None and trace.terminal is not None
    # The smoothed curve follows the raw one, lagging behind it.
    assert trace.batch_smooth[0] == trace.batch_loss[0]
    assert trace.batch_loss[-1] < trace.batch_smooth[-1] < trace.batch_smooth[0]


def test_eta_comes_from_the_pace_after_the_first_batch() -> None:
    trace = trace_of([StartedEvent(t=1.0, steps_per_epoch=10)], epochs_planned=2)
    assert trace.eta_seconds() is None
    trace.add(BatchEvent(t=5.0, epoch=1, step=1, loss=1.0))  # compiling took 4 s
    assert trace.eta_seconds() is None
    trace.add(BatchEvent(t=6.0, epoch=1, step=5, loss=0.9))  # 4 steps per second
    assert trace.eta_seconds() == pytest.approx(15 * 0.25)
    trace.add(EpochEvent(t=7.0, epoch=1, epoch_seconds=6.0, cumulative_seconds=6.0))
    assert trace.expected_total() == pytest.approx(12.0)


def test_a_loss_that_is_not_finite_leaves_a_gap() -> None:
    trace = trace_of([StartedEvent(steps_per_epoch=2), BatchEvent(epoch=1, step=1, loss=None),
                      BatchEvent(epoch=1, step=2, loss=0.5)], epochs_planned=1)
    assert trace.batch_x == [1.0] and trace.steps_done == 2


def test_figures_in_words() -> None:
    assert fmt.seconds(0.5) == "0.50 s" and fmt.seconds(12.34) == "12.3 s"
    assert fmt.seconds(None) == fmt.DASH
    assert fmt.duration(42) == "42 s" and fmt.duration(187) == "3:07"
    assert fmt.duration(3723) == "1:02:03"
    assert fmt.size_bytes(500 * 2**20) == "500 MB" and fmt.size_bytes(1536) == "1.5 KB"
    c = Comparison(speedup=Interval(2.0, 1.8, 2.2, "95% CI across repeats"))
    assert fmt.speedup(c) == "2.00× faster (95% CI 1.80–2.20×)"
    c = Comparison(speedup=Interval(0.5, None, None, "epochs"))
    assert fmt.speedup(c) == "2.00× slower (0.50×)"
    c = Comparison(total_time_ratio=0.75, xla_total_seconds=3.0, baseline_total_seconds=4.0)
    assert fmt.total_time(c) == "3.00 s with XLA vs 4.00 s without (0.75×, 25% less)"
    assert fmt.evidence({"xla_evidence": {"compiled": False}}) == "none: XLA compiled nothing"


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
    from xlagui.core.scan import ImageFile
    from xlagui.ui import thumbnails
    from xlagui.ui.thumbnails import ThumbnailView

    source = make_image(tmp_path / "one.png", (64, 64))
    decoded: list[str] = []

    def fake_decode(path: str, size: int) -> object:
        decoded.append(path)
        return thumbnails.QImage(str(source)).scaled(size, size)

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
    qtbot.waitUntil(lambda: not model._in_flight, timeout=5_000)
    assert 10 <= len(decoded) < 300, len(decoded)
    # Scrolling to the end (once the grid is laid out) loads the end, not what lies between.
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 1_000 * view.gridSize().height(), timeout=5_000)
    before = len(decoded)
    view.scrollToBottom()
    qtbot.waitUntil(lambda: model.is_cached(files[-1].path), timeout=5_000)
    qtbot.waitUntil(lambda: not model._in_flight, timeout=5_000)
    assert len(decoded) - before < 300
    assert not model.is_cached(files[5_000].path)
    model.shutdown()
