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
    # Its own setting is a flag of every command that takes a host, read into the target.
    assert main(["hosts", elsewhere.HOST, "--elsewhere-region", "north", "--json"]) == 0
    assert elsewhere.REGIONS[-1] == "north"
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    assert "--elsewhere-region NAME" in capsys.readouterr().out


@pytest.mark.parametrize(("typed", "meant"), [("comparee", "compare"), ("sweeep", "sweep"),
                                              ("scna", "scan")])
def test_a_mistyped_command_is_refused_with_what_was_meant(
    typed: str, meant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A word that is neither a command nor a folder never opens the window with the word as
    a dataset: it is refused, naming the command meant."""
    monkeypatch.chdir(tmp_path)  # no folder of that name here
    assert main([typed, "--demo"]) == 2
    said = capsys.readouterr().err
    assert f"{typed!r} is neither a command nor an existing folder" in said
    assert f"did you mean {meant!r}?" in said


def test_a_word_like_no_command_lists_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["elephants"]) == 2
    assert "the commands are scan, compare, demo-data" in capsys.readouterr().err


def test_without_a_display_the_window_says_so_in_one_line(tmp_path: Path) -> None:
    """`xlagui` on a server over ssh: one line naming what is missing and the headless command,
    exit status 2, not Qt's abort (134)."""
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = cli(env=env, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, out.stderr
    assert "no display" in lines[0] and "xlagui compare --demo" in lines[0]


def test_what_the_window_lacks_is_read_from_the_environment(tmp_path: Path) -> None:
    from xlagui.cli.gui import missing_display

    assert missing_display({}, "linux") == \
        "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    assert missing_display({"DISPLAY": ":987"}, "linux") == "no X server at DISPLAY=:987"
    assert missing_display({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert missing_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    def found(name: str) -> str:  # the library is installed
        return f"lib{name}.so.0"

    assert missing_display({"DISPLAY": "remote:10"}, "linux", find_library=found) is None
    # An X display, but not the library Qt's X11 plugin needs (Qt would abort with status 134).
    said = missing_display({"DISPLAY": "remote:10"}, "linux", find_library=lambda name: None)
    assert said is not None and "libxcb-cursor0" in said
    assert missing_display({}, "darwin") is None and missing_display({}, "win32") is None
