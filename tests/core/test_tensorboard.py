"""TensorBoard export: the scalars of an epoch, the command, and (with real TensorFlow) event
files that TensorBoard's own reader reads back, one scalar series per run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from xlagui.core import tensorboard as tboard
from xlagui.core.events import EpochEvent


def test_epoch_scalars_leave_out_what_an_epoch_lacks() -> None:
    ev = EpochEvent(epoch=1, loss=0.5, accuracy=0.75, val_loss=None, val_accuracy=None,
                    epoch_seconds=2.0, cumulative_seconds=2.0)
    assert tboard.epoch_scalars(ev, steps=4) == {
        "epoch/loss": 0.5,
        "epoch/accuracy": 0.75,
        "epoch/seconds": 2.0,
        "epoch/step_seconds": 0.5,
    }
    assert set(tboard.epoch_scalars(ev, steps=4)) <= set(tboard.SCALAR_TAGS)


def test_command_and_folder(tmp_path: Path) -> None:
    out = tmp_path / "my comparison"
    assert tboard.command(out) == f"tensorboard --logdir '{out / 'tensorboard'}'"
    assert not tboard.has_runs(out)
    run = tboard.run_dir(out, "01-baseline-r1")
    run.mkdir(parents=True)
    (run / "events.out.tfevents.1.host").write_bytes(b"")
    assert tboard.has_runs(out)


@pytest.mark.tf
def test_a_real_comparison_writes_event_files_tensorboard_reads(tmp_path: Path) -> None:
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.cli import main
    from xlagui.core.export import read_json
    from xlagui.core.hlo import xla_runs

    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "out"
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    code = main(["compare", str(data), "--epochs", "2", "--batch", "8", "--image-size", "48",
                 "--budget", "10", "--out", str(out)])
    assert code in (0, 1)  # 1: a tiny set may not give a valid comparison; files are written
    report = read_json(out / "comparison.json")
    run_ids = [r.run_id for r in report.runs]
    assert run_ids == ["01-baseline-r1", "02-xla-r1"]
    from tensorboard.util.tensor_util import make_ndarray

    epochs = {r.run_id: [e for e in r.events if isinstance(e, EpochEvent)] for r in report.runs}
    for run_id in run_ids:
        acc = event_accumulator.EventAccumulator(str(out / "tensorboard" / run_id))
        acc.Reload()
        # tf.summary (TF 2) writes scalars as tensors that the scalars plugin shows.
        assert set(acc.Tags()["tensors"]) == set(tboard.SCALAR_TAGS)
        assert acc.SummaryMetadata("epoch/loss").plugin_data.plugin_name == "scalars"
        loss = acc.Tensors("epoch/loss")
        assert [e.step for e in loss] == [1, 2]
        assert [float(make_ndarray(e.tensor_proto)) for e in loss] == pytest.approx(
            [e.loss for e in epochs[run_id]], rel=1e-6
        )
    text = event_accumulator.EventAccumulator(str(out / "tensorboard" / "comparison"))
    text.Reload()
    assert "summary" in "".join(text.Tags()["tensors"])
    # What XLA did: read from the short inspection compile's dump (after the timed work), with
    # its logged compile times; the timed XLA runs dumped nothing.
    ((run_id, did),) = xla_runs(report)
    assert run_id == "i-xla" and did.modules and did.fusions > 0
    assert not (out / "runs" / "02-xla-r1" / "xla").exists()
    assert all(m.compile_seconds is not None for m in did.modules)
    assert all(m.instructions_before is not None for m in did.modules)
    # The measuring XLA worker dumped nothing but still shows that XLA compiled.
    m2 = report.measure_runs[1].summary
    assert m2 is not None and m2.xla_evidence is not None
    assert m2.xla_evidence.compiled and m2.xla_evidence.hlo_modules == 0
    assert not (out / "runs" / "m2-xla" / "xla").exists()
