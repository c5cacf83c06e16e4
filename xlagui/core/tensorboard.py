"""TensorBoard export: every training run's scalars, and the comparison's summary as text.

Training workers write the scalars themselves with `tf.summary` (no new dependency), to
`<comparison folder>/tensorboard/<run_id>/`, so `tensorboard --logdir <comparison>/tensorboard`
overlays the arms. On by default: the scalars are written once per epoch, after the epoch's time
has been taken, so nothing is written inside a timed stretch, and a comparison's event files are a
few KB. The summary text needs TensorFlow too; the parent (the CLI or the window, which never
import it) hands it to a short `python -m xlagui.core.worker --tensorboard-text DIR TAG` process
after the training, when no figure is being timed.

Scalars (tags): `epoch/loss`, `epoch/accuracy`, `epoch/val_loss`, `epoch/val_accuracy`,
`epoch/seconds`, `epoch/step_seconds` (the epoch's time over its steps), one point per epoch.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def write_text(out_dir: Path, text: str, *, timeout: float = 120.0) -> bool:
    """Write `text` as the comparison's summary (Markdown) next to the runs. False when it could
    not be written (the scalars are still there; nobody waits on this)."""
    target = logdir(out_dir) / TEXT_RUN
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "xlagui.core.worker", "--tensorboard-text", str(target)],
            input=text,
            capture_output=True,
            text=True,
            encoding="utf-8",
            # A folder name that is not UTF-8 (kept as surrogates) must not stop the summary.
            errors="replace",
            timeout=timeout,
            env=_quiet_env(),
        )
    except (OSError, UnicodeError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _quiet_env() -> dict[str, str]:
    import os

    from xlagui.core.paths import cache_dir

    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""  # text needs no GPU
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    # Keras writes ~/.keras/keras.json on import; keep it in our own cache folder instead.
    env.setdefault("KERAS_HOME", str(cache_dir() / "keras"))
    return env


def write_text_here(target: Path, text: str) -> None:
    """In a process that may import TensorFlow: write `text` under `TEXT_TAG` to `target`."""
    import tensorflow as tf

    writer = tf.summary.create_file_writer(str(target))
    with writer.as_default():
        tf.summary.text(TEXT_TAG, text, step=0)
    writer.flush()
    writer.close()
