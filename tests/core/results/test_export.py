"""Export naming and the all-or-nothing export, without Qt (the PNG is drawn by a stand-in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.streams import run_events
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.record import RunEntry
from xlagui.core.results import export
from xlagui.core.results.report import ComparisonReport


def small_report(name: str = "pets & cats") -> ComparisonReport:
    report = ComparisonReport(
        config=RunConfig(epochs=3, batch_size=8, image_size=48),
        dataset={"name": name, "root": "/data/pets", "layout": "split",
                 "class_names": ["cats", "dogs"]},
        runs=[RunEntry("01-baseline-r1", "baseline", 1, "off", "finished",
                       run_events(run_id="01-baseline-r1"))],
        created="2024-05-06T07:08:09+00:00",
    )
    report.recompute()
    return report


def fake_png(_report: ComparisonReport, path: Path) -> Path:
    path.write_bytes(b"\x89PNG")
    return path


def test_the_stem_names_the_dataset_and_the_time(tmp_path: Path) -> None:
    assert export.export_stem(small_report(), tmp_path) == "xlagui-pets---cats-20240506-070809"
    assert export.export_stem(small_report(name="///"), tmp_path) == (
        "xlagui-dataset-20240506-070809")


def test_the_stem_never_names_an_existing_file(tmp_path: Path) -> None:
    report = small_report(name="pets")
    (tmp_path / "xlagui-pets-20240506-070809.json").write_text("{}")
    (tmp_path / "xlagui-pets-20240506-070809-2.csv").write_text("")
    assert export.export_stem(report, tmp_path) == "xlagui-pets-20240506-070809-3"


def test_export_writes_png_csv_json_in_that_order(tmp_path: Path) -> None:
    written = export.export_report(small_report(name="pets"), tmp_path, fake_png)
    assert [p.name for p in written] == [f"xlagui-pets-20240506-070809{ext}"
                                         for ext in (".png", ".csv", ".json")]
    assert all(p.is_file() for p in written)
    assert export.read_json(written[2]).dataset["name"] == "pets"


def test_a_failed_export_takes_back_what_it_wrote(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "older.csv").write_text("kept")
    real = export.atomic_write_text  # type: ignore[attr-defined]

    def full_disk(path: Path, text: str) -> None:
        if path.suffix == ".json":
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(export, "atomic_write_text", full_disk)
    with pytest.raises(OSError, match="No space left"):
        export.export_report(small_report(), tmp_path, fake_png)
    assert [p.name for p in tmp_path.iterdir()] == ["older.csv"]  # the PNG and CSV are gone
