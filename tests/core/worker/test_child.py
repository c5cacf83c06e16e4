"""Real worker processes running TensorFlow on tiny images (48 px, 2 epochs, CPU)."""

from __future__ import annotations

import dataclasses
import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.streams import recorded_events
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.measure.runner import RunResult, run_worker, samples_from_scan
from xlagui.core.measure.worker_process import CANCEL_GRACE_SECONDS
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import (
    BatchEvent,
    CancelledEvent,
    EpochEvent,
    Event,
    FinishedEvent,
    RunSummary,
    StartedEvent,
)
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.present.errors import error_hint

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> DatasetScan:
    return scan_dataset(tiny_split_dataset(tmp_path_factory.mktemp("data")))


def run(
    scan: DatasetScan,
    tmp_path: Path,
    mode: XlaMode,
    state: TaskState | None = None,
    on_event: object = None,
    cancel_grace: float = CANCEL_GRACE_SECONDS,
    **config: object,
) -> RunResult:
    names, train, val = samples_from_scan(scan)
    cfg = RunConfig(**{"epochs": 2, "batch_size": 8, "image_size": 48, **config})  # type: ignore[arg-type]
    spec = RunSpec(
        "r",
        "baseline" if mode is XlaMode.OFF else "xla",
        mode,
        cfg,
        names,
        train,
        val,
        tmp_path / "run",
    )
    return run_worker(
        spec,
        state or TaskState(),
        on_event,  # type: ignore[arg-type]
        cancel_grace=cancel_grace,
    )


def filled(summary: RunSummary) -> set[str]:
    """The summary's fields that differ from their defaults."""
    return {
        f.name for f in dataclasses.fields(summary) if getattr(summary, f.name) != f.default
    }


def test_baseline_has_xla_off_and_no_evidence(scan: DatasetScan, tmp_path: Path) -> None:
    r = run(scan, tmp_path, XlaMode.OFF)
    assert r.status == "finished", r.error
    started = r.started
    assert started is not None
    assert started.xla_in_effect is False and started.device_kind == "CPU"
    assert {"python", "tensorflow", "keras"} <= set(started.versions)
    assert (started.train_count, started.val_count, started.steps_per_epoch) == (32, 8, 4)
    epochs = [e for e in r.events if isinstance(e, EpochEvent)]
    assert [e.epoch for e in epochs] == [1, 2]
    assert all(e.val_accuracy is not None and e.epoch_seconds > 0 for e in epochs)
    assert epochs[1].cumulative_seconds == pytest.approx(sum(e.epoch_seconds for e in epochs))
    s = r.summary
    assert s is not None
    assert s.xla_evidence is not None
    assert s.xla_evidence.compiled is False and s.xla_evidence.hlo_modules == 0
    assert s.peak_rss_bytes is not None and s.peak_rss_bytes > 100 * 2**20
    times = [e.t for e in r.events]
    assert times == sorted(times)
    # The streams the GUI tests replay were recorded from this worker: the same fields filled
    # (a summary is typed now: every field is always there, so compare which ones are set).
    recorded = next(e for e in recorded_events("off") if isinstance(e, FinishedEvent)).summary
    rerecord = "the worker's summary changed: python tests/helpers/record_streams.py"
    # The spread of the steady epochs needs two of them: this run has one, the recording two.
    assert filled(s) | {"steady_epoch_stdev"} == filled(recorded), rerecord


def test_jit_compile_is_in_effect_with_evidence(scan: DatasetScan, tmp_path: Path) -> None:
    r = run(scan, tmp_path, XlaMode.JIT)
    assert r.status == "finished", r.error
    assert r.started is not None and r.started.xla_in_effect is True
    assert r.summary is not None and r.summary.xla_evidence is not None
    ev = r.summary.xla_evidence
    assert ev.hlo_modules >= 1 and ev.fusions >= 1 and ev.compiled_log_line is True


def test_autoclustering_engages_on_cpu(scan: DatasetScan, tmp_path: Path) -> None:
    r = run(scan, tmp_path, XlaMode.AUTOCLUSTER)
    assert r.status == "finished", r.error
    assert r.started is not None and r.started.xla_in_effect is True
    assert r.summary is not None and r.summary.xla_evidence is not None
    ev = r.summary.xla_evidence
    assert ev.compiled is True and ev.hlo_modules >= 1


def test_cancel_mid_training_stops_at_the_next_batch(scan: DatasetScan, tmp_path: Path) -> None:
    state = TaskState()
    asked: list[float] = []

    def on_event(e: Event) -> None:
        if isinstance(e, BatchEvent) and not asked:
            asked.append(time.monotonic())
            state.request_interruption()

    # Batches of 4: an epoch has several more batches than the cancel may take to be heard.
    r = run(scan, tmp_path, XlaMode.OFF, state, on_event, epochs=50, batch_size=4)
    assert r.status == "cancelled"
    assert r.events[-1].forced is False  # type: ignore[attr-defined]
    # Asked at the first batch's event: the worker hears it within a batch or two (the cancel
    # crosses a pipe while the next batch may already run) and never finishes the epoch.
    batches = [e for e in r.events if isinstance(e, BatchEvent)]
    assert 1 <= len(batches) <= 3, [(e.epoch, e.step) for e in batches]  # type: ignore[attr-defined]
    assert not any(isinstance(e, EpochEvent) for e in r.events)


@pytest.mark.parametrize(
    ("cancel_grace", "forced"),
    [
        # Tracing and XLA-compiling the first step takes seconds: a 0.1 s grace runs out in it.
        # serial: a race between that grace and the worker's own reply, which another test on
        # the same 2 cores decided the other way once (the reply came within 0.1 s).
        pytest.param(0.1, True, marks=pytest.mark.serial),
        # Given all the time it needs, the worker stops by itself after the first step.
        (300.0, False),
    ],
    ids=["forced-when-the-grace-runs-out", "cooperative-once-compiled"],
)
def test_cancel_during_compile(
    scan: DatasetScan, tmp_path: Path, cancel_grace: float, forced: bool
) -> None:
    state = TaskState()
    pids: list[int] = []

    def on_event(e: Event) -> None:
        if isinstance(e, StartedEvent):  # sent just before fit() traces and compiles
            pids.append(e.pid)
            state.request_interruption()

    r = run(scan, tmp_path, XlaMode.JIT, state, on_event, cancel_grace=cancel_grace, epochs=50)
    assert r.status == "cancelled"
    cancelled = r.events[-1]
    assert isinstance(cancelled, CancelledEvent)
    assert cancelled.forced is forced
    if forced:
        assert r.returncode == -signal.SIGTERM
        assert "terminated" in cancelled.reason
    else:
        assert r.returncode == 0
        assert cancelled.reason == "cancelled by the user"
    assert not any(isinstance(e, EpochEvent) for e in r.events)
    assert pids and not psutil.pid_exists(pids[0])


def test_missing_gpu_is_a_clear_error(scan: DatasetScan, tmp_path: Path) -> None:
    import shutil

    if shutil.which("nvidia-smi"):
        pytest.skip("this machine may have a GPU")
    r = run(scan, tmp_path, XlaMode.OFF, device="gpu:0")
    assert r.status == "error"
    assert r.error is not None and "sees no GPU" in r.error.message
    assert "tensorflow[and-cuda]" in error_hint(r.error)
