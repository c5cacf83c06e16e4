"""The whole way with real TensorFlow: the window, the runner, two worker processes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pytestqt.qtbot import QtBot

from tests.helpers.images import make_class_folders
from tests.ui.conftest import WindowFactory, is_closed
from xlagui.present.verdicts import verdict_sentence


@pytest.mark.tf
def test_a_real_comparison_on_a_tiny_dataset(qtbot: QtBot, make_window: WindowFactory,
                                             tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    make_class_folders(root, {"african": 12, "asian": 12}, size=(48, 48))
    window = make_window(real_worker=True)
    with qtbot.waitSignal(window.dataset_loaded, timeout=30_000):
        window.open_dataset(root)
    panel = window.settings_panel
    panel.epochs.setValue(2)
    panel.batch_size.setValue(8)
    panel.image_size.setValue(48)
    panel.augment.setChecked(False)
    panel.budget.setValue(10)  # the speed phase: real measuring workers, 10 s of blocks at most
    panel.explain.setChecked(False)  # the why from the window: the next test but one
    assert window.cannot_run_reason() == ""
    with qtbot.waitSignal(window.comparison_finished, timeout=600_000) as blocker:
        assert window.start_comparison()
    report = blocker.args[0]
    assert [r.status for r in report.runs] == ["finished", "finished"], [
        (r.run_id, r.error) for r in report.runs]
    view = window.runs_view
    for variant in ("baseline", "xla"):
        column = view.columns[variant]
        assert column.status_text == "Finished"
        x, _y = column.epoch_train.getData()
        assert list(np.round(x)) == [1.0, 2.0]
        trace = column.trace
        assert trace is not None and trace.started is not None
        assert trace.started.device_kind == "CPU"
    xla = report.runs[1].summary
    assert xla is not None and xla.xla_evidence is not None
    assert xla.xla_evidence.compiled, xla.xla_evidence
    # The speed phase came first, with both real measuring workers, and gave the headline.
    assert [r.status for r in report.measure_runs] == ["finished", "finished"]
    # An estimate, stopped by its budget or its precision: how many rounds fit in 10 s depends
    # on what else the machine is doing, so that is not asserted.
    c = report.comparison
    assert c is not None and c.interleaved is not None and c.interleaved.pairs > 0
    assert c.interleaved.ratio is not None and c.interleaved.stopped_by in ("budget", "target")
    assert view.columns["xla"].measure_trace is not None
    assert report.comparison is not None and report.comparison.verdict_kind
    assert view.comparison.verdict.text() == verdict_sentence(report.comparison)
    assert (window.comparisons.report_folder / "comparison.json").is_file()


@pytest.mark.tf
def test_closing_mid_run_stops_the_worker_and_leaves_none_behind(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Closing asks, stops the run (cancel, then terminate, then kill) and waits for it: no
    worker process is left behind, even one busy starting TensorFlow or compiling. (How long
    the stop takes is measured by bench/bench_cancel.py.)"""
    import psutil

    from xlagui.ui.shared import dialogs

    root = tmp_path / "tiny"
    make_class_folders(root, {"african": 12, "asian": 12}, size=(48, 48))
    window = make_window(real_worker=True)
    with qtbot.waitSignal(window.dataset_loaded, timeout=30_000):
        window.open_dataset(root)
    window.settings_panel.epochs.setValue(50)
    window.settings_panel.batch_size.setValue(8)
    window.settings_panel.image_size.setValue(48)
    monkeypatch.setattr(dialogs, "ask", lambda *args, **kwargs: True)
    pids: list[int] = []

    def on_event(_run_id: str, event: object) -> None:
        if getattr(event, "type", "") == "started":
            pids.append(event.pid)  # type: ignore[attr-defined]

    assert window.start_comparison()
    assert window.comparisons.supervisor is not None
    window.comparisons.supervisor.event_received.connect(on_event)
    qtbot.waitUntil(lambda: len(pids) == 2, timeout=300_000)
    assert all(psutil.pid_exists(pid) for pid in pids)
    with qtbot.waitSignal(window.comparison_finished, timeout=60_000) as blocker:
        window.close()
    qtbot.waitUntil(lambda: is_closed(window), timeout=5_000)
    # Closed during the speed phase: both measuring workers started, no training run did.
    assert len(pids) == 2
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    report = blocker.args[0]
    # A close, not a Stop: the measurement cut short is interrupted, the training not run.
    assert [r.status for r in report.measure_runs] == ["interrupted", "interrupted"]
    assert [r.status for r in report.runs] == ["not run", "not run"]
    assert all(not r.events for r in report.runs)


