"""`xlagui sweep`, as a user in a terminal would run it. Without the `tf` mark the measuring
workers are the fakes of tests/helpers/fake_measure_worker.py, put in the cells' job where the
window's and the tests' requests put them."""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.cli import main
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.sweep.cell import CellJob
from xlagui.core.sweep.plan import CELL_OVERHEAD_SECONDS

FAKE_MEASURE = Path(__file__).resolve().parents[1] / "helpers" / "fake_measure_worker.py"


def fake_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


# --png lays its figure out offscreen, where Qt says so (tests/ui/conftest.py: OFFSCREEN_NOISE).
@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
def test_a_sweep_writes_its_cells_and_a_rerun_runs_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from xlagui.cli import sweep

    monkeypatch.setattr(sweep, "CellJob", functools.partial(CellJob, worker_command=fake_command))
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "s"
    args = ["sweep", str(data), "--batch", "4,8", "--image-size", "48", "--arms", "jit",
            "--budget", "100", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    printed = capsys.readouterr()
    saved = json.loads(printed.out)  # sweep.json alone on stdout
    assert saved == json.loads((out / "sweep.json").read_text())
    assert [c["settings"] for c in saved["cells"]] == [
        {"batch_size": "4", "image_size": "48", "arms": "jit"},
        {"batch_size": "8", "image_size": "48", "arms": "jit"}]
    for cell in saved["cells"]:
        assert cell["status"] == "done"
        (arm,) = cell["arms"]
        assert arm["arm"] == "jit" and arm["low"] <= arm["ratio"] <= arm["high"]
        assert cell["environment"]
    assert "Sweep: 2 cells, 10 s of measuring each" in printed.err
    assert "• jit faster at every batch size" in printed.err
    assert (out / "sweep.csv").is_file() and (out / "sweep.md").is_file()

    assert main(args) == 0  # finished: nothing runs
    again = capsys.readouterr().out
    assert "Sweep: 2 cells, all finished already: nothing to run" in again
    assert "measuring…" not in again and "✓" not in again

    # --png draws the plot of the finished sweep (offscreen): the figure has both cells' band.
    assert not (out / "sweep.png").exists()
    assert main([*args, "--png"]) == 0
    assert "sweep.png" in capsys.readouterr().out
    from PySide6.QtGui import QImage

    image = QImage(str(out / "sweep.png"))
    assert image.width() >= 1000 and image.height() >= 600

    assert main([*args[:3], "4,16", *args[4:]]) == 2
    err = capsys.readouterr().err.replace("\n", " ")
    assert "holds another sweep (axis batch_size: 4,8 → 4,16)" in err


@pytest.mark.parametrize(("args", "needle"), [
    (["--set", "threads"], "--set takes NAME=VALUE,VALUE"),
    (["--set", "colour=red"], "no lever called 'colour'"),
    (["--budget", "50", "--batch", "4,8"], "too small for 2 cells"),
    (["--arms", "jit,int8"], "unknown arm part 'int8'"),
])
def test_bad_sweeps_are_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    assert main(["sweep", str(data), "--out", str(tmp_path / "o"), *args]) == 2
    assert needle in capsys.readouterr().err.replace("\n", " ")
    assert not (tmp_path / "o").exists()


@pytest.mark.tf
def test_a_real_two_cell_sweep_at_48_px(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`xlagui sweep --demo --batch 16,32 --arms jit --image-size 48`: one cell per batch size,
    each a real interleaved comparison in fresh TensorFlow workers, with the XLA side's ratio
    (and its interval, when the budget bought enough rounds for one) in sweep.json. A short
    budget: the figures need not be tight, and how many rounds fit in it depends on what else
    the machine is doing, so that is not asserted; that each cell stopped by its budget or its
    target, with an estimate, is."""
    out = tmp_path / "s"
    code = main(["sweep", "--demo", "--batch", "16,32", "--arms", "jit", "--image-size", "48",
                 "--budget", str(2 * (CELL_OVERHEAD_SECONDS + 10)), "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    saved = json.loads((out / "sweep.json").read_text())
    assert [c["settings"]["batch_size"] for c in saved["cells"]] == ["16", "32"]
    for cell in saved["cells"]:
        assert cell["status"] == "done", cell["reason"]
        (arm,) = cell["arms"]
        assert arm["arm"] == "jit" and arm["pairs"] > 0 and arm["ratio"] > 0
        if arm["low"] is not None:
            assert 0 < arm["low"] <= arm["ratio"] <= arm["high"]
        assert cell["environment"]["tensorflow"]
        report = json.loads((out / cell["comparison_dir"] / "comparison.json").read_text())
        assert report["comparison"]["interleaved"]["stopped_by"] in ("budget", "target")
        assert report["config"]["batch_size"] == int(cell["settings"]["batch_size"])
        assert report["config"]["quick"] and not report["config"]["explain"]
        assert not report["runs"] and not report["inspect_runs"]  # quick, no why


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")
def test_a_backend_axis_sweep_runs_resumes_and_plots(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: `--set backend=tf,jax`: the jax cell measures the JAX arm beside TF+XLA and
    the baseline; a rerun after the first cell resumes with the second alone; --png plots."""
    from xlagui.cli import sweep

    monkeypatch.setattr(sweep, "CellJob", functools.partial(CellJob, worker_command=fake_command))
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "s"
    args = ["sweep", str(data), "--batch", "8", "--image-size", "48", "--set", "backend=tf,jax",
            "--budget", "120", "--out", str(out)]
    assert main([*args, "--json"]) == 0
    saved = json.loads(capsys.readouterr().out)
    tf, jax = saved["cells"]
    assert tf["settings"]["lever:backend"] == "tf"
    assert jax["settings"]["lever:backend"] == "jax"
    assert [a["arm"] for a in tf["arms"]] == ["jit"]
    assert [a["arm"] for a in jax["arms"]] == ["jit", "jax"]
    assert all(c["status"] == "done" for c in saved["cells"])

    # Resume: the jax cell as if the sweep had stopped before it, run again alone.
    saved_file = out / "sweep.json"
    data_now = json.loads(saved_file.read_text())
    data_now["cells"] = data_now["cells"][:1]
    saved_file.write_text(json.dumps(data_now))
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "Sweep: 2 cells (1 finished already)" in said
    again = json.loads(saved_file.read_text())
    assert [c["status"] for c in again["cells"]] == ["done", "done"]

    assert main([*args, "--png"]) == 0
    assert (out / "sweep.png").is_file()
