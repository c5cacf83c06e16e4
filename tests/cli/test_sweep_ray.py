"""`xlagui sweep --ray`: without Ray it says how to get it; a cluster out of reach is said before
anything runs; `--ray` and `--host` together are refused. (The sweep on a real head:
tests/core/sweep/cluster/test_ray_head.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from xlagui.cli import main
from xlagui.cli.common import EXIT_USAGE
from xlagui.core.sweep.cluster import RayConnectError, RayExecutor


def test_without_ray_the_option_says_how_to_get_it(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when not installed
    code = main(["sweep", "--demo", "--batch", "16,32", "--ray", "auto",
                 "--out", str(tmp_path / "s")])
    err = " ".join(capsys.readouterr().err.split())
    assert code == EXIT_USAGE
    assert "needs Ray" in err and "pip install 'xlagui[ray]'" in err
    assert not (tmp_path / "s").exists()  # nothing planned, nothing written


def test_a_cluster_out_of_reach_is_said_before_the_sweep(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    def refuse(self: RayExecutor) -> None:
        raise RayConnectError("10.0.0.9:6379", "no GCS answered")

    monkeypatch.setattr(RayExecutor, "connect", refuse)
    code = main(["sweep", "--demo", "--batch", "16", "--ray", "10.0.0.9:6379",
                 "--out", str(tmp_path / "s")])
    err = " ".join(capsys.readouterr().err.split())
    assert code == EXIT_USAGE
    assert "Could not connect to the Ray cluster at 10.0.0.9:6379: no GCS answered" in err
    assert not (tmp_path / "s").exists()


def test_ray_and_host_together_are_refused(capsys: pytest.CaptureFixture[str],
                                           tmp_path: Path) -> None:
    code = main(["sweep", "--demo", "--batch", "16", "--ray", "auto", "--host", "a,b",
                 "--out", str(tmp_path / "s")])
    assert code == EXIT_USAGE
    assert "--ray and --host" in capsys.readouterr().err
