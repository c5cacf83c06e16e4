"""Export: a PNG at least 1600 px wide with real content, plus CSV and JSON; all or nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageStat
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import click_menu_item
from tests.helpers.reports import comparison_report
from tests.helpers.streams import run_events
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results import export
from xlagui.core.results.report import ComparisonReport
from xlagui.present import format as fmt
from xlagui.present.markdown import report_markdown
from xlagui.ui.report_png import WIDTH, ReportFigure, render_report_png
from xlagui.ui.shared import dialogs
from xlagui.ui.shared.theme import VARIANT_COLORS
from xlagui.ui.window.main_window import MainWindow


def known_report() -> ComparisonReport:
    config = RunConfig(epochs=3, batch_size=8, image_size=48)
    report = ComparisonReport(
        config=config,
        dataset={"name": "tiny", "root": "/data/tiny", "layout": "split",
                 "class_names": ["african", "asian"],
                 "counts": {"train": {"african": 12, "asian": 12},
                            "test": {"african": 4, "asian": 4}}},
        runs=[
            RunEntry("01-baseline-r1", "baseline", 1, "off", "finished",
                     run_events(run_id="01-baseline-r1")),
            RunEntry("02-xla-r1", "xla", 1, "jit", "finished",
                     run_events(variant="xla", xla_mode="jit", epoch_seconds=(6, 0.5, 0.5),
                                run_id="02-xla-r1")),
        ],
    )
    report.recompute()
    return report


def has_colour(image: Image.Image, hex_colour: str, tolerance: int = 12) -> bool:
    target = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    pixels = np.asarray(image.convert("RGB"), dtype=int)
    return bool((np.abs(pixels - target).max(axis=2) <= tolerance).any())


def test_the_png_is_wide_legible_and_not_blank(tmp_path: Path, qtbot: QtBot) -> None:
    figure = ReportFigure(known_report())
    qtbot.addWidget(figure)
    assert [side.variant for side in figure.side_plots] == ["baseline", "xla"]  # trained
    path = render_report_png(known_report(), tmp_path / "report.png")
    assert path == tmp_path / "report.png"
    with Image.open(path) as im:
        assert im.format == "PNG"
        assert im.width >= WIDTH >= 1600
        assert 900 < im.height < 3000
        stat = ImageStat.Stat(im.convert("L"))
        assert stat.stddev[0] > 20  # text and plots, not one flat colour
        assert has_colour(im, VARIANT_COLORS["baseline"]) and has_colour(im, VARIANT_COLORS["xla"])
    assert not list(tmp_path.glob(".*.tmp"))


def test_export_from_the_window_writes_png_csv_json(qtbot: QtBot, loaded_window: MainWindow,
                                                    tmp_path: Path) -> None:
    window = loaded_window
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        window.start_comparison()
    out = tmp_path / "out"
    out.mkdir()
    with qtbot.waitSignal(window.exported, timeout=20_000) as blocker:
        written = window.export_report(out)
    assert written == blocker.args[0]
    assert written is not None and [p.suffix for p in written] == [".png", ".csv", ".json"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in written)
    with Image.open(written[0]) as im:
        assert im.width >= 1600
    rows = export.read_csv(written[1])
    assert any(r["metric"] == "speedup_steady_epoch" and float(r["value"]) == pytest.approx(2.0)
               for r in rows)
    assert export.read_json(written[2]).comparison is not None
    assert window.message_bar.level == "ok"
    # A second export next to the first does not overwrite it.
    again = window.export_report(out)
    assert again is not None and again[0] != written[0]


def test_export_asks_for_a_folder(qtbot: QtBot, loaded_window: MainWindow, tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtWidgets import QFileDialog

    window = loaded_window
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        window.start_comparison()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *a, **k: str(tmp_path)))
    with qtbot.waitSignal(window.exported, timeout=20_000):
        window.export_action.trigger()
    assert len(list(tmp_path.glob("xlagui-*.png"))) == 1


@pytest.mark.parametrize("failure", ["not-a-folder", "disk-full"])
def test_a_failed_export_explains_and_leaves_nothing(
        qtbot: QtBot, loaded_window: MainWindow, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    window = loaded_window
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000):
        window.start_comparison()
    shown: list[tuple[str, str, str]] = []
    monkeypatch.setattr(dialogs, "show_error",
                        lambda parent, title, message, hint="", details="":
                        shown.append((title, message, hint)))
    if failure == "not-a-folder":
        target = tmp_path / "a-file"
        target.write_text("")
        before = sorted(tmp_path.iterdir())
    else:
        target = tmp_path / "full"
        target.mkdir()
        before = []
        real = export.atomic_write_text

        def full_disk(path: object, text: str) -> None:
            if str(path).endswith(".csv"):
                raise OSError(28, "No space left on device")
            real(path, text)  # type: ignore[arg-type]

        monkeypatch.setattr(export, "atomic_write_text", full_disk)
    assert window.export_report(target) is None
    assert len(shown) == 1 and shown[0][0] == "Export failed"
    assert "Nothing was left behind" in shown[0][2]
    if failure == "disk-full":
        assert "No space left on device" in shown[0][1]
        assert list(target.iterdir()) == []  # the PNG written first was taken back
    else:
        assert sorted(tmp_path.iterdir()) == before


def test_export_is_offered_only_with_a_report(window: MainWindow) -> None:
    assert not window.export_action.isEnabled()
    assert window.export_report(Path("/nowhere")) is None
    assert "Nothing to export" in window.message_bar.text()


def test_the_png_renders_without_a_display_or_application(tmp_path: Path) -> None:
    """What `xlagui compare --png` does: no QApplication yet, no DISPLAY."""
    report_json = tmp_path / "comparison.json"
    export.write_json(known_report(), report_json)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from xlagui.core.results import export\n"
        "from xlagui.ui.report_png import render_report_png\n"
        f"report = export.read_json(Path({str(report_json)!r}))\n"
        f"print(render_report_png(report, Path({str(tmp_path / 'cli.png')!r})))\n"
    )
    env = {k: v for k, v in __import__("os").environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    with Image.open(tmp_path / "cli.png") as im:
        assert im.width >= 1600


def test_the_png_has_a_panel_per_arm_beyond_xla(qtbot: QtBot, tmp_path: Path) -> None:
    report = comparison_report(arms=("bf16", "jit+bf16"), steps={"jit+bf16": 0.08},
                               training=True, jitter=0.05, rounds=12)
    figure = ReportFigure(report)
    qtbot.addWidget(figure)
    assert [p.variant for p in figure.arm_panels] == ["bf16", "jit+bf16"]  # as measured
    arms = {a.variant: a for a in report.comparison.interleaved.arms}
    for panel in figure.arm_panels:
        a = arms[panel.variant]
        texts = panel.texts()
        assert a.arm in texts[0] and fmt.arm_label(a) in texts[0]  # the title
        said = dict(panel.rows)
        assert said["Speed per step"] == fmt.arm_speed(a, len(arms))
        assert said["Speed per step"].endswith(", Bonferroni-adjusted for 3 arms)")
        assert "faster (95% CI" in said["Speed per step"]
        assert said["Pairs"] == "12"
        assert said["Status"] == "engaged"
        assert said["Accuracy"] == fmt.arm_accuracy(a)
        # Its training run's figures, as the sides' panels show theirs.
        assert said["Training"] == "1 run, the last finished"
        assert said["Steady epoch"] == "0.80 s" and said["Val. accuracy"] == "90.0%"
        for value in said.values():
            assert value in texts
    # An arm whose worker failed says so; the XLA side alone gets no arm panel.
    failed = ReportFigure(comparison_report(arms=("bf16", "fp16"), failed=("fp16",)))
    qtbot.addWidget(failed)
    said = dict(failed.arm_panels[1].rows)
    assert said["Speed per step"] == "—" and said["Pairs"] == "0"
    assert said["Status"] == "failed: out of memory" and "Training" not in said
    alone = ReportFigure(comparison_report(training=True))
    qtbot.addWidget(alone)
    assert alone.arm_panels == []
    with Image.open(render_report_png(report, tmp_path / "arms.png")) as im:
        assert im.width >= WIDTH


def test_copy_as_markdown_from_the_menu(qtbot: QtBot, loaded_window: MainWindow) -> None:
    from PySide6.QtWidgets import QApplication

    window = loaded_window
    clipboard = QApplication.clipboard()
    clipboard.setText("before")
    assert not click_menu_item(qtbot, window, window.copy_markdown_action)  # nothing to copy
    assert clipboard.text() == "before"
    with qtbot.waitSignal(window.comparison_finished, timeout=20_000) as blocker:
        window.start_comparison()
    report = blocker.args[0]
    assert click_menu_item(qtbot, window, window.copy_markdown_action)
    text = clipboard.text()
    assert text == report_markdown(report)
    assert text.startswith("# XLA vs baseline on elephants")
    assert ("| Arm | Speed per step | 95% CI (Bonferroni-adjusted) | Pairs | Status | Accuracy "
            "| Recommended |") in (
        text)
    assert "## Training runs" in text and text.rstrip().endswith("```")
    assert window.message_bar.level == "ok" and "Markdown" in window.message_bar.text()
