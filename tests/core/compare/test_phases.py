"""A comparison driven by the fake worker: order, partial results, files written, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.images import make_split_dataset
from tests.helpers.streams import FakeWorker, run_events
from xlagui.core.analysis.stats import EXTRAPOLATED, SPEED_MEASURED, BreakEven
from xlagui.core.compare import CLOSING, new_report, plan_runs, run_comparison
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import EpochEvent, ErrorEvent, Event
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.task import TaskState
from xlagui.core.results import export, history
from xlagui.present.report import comparison_title, history_title
from xlagui.present.verdicts import verdict_sentence


@pytest.fixture
def scan(tmp_path: Path) -> DatasetScan:
    make_split_dataset(tmp_path / "data", {"african": 6, "asian": 6}, {"african": 2, "asian": 2})
    return scan_dataset(tmp_path / "data")


def worker(delay: float = 0.0, **fail: ErrorEvent) -> FakeWorker:
    return FakeWorker(
        {
            "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
            "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
        },
        delay=delay,
        fail=fail,
    )


def test_runs_are_interleaved() -> None:
    ids = [r.run_id for r in plan_runs(RunConfig(repeats=2, xla="autocluster"))]
    assert ids == ["01-baseline-r1", "02-xla-r1", "03-baseline-r2", "04-xla-r2"]
    assert [r.xla_mode for r in plan_runs(RunConfig(repeats=1, xla="autocluster"))] == [
        "off",
        "autocluster",
    ]


def test_comparison_with_known_streams(scan: DatasetScan, tmp_path: Path) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48, repeats=2))
    fake = worker()
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=fake)
    assert [s.variant for s in fake.specs] == ["baseline", "xla", "baseline", "xla"]
    assert all(len(s.train) == 12 and len(s.val) == 4 for s in fake.specs)
    c = report.comparison
    assert c is not None and c.valid
    assert c.speedup is not None and c.speedup.value == pytest.approx(2.0)
    assert c.total_time_ratio == pytest.approx(7 / 5)
    # 2 s behind after epoch 3, gaining 0.5 s per epoch: caught up 4 epochs later
    assert c.break_even == BreakEven(EXTRAPOLATED, 7, 3)
    assert c.verdict_kind == SPEED_MEASURED


def test_a_crashed_run_keeps_the_finished_ones(scan: DatasetScan, tmp_path: Path) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    crash = ErrorEvent(t=9.0, error_type="WorkerDied", message="killed", hint="memory")
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker(xla=crash))
    assert [r.status for r in report.runs] == ["finished", "error"]
    saved = export.read_json(tmp_path / "out" / "comparison.json")
    assert saved.runs[0].summary == report.runs[0].summary
    assert saved.runs[1].error is not None
    assert saved.comparison is not None and not saved.comparison.valid


def test_cancel_stops_the_rest(scan: DatasetScan, tmp_path: Path) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48, repeats=2))
    state = TaskState()
    run_comparison(
        report,
        scan,
        tmp_path / "out",
        state,
        worker=worker(),
        on_run_done=lambda entry: state.request_interruption(),
    )
    assert [r.status for r in report.runs] == ["finished", "cancelled", "cancelled", "cancelled"]


def test_closing_keeps_the_run_in_progress_as_interrupted(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """The app closing (window, Ctrl+C, SIGTERM) during run 2 of 4: run 1 stays finished, run 2
    is `interrupted` with the epoch it finished, runs 3 and 4 are `not run`; so the file says."""
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48, repeats=2))
    state = TaskState()

    def close_after_one_xla_epoch(entry: RunEntry, event: Event) -> None:
        if entry.variant == "xla" and isinstance(event, EpochEvent):
            state.request_interruption(CLOSING)

    out = tmp_path / "out"
    run_comparison(report, scan, out, state, worker=worker(), on_event=close_after_one_xla_epoch)
    statuses = ["finished", "interrupted", "not run", "not run"]
    assert [r.status for r in report.runs] == statuses
    saved = export.read_json(out / "comparison.json")
    assert [r.status for r in saved.runs] == statuses
    interrupted = saved.runs[1]
    assert [e.epoch for e in interrupted.events if isinstance(e, EpochEvent)] == [1]
    assert interrupted.events[-1].type == "cancelled" and interrupted.summary is None
    assert saved.runs[2].events == [] and saved.runs[3].events == []
    # Only finished runs are compared; the CSV and the history say what became of the others.
    assert saved.recompute().runs_compared == {"baseline": 1, "xla": 0}
    notes = {r["run_id"]: r["note"] for r in export.read_csv(out / "comparison.csv")
             if r["row"] == "run"}
    assert notes == dict(zip([r.run_id for r in report.runs], statuses, strict=True))
    [item] = history.list_items(tmp_path)
    assert (item.runs_finished, item.runs_interrupted) == (1, 1)


def test_a_stop_before_the_close_still_saves_a_close(scan: DatasetScan, tmp_path: Path) -> None:
    """Stop pressed, then the window closed while the run was stopping: what is saved is the
    close's (a later plain stop request does not undo it either)."""
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    state = TaskState()

    def stop_then_close(entry: RunEntry, event: Event) -> None:
        if isinstance(event, EpochEvent):
            state.request_interruption()
            state.request_interruption(CLOSING)
            state.request_interruption()

    run_comparison(report, scan, tmp_path / "out", state, worker=worker(),
                   on_event=stop_then_close)
    assert state.interruption_reason == CLOSING
    assert [r.status for r in report.runs] == ["interrupted", "not run"]


