"""Reading what XLA did back from a saved run folder (`xlagui.core.results.dumps`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from xlagui.core.results import dumps

DUMP = Path(__file__).resolve().parents[2] / "helpers" / "hlo_dump"


def test_inspect_a_run_folder_and_refuse_another(tmp_path: Path) -> None:
    run = tmp_path / "02-xla-r1"
    shutil.copytree(DUMP, run / "xla")
    shutil.copy(DUMP / "worker.log", run / "worker.log")
    ((run_id, report),) = dumps.inspect_folder(run)
    assert run_id == "02-xla-r1" and report.modules[0].compile_seconds is not None
    with pytest.raises(dumps.InspectError):
        dumps.inspect_folder(tmp_path / "nothing")
