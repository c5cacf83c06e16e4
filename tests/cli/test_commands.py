"""The headless commands other than `compare`, as a user in a terminal or a CI job would run
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import elsewhere
from tests.helpers.cli import cli
from tests.helpers.images import make_class_folders
from xlagui.cli import main


def test_version() -> None:
    from xlagui import __version__

    out = cli("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"xlagui {__version__}"


def test_scan_prints_a_summary_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_class_folders(tmp_path / "d", {"cats": 5, "dogs": 5})
    assert main(["scan", str(tmp_path / "d")]) == 0
    text = capsys.readouterr().out
    assert "cats" in text and "dogs" in text
    assert main(["scan", str(tmp_path / "d"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["layout"] == "auto-split" and data["class_names"] == ["cats", "dogs"]


def test_scan_refuses_one_class(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_class_folders(tmp_path / "d", {"cats": 5})
    assert main(["scan", str(tmp_path / "d")]) == 1


def test_missing_folder_is_a_clear_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", str(tmp_path / "nope")]) == 2
    assert "nope" in capsys.readouterr().err


def test_inspect_prints_what_xla_did(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    dump = Path(__file__).resolve().parents[1] / "helpers" / "hlo_dump"
    run = tmp_path / "02-xla-r1"
    shutil.copytree(dump, run / "xla")
    shutil.copy(dump / "worker.log", run / "worker.log")
    assert main(["inspect", str(run), "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "02-xla-r1 — XLA did: 1 module, 15 fusions (15 loop)" in out
    assert "Largest fusions (top 3 by output bytes)" in out
    assert "f32[8,60,60,64]" in out  # the first convolution's result
    assert "0.25 s" in out  # its logged compile time
    assert main(["inspect", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["02-xla-r1"]["modules"][0]["fusions"] == 15
    assert main(["inspect", str(tmp_path / "nothing")]) == 2
    assert "neither a comparison folder" in capsys.readouterr().err


def test_models_refuses_one_class(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--classes", "1"]) == 2
    assert "at least 2 classes" in capsys.readouterr().err


@pytest.mark.tf
def test_models_lists_the_builtins_with_their_parameters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--image-size", "150"]) == 0
    text = capsys.readouterr().out
    assert "529,295" in text  # the article's CNN at 150 px, as worked out by hand
    for name in ("mobilenetv2", "resnet50", "efficientnetb0", "vit", "mixer"):
        assert name in text


def test_hosts_reaches_a_made_up_transport_by_the_name_typed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transport registered in `core/measure/transports/` (tests/helpers/elsewhere.py) is a
    `--host`/`HOST` away: the command line names no transport; a name none is registered under
    is a usage error."""
    elsewhere.register(monkeypatch)
    assert main(["hosts", elsewhere.HOST, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cpu"] == "Made-up CPU"
    assert main(["hosts", "nowhere://box"]) == 2
    assert "no transport called 'nowhere'" in capsys.readouterr().err
