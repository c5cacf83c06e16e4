"""TensorBoard export: the scalars of an epoch, the command, a writer that never fails a run, and
(with real TensorFlow) a comparison whose workers cannot load TensorBoard still finishing both
runs. The event files of a real comparison, read back by TensorBoard's own reader, are checked
in tests/cli/test_compare.py, on the one real comparison the tests share."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.cli import assert_ran
from xlagui.core.protocol.events import EpochEvent
from xlagui.core.protocol.omissions import Omission, OmissionKind
from xlagui.core.worker import tensorboard as tboard
from xlagui.present.notes import comparison_notes


def _epoch(n: int) -> EpochEvent:
    return EpochEvent(epoch=n, loss=0.5 / n, accuracy=0.75, val_loss=None, val_accuracy=None,
                      epoch_seconds=2.0, cumulative_seconds=2.0 * n)


class FakeSummary:
    """`tf.summary` as far as `ScalarWriter` uses it, failing where a test says."""

    def __init__(self, fail_on: str = "", fail_at_epoch: int = 0) -> None:
        self.fail_on, self.fail_at_epoch = fail_on, fail_at_epoch
        self.written: list[tuple[str, float, int]] = []
        self.closed = False

    def create_file_writer(self, target: str) -> FakeSummary:
        if self.fail_on == "create":
            raise PermissionError(13, "Permission denied", target)
        return self

    @contextmanager
    def as_default(self) -> Iterator[None]:
        yield

    def scalar(self, tag: str, value: float, step: int) -> None:
        if self.fail_on == "scalar" and step >= self.fail_at_epoch:
            raise RuntimeError("TensorBoard is not installed, missing implementation for "
                               "tf.summary.scalar\nmore lines")
        self.written.append((tag, value, step))

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def test_scalar_writer_writes_each_epoch_at_its_step() -> None:
    summary = FakeSummary()
    writer = tboard.ScalarWriter("/nowhere", summary)
    for n in (1, 2):
        writer.write_epoch(_epoch(n), steps=4)
    writer.close()
    assert [(tag, step) for tag, _, step in summary.written if tag == "epoch/loss"] == [
        ("epoch/loss", 1), ("epoch/loss", 2)
    ]
    assert summary.closed and writer.omissions() == ()


def test_scalar_writer_that_cannot_write_keeps_the_reason_and_stops_trying() -> None:
    summary = FakeSummary(fail_on="scalar", fail_at_epoch=2)
    writer = tboard.ScalarWriter("/nowhere", summary)
    for n in (1, 2, 3):
        writer.write_epoch(_epoch(n), steps=4)  # never raises
    writer.close()
    assert {step for _, _, step in summary.written} == {1}  # nothing after the failure
    assert not summary.closed
    assert writer.omissions() == (Omission(
        OmissionKind.TENSORBOARD,
        "TensorBoard is not installed, missing implementation for tf.summary.scalar",
    ),)


def test_scalar_writer_that_cannot_be_created_says_why() -> None:
    writer = tboard.ScalarWriter("/read-only/run", FakeSummary(fail_on="create"))
    writer.write_epoch(_epoch(1), steps=4)
    writer.close()
    (left_out,) = writer.omissions()
    assert left_out.kind is OmissionKind.TENSORBOARD and "Permission denied" in left_out.said


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
def test_workers_without_tensorboard_still_finish_their_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure a fresh install once had (TensorFlow 2.21 without the `tensorboard` package):
    every `tf.summary` call raises. The optional export must not take the runs with it."""
    from tests.helpers.datasets import tiny_split_dataset
    from xlagui.cli import main
    from xlagui.core.results.export import read_json

    shadow = tmp_path / "shadow" / "tensorboard"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("hidden by the test")\n')
    # What the workers import first; the rest of the path stays (the tree under test).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(shadow.parent), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    data = tiny_split_dataset(tmp_path / "d", train=8, test=2)
    out = tmp_path / "out"
    code = main(["compare", str(data), "--epochs", "1", "--batch", "8", "--image-size", "48",
                 "--budget", "10", "--no-explain", "--out", str(out)])
    report = read_json(out / "comparison.json")
    assert [r.status for r in report.runs] == ["finished", "finished"]
    assert_ran(code, out)  # 1 only for a comparison a tiny set leaves not valid
    c = report.comparison
    assert c is not None
    said = "TensorBoard is not installed, missing implementation for tf.summary.scalar"
    assert comparison_notes(c) == [
        f"TensorBoard files not written: {said} (runs 01-baseline-r1, 02-xla-r1)"
    ]
    for run in report.runs:
        assert run.summary is not None and run.summary.epochs_done == 1
        assert run.summary.omissions == (Omission(OmissionKind.TENSORBOARD, said),)
