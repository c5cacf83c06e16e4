"""TensorBoard export: every training run's scalars, and the comparison's summary as text.

Training workers write the scalars themselves with `tf.summary`, to
`<comparison folder>/tensorboard/<run_id>/`, so `tensorboard --logdir <comparison>/tensorboard`
overlays the arms. `tf.summary` is TensorFlow's API but TensorBoard's implementation: without the
`tensorboard` package (TensorFlow 2.21 no longer depends on it) every call raises "TensorBoard is
not installed", so `tensorboard` is one of xlagui's runtime dependencies. Writing is still an
optional export: `ScalarWriter` never raises into the training run; a failure becomes an
omission in the run's summary (`OmissionKind.TENSORBOARD`, with the error's words) and the run
goes on. On by default: the
scalars are written once per epoch, after the epoch's time has been taken, so nothing is written
inside a timed stretch, and a comparison's event files are a few KB. The summary text needs
TensorFlow too; the parent (the CLI or the window, which never import it) hands it to a short
`python -m xlagui.core.worker.child --tensorboard-text DIR` child on the machine that ran the
training (`xlagui.core.measure.children.write_tensorboard_text`), when no figure is being timed.

Scalars (tags): `epoch/loss`, `epoch/accuracy`, `epoch/val_loss`, `epoch/val_accuracy`,
`epoch/seconds`, `epoch/step_seconds` (the epoch's time over its steps), one point per epoch.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from xlagui.core.protocol.omissions import Omission, OmissionKind

FOLDER = "tensorboard"
SCALAR_TAGS = (
    "epoch/loss",
    "epoch/accuracy",
    "epoch/val_loss",
    "epoch/val_accuracy",
    "epoch/seconds",
    "epoch/step_seconds",
)
TEXT_RUN = "comparison"  # the pseudo-run that holds the comparison's summary text
TEXT_TAG = "summary"


def logdir(out_dir: Path) -> Path:
    return out_dir / FOLDER


def run_dir(out_dir: Path, run_id: str) -> Path:
    return logdir(out_dir) / run_id


def has_runs(out_dir: Path) -> bool:
    """True when some training run has written event files under `out_dir`."""
    root = logdir(out_dir)
    return root.is_dir() and any(root.glob("*/events.out.tfevents.*"))


def command(out_dir: Path) -> str:
    """The command that opens a comparison's runs in TensorBoard."""
    return f"tensorboard --logdir {shlex.quote(str(logdir(out_dir)))}"


def epoch_scalars(epoch: Any, steps: int) -> dict[str, float]:
    """The scalars of one `EpochEvent` (a metric the epoch lacks is left out)."""
    values = {
        "epoch/loss": epoch.loss,
        "epoch/accuracy": epoch.accuracy,
        "epoch/val_loss": epoch.val_loss,
        "epoch/val_accuracy": epoch.val_accuracy,
        "epoch/seconds": epoch.epoch_seconds,
        "epoch/step_seconds": epoch.epoch_seconds / steps if steps else None,
    }
    return {k: float(v) for k, v in values.items() if v is not None}


class ScalarWriter:
    """One training run's per-epoch scalars, written with `summary` (the worker's `tf.summary`).

    An optional export must never fail a run: the first failure (creating the writer, writing,
    flushing) is kept in `error`, nothing more is attempted, and `omissions()` says so for the
    run's summary. Called after the epoch's time was taken, never inside a timed stretch.
    """

    def __init__(self, target: str, summary: Any) -> None:
        self._summary = summary
        self._writer: Any = None
        self.error = ""
        try:
            self._writer = summary.create_file_writer(target)
        except Exception as exc:  # any failure: the run goes on without the export
            self._fail(exc)

    def write_epoch(self, epoch: Any, steps: int) -> None:
        if self._writer is None:
            return
        try:
            with self._writer.as_default():
                for tag, value in epoch_scalars(epoch, steps).items():
                    self._summary.scalar(tag, value, step=epoch.epoch)
            self._writer.flush()
        except Exception as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._writer is None:
            return
        try:
            self._writer.close()
        except Exception as exc:
            self._fail(exc)

    def omissions(self) -> tuple[Omission, ...]:
        return (Omission(OmissionKind.TENSORBOARD, self.error),) if self.error else ()

    def _fail(self, exc: BaseException) -> None:
        self.error = self.error or (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        self._writer = None


def write_text_here(target: Path, text: str) -> None:
    """In a process that may import TensorFlow: write `text` under `TEXT_TAG` to `target`."""
    import tensorflow as tf  # lazy: only in the --tensorboard-text child

    writer = tf.summary.create_file_writer(str(target))
    with writer.as_default():
        tf.summary.text(TEXT_TAG, text, step=0)
    writer.flush()
    writer.close()