def test_a_run_status_is_checked_when_a_comparison_is_read(
    scan: DatasetScan, tmp_path: Path
) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    data = report.to_dict()
    data["runs"][0]["status"] = "interrupted"
    data["runs"][1]["status"] = "not run"
    again = type(report).from_dict(json.loads(json.dumps(data)))
    assert [r.status for r in again.runs] == ["interrupted", "not run"]
    del data["runs"][0]["status"]  # files of the first releases: every run saved had finished
    assert type(report).from_dict(data).runs[0].status == "finished"
    data["runs"][1]["status"] = "paused"
    with pytest.raises(ValueError, match="run '02-xla-r1': status 'paused' is not one of"):
        type(report).from_dict(data)


def test_one_side_only(scan: DatasetScan, tmp_path: Path) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker(), only={"xla"})
    assert [r.status for r in report.runs] == ["queued", "finished"]


def test_csv_and_json_round_trip(scan: DatasetScan, tmp_path: Path) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker())
    again = export.read_json(tmp_path / "out" / "comparison.json")
    assert again.to_dict() == report.to_dict()
    assert again.recompute() == report.comparison
    rows = export.read_csv(tmp_path / "out" / "comparison.csv")
    epochs = [r for r in rows if r["row"] == "epoch"]
    assert len(epochs) == 6
    base = [float(r["epoch_seconds"]) for r in epochs if r["variant"] == "baseline"]
    assert base == [3.0, 1.0, 1.0]
    summary = {r["metric"]: r for r in rows if r["row"] == "summary"}
    assert float(summary["speedup_steady_epoch"]["value"]) == pytest.approx(2.0)
    # Verdicts as data, in the CSV too: kinds, never sentences (those are `present/`'s).
    assert (summary["verdict"]["value"], summary["verdict"]["note"]) == (SPEED_MEASURED, "")
    assert (summary["break_even_epoch"]["value"], summary["break_even_epoch"]["note"]) == (
        "7", EXTRAPOLATED)
    assert summary["xla_val_accuracy"]["note"] == "one_seed"
    data = json.loads((tmp_path / "out" / "comparison.json").read_text())
    saved = data["comparison"]
    assert "verdict" not in saved and "accuracy_text" not in saved
    assert saved["break_even"] == {"kind": EXTRAPOLATED, "epoch": 7, "measured_epochs": 3}
    assert saved["accuracy"]["kind"] == "one_seed" and saved["recommendation"] is None
    assert data["reproduce"].startswith("xlagui compare ")
    assert "--epochs 3 --batch 4 --image-size 48" in data["reproduce"]
    assert data["dataset"]["fingerprint"] == scan.fingerprint()


def test_exports_are_atomic_on_failure(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    out = tmp_path / "exp"
    out.mkdir()
    export.write_json(report, out / "comparison.json")
    before = (out / "comparison.json").read_bytes()

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.fsync", full_disk)
    report.runs[0].status = "finished"
    with pytest.raises(OSError, match="No space"):
        export.write_json(report, out / "comparison.json")
    assert (out / "comparison.json").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["comparison.json"]


def test_history_lists_and_reloads(scan: DatasetScan, tmp_path: Path) -> None:
    root = tmp_path / "history"
    folder = history.new_folder(root)
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, folder, TaskState(), worker=worker())
    (root / "garbage").mkdir()
    (root / "garbage" / "comparison.json").write_text("{not json")
    items = history.list_items(root)
    assert len(items) == 1 and items[0].runs_finished == 2
    assert history.load(items[0]).to_dict() == report.to_dict()