@pytest.mark.tf
def test_a_python_builder_and_an_h5_file_run_from_the_window(
        qtbot: QtBot, make_window: WindowFactory, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's own models, the whole way: picked with "Open model file…" and by dropping,
    checked in a real worker process (never imported here), then measured by real workers."""
    import sys

    import keras
    from PySide6.QtWidgets import QFileDialog

    from tests.helpers.clicks import click
    from tests.ui.conftest import drop, url_mime
    from xlagui.ui.settings.model_panel import real_checker

    root = tmp_path / "tiny"
    make_class_folders(root, {"african": 12, "asian": 12}, size=(48, 48))
    builder = tmp_path / "my_net.py"
    builder.write_text(
        "import keras\n\n\ndef build_model(input_shape, num_classes):\n"
        "    inputs = keras.Input(shape=input_shape)\n"
        "    x = keras.layers.Conv2D(4, 3, activation='gelu')(inputs)\n"
        "    x = keras.layers.GlobalAveragePooling2D()(x)\n"
        "    return keras.Model(inputs, keras.layers.Dense(1, activation='sigmoid')(x))\n")
    inputs = keras.Input(shape=(40, 40, 3))
    x = keras.layers.GlobalAveragePooling2D()(keras.layers.Conv2D(4, 3)(inputs))
    saved = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))
    saved.compile(optimizer="sgd", loss="binary_crossentropy")
    saved_path = tmp_path / "fixed40.h5"  # a legacy HDF5 file (a .keras one: tests/cli)
    saved.save(saved_path)

    window = make_window(real_worker=True, model_checker=real_checker)
    with qtbot.waitSignal(window.dataset_loaded, timeout=30_000):
        window.open_dataset(root)
    panel = window.settings_panel
    panel.batch_size.setValue(8)
    panel.image_size.setValue(48)
    panel.budget.setValue(10)
    window.speed_only.setChecked(True)
    models = panel.model_panel
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(builder), ""))
    click(qtbot, models.open_button)
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=120_000)
    assert "my_net" not in sys.modules  # the user's code ran in the check worker only
    assert "parameters" in models.status.text() and "gelu" not in models.status.text()
    with qtbot.waitSignal(window.comparison_finished, timeout=300_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    assert report.config.model.source == "python"
    assert report.config.model.params == 4 * 3 * 3 * 3 + 4 + 4 + 1
    assert [r.status for r in report.measure_runs] == ["finished", "finished"], [
        (r.run_id, r.error) for r in report.measure_runs]
    # "What XLA did" after a speed-only comparison: its inspection compile ran and dumped;
    # and the why, for the user's own model: both sides profiled, XLA's parity judged.
    assert [(r.run_id, r.status) for r in report.inspect_runs] == [
        ("i-baseline", "finished"), ("i-xla", "finished")]
    assert window.xla_did_panel.current() is not None
    why = window.why_panel.why
    assert why.explain is not None and set(why.explain.arms) == {"baseline", "xla"}
    assert "xla" in why.parity

    panel.explain.setChecked(False)  # asserted above, for the builder; the file only measures
    drop(window, url_mime(saved_path))
    qtbot.waitUntil(lambda: panel.image_size.value() == 40, timeout=120_000)
    assert not panel.image_size.isEnabled()
    qtbot.waitUntil(lambda: window.cannot_run_reason() == "", timeout=120_000)
    assert "compiled with SGD + " in models.status.text()
    assert "(as saved in the file)" in models.status.text()
    with qtbot.waitSignal(window.comparison_finished, timeout=300_000) as blocker:
        click(qtbot, window.run_button)
    report = blocker.args[0]
    assert (report.config.model.source, report.config.image_size) == ("h5", 40)
    assert [r.status for r in report.measure_runs] == ["finished", "finished"], [
        (r.run_id, r.error) for r in report.measure_runs]
