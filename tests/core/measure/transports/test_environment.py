"""The one environment recipe, for every kind of child: what it may see, how loud TensorFlow
is, where its temporary files go; nothing the recipe owns is inherited."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from xlagui.core.measure.jobs import ChildSettings, DevicesJob, PeakJob, TextJob
from xlagui.core.measure.transports.environment import child_settings, local_env
from xlagui.core.protocol.config import XlaMode


def test_each_short_child_gets_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    monkeypatch.setenv("XLA_FLAGS", "--user-setting")
    probe = local_env(DevicesJob(tmp_path).settings(), tmp_path)
    assert "CUDA_VISIBLE_DEVICES" not in probe  # the device probe sees every GPU
    assert probe["TF_CPP_MIN_LOG_LEVEL"] == "2" and "XLA_FLAGS" not in probe
    assert probe["TMPDIR"] == str(tmp_path / "tmp")
    on_gpu = local_env(PeakJob(tmp_path, device="gpu:1").settings(), tmp_path)
    assert on_gpu["CUDA_VISIBLE_DEVICES"] == "1"
    text = local_env(TextJob(tmp_path, target=tmp_path / "t").settings(), tmp_path)
    assert text["CUDA_VISIBLE_DEVICES"] == ""  # text needs no GPU
    assert text["KERAS_HOME"] and text["PYTHONIOENCODING"] == "utf-8"


def test_a_host_gets_the_same_variables_with_its_own_paths() -> None:
    folder = PurePosixPath("/home/u/.cache/xlagui/remote/runs/ab/runs/m2-xla")
    env = child_settings(ChildSettings("all", XlaMode.JIT, "text", quiet=False), folder,
                         PurePosixPath("/home/u/.cache/keras"))
    assert "CUDA_VISIBLE_DEVICES" not in env  # every GPU, through MirroredStrategy
    assert env["XLA_FLAGS"] == f"--xla_dump_to={folder}/xla --xla_dump_hlo_as_text"
    assert env["TF_CPP_MIN_LOG_LEVEL"] == "0"  # XLA's log lines are evidence
    assert env["TMPDIR"] == f"{folder}/tmp" and env["KERAS_HOME"] == "/home/u/.cache/keras"