def test_what_xla_did_comes_from_one_untimed_compile_per_xla_arm(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """Only the inspection compile dumps XLA's HLO; the timed workers (measuring and training)
    run without the dump, whose cost BENCHMARKS.md measured. Without the why (`--no-explain`),
    only the arms that use XLA are inspected."""
    from xlagui.core.compare import run_inspection, spec_for
    from xlagui.core.measure.runner import RunResult, samples_from_scan
    from xlagui.core.protocol.spec import RunSpec

    report = new_report(scan, RunConfig(epochs=1, batch_size=4, image_size=48,
                                        arms=("bf16", "jit+bf16"), explain=False))
    samples = samples_from_scan(scan)
    asked: list[RunSpec] = []

    def fake(spec: RunSpec, state: TaskState, relay: object) -> RunResult:
        asked.append(spec)
        return RunResult(spec=spec, status="finished")

    run_inspection(report, samples, tmp_path / "out", TaskState(), worker=fake)
    assert [(s.run_id, s.mode, s.xla_dump, s.precision) for s in asked] == [
        ("i-xla", "inspect", "text", "float32"),
        ("i-jit+bf16", "inspect", "text", "mixed_bfloat16"),
    ]
    assert [e.status for e in report.inspect_runs] == ["finished", "finished"]
    timed = [spec_for(e, report, samples, tmp_path, mode=WorkerMode.MEASURE)
             for e in report.measure_runs]
    timed += [spec_for(e, report, samples, tmp_path) for e in report.runs]
    assert {s.xla_dump for s in timed} == {"none"}
    again = type(report).from_dict(json.loads(json.dumps(report.to_dict())))
    assert [e.run_id for e in again.inspect_runs] == ["i-xla", "i-jit+bf16"]
    assert again.entry("i-xla") is not None


def test_the_why_inspects_every_arm_but_the_aa_twin(scan: DatasetScan, tmp_path: Path) -> None:
    """Explaining why (the default), the baseline is inspected too (its profile and parity
    steps are what the arms are set beside), each arm in its own worker; the A/A twin is not."""
    from xlagui.core.compare import run_inspection
    from xlagui.core.measure.runner import RunResult, samples_from_scan
    from xlagui.core.protocol.spec import RunSpec

    report = new_report(scan, RunConfig(epochs=1, batch_size=4, image_size=48, arms=("bf16",),
                                        check=True))
    assert report.config.explain
    asked: list[RunSpec] = []

    def fake(spec: RunSpec, state: TaskState, relay: object) -> RunResult:
        asked.append(spec)
        return RunResult(spec=spec, status="finished")

    run_inspection(report, samples_from_scan(scan), tmp_path / "out", TaskState(), worker=fake)
    assert {r.variant for r in report.measure_runs} == {"baseline", "xla", "bf16", "check"}
    assert [(s.run_id, s.mode, s.config.explain) for s in asked] == [
        ("i-baseline", "inspect", True), ("i-xla", "inspect", True), ("i-bf16", "inspect", True)]
    assert len({s.config.seed for s in asked}) == 1  # parity: every side from the same seed


def test_a_comparison_saved_before_the_summary_was_typed_still_opens(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """comparison.json files written by earlier versions hold each run's summary as a plain
    object with only the keys of their day, and `started` configs without the newer settings:
    they open, and give the figures they gave."""
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker())
    path = tmp_path / "out" / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    newer = {"mode", "steps_done", "nonfinite_losses", "xla_did", "cache"}
    for run in data["runs"]:
        for event in run["events"]:
            if event["type"] == "finished":
                event["summary"] = {k: v for k, v in event["summary"].items() if k not in newer}
                event["summary"]["xla_evidence"].pop("compilations")
            if event["type"] == "started":
                event["protocol"] = 3
                for key in ("arms", "extra", "quick", "target_percent", "budget_seconds"):
                    event["config"].pop(key)
    path.write_text(json.dumps(data), encoding="utf-8")
    old = export.read_json(path)
    summary = old.runs[1].summary
    assert summary is not None and summary.mode == "train" and summary.xla_did is None
    assert summary.xla_evidence is not None and summary.xla_evidence.compiled
    c = old.recompute()
    assert report.comparison is not None
    assert c.speedup == report.comparison.speedup
    assert verdict_sentence(c) == verdict_sentence(report.comparison)


def test_a_comparison_saved_before_verdicts_were_data_lists_and_reopens(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """comparison.json files written before verdicts were data hold them as sentences
    (`verdict`, `accuracy_text`, `break_even_text`, a `recommendation` string) and nothing
    typed: History lists them with the sentence they kept, and reopening one derives the
    verdict's data from its events again."""
    root = tmp_path / "history"
    folder = history.new_folder(root)
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, folder, TaskState(), worker=worker())
    path = folder / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    saved = data["comparison"]
    for key in ("break_even", "accuracy"):
        saved.pop(key)
    words = "XLA was 2.00× faster per epoch (as an old version said it)."
    saved.update(verdict=words, accuracy_text="validation accuracy: 90.0% vs 90.0% baseline",
                 break_even_epoch=7, break_even_text="epoch 7", recommendation="")
    path.write_text(json.dumps(data), encoding="utf-8")
    [item] = history.list_items(root)
    assert item.comparison is None and item.saved_verdict == words
    assert item.runs_finished == 2 and item.speedup == pytest.approx(2.0)
    old = history.load(item)
    assert old.comparison == report.comparison  # recomputed: the typed verdict is back
    assert old.comparison is not None and old.comparison.break_even == BreakEven(EXTRAPOLATED, 7, 3)
    # A new one lists with its record, which `present.verdicts` says; no sentence is kept.
    export.write_json(old, path)
    [item] = history.list_items(root)
    assert item.comparison == report.comparison and item.saved_verdict == ""


def test_a_comparison_saved_before_models_could_be_chosen_opens_as_the_articles_cnn(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """No `config.model`, no `model_check`, started events from the recorded protocol-3
    streams: the article's CNN, with the title, reproduce line and figures of its day."""
    from tests.helpers.streams import recorded_events

    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48))
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker())
    path = tmp_path / "out" / "comparison.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["config"].pop("model")
    data.pop("model_check")
    data["runs"][0]["events"] = [e.to_dict() for e in recorded_events("off")]
    for event in data["runs"][0]["events"]:
        if event["type"] == "started":
            event["config"].pop("model")  # the recorded stream predates it
    path.write_text(json.dumps(data), encoding="utf-8")
    old = export.read_json(path)
    assert old.config.model.is_article_cnn and old.model_check is None
    started = old.runs[0].started
    assert started is not None and started.config.model.is_article_cnn
    assert "--model" not in old.reproduce_command()
    assert comparison_title(old) == f"XLA vs baseline on {report.dataset['name']}"
    assert history_title(history.list_items(tmp_path)[0]) == comparison_title(old)
    assert old.recompute().efficiency is not None  # the CNN's work, counted from its shapes


def test_the_model_is_in_the_record_the_title_and_the_reproduce_line(
    scan: DatasetScan, tmp_path: Path
) -> None:
    from xlagui.core.protocol.config import ModelChoice
    from xlagui.core.protocol.events import ModelEvent

    chosen = ModelChoice(source="keras", name="my net", file="/models/my net.keras",
                         sha256="0" * 64, params=99, new_head=True)
    check = ModelEvent(model=chosen, image_size=48, batch_size=4, flops_per_step=4e9,
                       flops_forward_per_sample=3e8)
    report = new_report(scan, RunConfig(epochs=3, batch_size=4, image_size=48,
                                        model=ModelChoice(source="keras", name="my net",
                                                          file="/models/my net.keras",
                                                          new_head=True)),
                        model_check=check)
    run_comparison(report, scan, tmp_path / "out", TaskState(), worker=worker())
    assert report.config.model == chosen  # the check's, with the parameter count
    data = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert data["config"]["model"] == {"source": "keras", "name": "my net",
                                       "file": "/models/my net.keras", "sha256": "0" * 64,
                                       "params": 99, "new_head": True}
    assert data["reproduce"].endswith("--model '/models/my net.keras' --new-head")
    assert comparison_title(report).endswith("with my net.keras")
    again = export.read_json(tmp_path / "out" / "comparison.json")
    assert again.model_check == check and again.config.model == chosen
    assert history_title(history.list_items(tmp_path)[0]).endswith("with my net.keras")


def test_the_articles_cnn_is_recorded_with_its_parameter_count(scan: DatasetScan) -> None:
    report = new_report(scan, RunConfig(image_size=150))
    assert report.config.model.params == 529_295


def test_a_speed_only_comparison_is_inspected_after_its_answer(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """"What XLA did" after a speed-only comparison too: one inspection compile per XLA arm
    once the measurement is over, saved with the comparison; none after a stop."""
    from xlagui.core.compare import inspect_after_measurement
    from xlagui.core.measure.runner import RunResult
    from xlagui.core.protocol.spec import RunSpec

    asked: list[RunSpec] = []

    def fake(spec: RunSpec, state: TaskState, relay: object) -> RunResult:
        asked.append(spec)
        return RunResult(spec=spec, status="finished")

    config = RunConfig(batch_size=4, image_size=48, quick=True, arms=("bf16",))
    report = new_report(scan, config)
    out = tmp_path / "out"
    inspect_after_measurement(report, scan, out, TaskState(), worker=fake)
    inspected = [("i-baseline", "inspect", "text"), ("i-xla", "inspect", "text"),
                 ("i-bf16", "inspect", "text")]
    assert [(s.run_id, s.mode, s.xla_dump) for s in asked] == inspected
    saved = json.loads((out / "comparison.json").read_text())
    assert [(r["run_id"], r["status"]) for r in saved["inspect_runs"]] == [
        (run_id, "finished") for run_id, _, _ in inspected]
    # Once inspected, not again; and nothing after a stop.
    inspect_after_measurement(report, scan, out, TaskState(), worker=fake)
    assert len(asked) == 3
    stopped = TaskState()
    stopped.request_interruption()
    other = new_report(scan, config)
    inspect_after_measurement(other, scan, tmp_path / "other", stopped, worker=fake)
    assert len(asked) == 3 and other.inspect_runs == []


def test_a_stop_during_the_peak_probe_ends_it_and_leaves_the_limits_unknown(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The peak probe is a child of the transport like any other: a stop ends it at once (no
    wait for its minute of measuring), and the limits stay unknown without an error."""
    import threading

    from tests.core.measure.test_children import Faked
    from xlagui.core.compare.phases import measure_limits
    from xlagui.core.machine import peak

    monkeypatch.setenv(peak.PROBE_ENV, "on")
    monkeypatch.setattr(peak, "cache_path", lambda: tmp_path / "limits.json")
    probe = Faked(tmp_path, "time.sleep(60)\n")
    report = new_report(scan, RunConfig(batch_size=4, image_size=48))
    state = TaskState()
    threading.Timer(0.3, state.request_interruption).start()
    measure_limits(report, probe, state)  # type: ignore[arg-type]
    assert probe.ended_by_a_signal()  # ended by the stop, not waited out (its 60 s)
    assert [type(j).__name__ for j in probe.jobs] == ["PeakJob"]
    assert report.limits is None and "machine_limits_error" not in report.environment


@pytest.mark.parametrize("busy", [False, True])
def test_the_limits_of_a_busy_machine_are_not_kept_for_the_next_comparison(
    scan: DatasetScan, monkeypatch: pytest.MonkeyPatch, busy: bool
) -> None:
    """The peak probe runs after the preflight: found busy, its figures serve this comparison
    and are not cached as the machine's (a quiet one's are)."""
    from xlagui.core.compare import phases
    from xlagui.core.protocol.interference import Interference, Preflight

    asked: list[bool] = []

    def limits(*args: object, keep: bool, **kwargs: object) -> None:
        asked.append(keep)

    monkeypatch.setattr(phases, "machine_limits", limits)
    report = new_report(scan, RunConfig(batch_size=4, image_size=48))
    report.preflight = Preflight(look=Interference(other_share=0.5 if busy else 0.01,
                                                   disturbed=busy))
    phases.measure_limits(report)
    assert asked == [not busy]


def test_a_stop_while_the_tensorboard_text_is_written_ends_the_writer(tmp_path: Path) -> None:
    import threading

    from tests.core.measure.test_children import Faked
    from xlagui.core.measure.children import write_tensorboard_text

    writer = Faked(tmp_path, "time.sleep(60)\n")
    state = TaskState()
    threading.Timer(0.3, state.request_interruption).start()
    assert not write_tensorboard_text(tmp_path / "out", "# text", transport=writer,  # type: ignore[arg-type]
                                      state=state)
    assert writer.ended_by_a_signal()  # ended by the stop, not waited out (its 60 s)
