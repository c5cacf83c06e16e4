"""The one comparison workflow (`xlagui.core.compare.run`), watched as the CLI and the window
watch it: what the watcher is told and in which order, how a stop in each phase is recorded,
the model check and the machine's set-up, a host that refuses. The workers are fakes that speak
the protocol (tests/helpers/fake_measure_worker.py, tests/helpers/streams.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import elsewhere
from tests.helpers.images import make_split_dataset
from tests.helpers.models import FakeModelChecker
from tests.helpers.sshd import ALIAS, WRONG_KEY_ALIAS, SshServer
from tests.helpers.streams import FakeWorker, run_events
from xlagui.core import compare
from xlagui.core.compare import CLOSING, ComparisonRequest, Phase, Watcher, machine, plan
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.transports import MachineError, PlacedDataset, Target
from xlagui.core.protocol.config import ConfigError, ModelChoice, RunConfig
from xlagui.core.protocol.events import PROTOCOL_VERSION, BlockEvent, Event, ModelEvent
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.core.results.report import ComparisonReport
from xlagui.present.hosts import error_text

FAKE_MEASURE = Path(__file__).resolve().parents[2] / "helpers" / "fake_measure_worker.py"


def fake_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json")]


@pytest.fixture
def scan(tmp_path: Path) -> DatasetScan:
    make_split_dataset(tmp_path / "data", {"african": 6, "asian": 6}, {"african": 2, "asian": 2})
    return scan_dataset(tmp_path / "data")


def trainer() -> FakeWorker:
    return FakeWorker({
        "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
        "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
    })


def request_for(scan: DatasetScan, out: Path, **changes: Any) -> ComparisonRequest:
    config = RunConfig(epochs=3, batch_size=4, image_size=48,
                       **changes.pop("config", {}))
    changes.setdefault("worker", trainer())
    return ComparisonRequest(scan=scan, config=config, out_dir=out,
                             worker_command=fake_command, **changes)


class Recorder(Watcher):
    """Every callback, in order, as (name, what it was about)."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []

    def on_phase(self, phase: Phase, report: ComparisonReport | None) -> None:
        self.said.append(("phase", phase.value))

    def on_model_checked(self, check: ModelEvent) -> None:
        self.said.append(("model checked", check.model.label))

    def on_host_ready(self, info: HostInfo) -> None:
        self.said.append(("host", info.host))

    def on_dataset_ready(self, dataset: PlacedDataset) -> None:
        self.said.append(("dataset", "on the host"))

    def on_report_ready(self, report: ComparisonReport) -> None:
        self.said.append(("planned", ""))

    def on_run_started(self, entry: RunEntry) -> None:
        self.said.append(("started", entry.run_id))

    def on_run_done(self, entry: RunEntry) -> None:
        self.said.append(("done", f"{entry.run_id} {entry.status}"))

    def on_measured(self, report: ComparisonReport) -> None:
        self.said.append(("measured", ""))

    def on_host_refused(self, host: str, error: MachineError) -> None:
        self.said.append(("refused", host))

    def names(self) -> list[str]:
        return [name for name, _ in self.said]


def test_the_watcher_is_told_every_phase_in_order(scan: DatasetScan, tmp_path: Path) -> None:
    request = request_for(scan, tmp_path / "out")
    watcher = Recorder()
    report = compare.run(request, watcher, TaskState())
    assert watcher.said == [
        ("planned", ""),
        ("phase", "measuring"),
        ("started", "m1-baseline"),
        ("started", "m2-xla"),
        ("done", "m1-baseline finished"),
        ("done", "m2-xla finished"),
        ("measured", ""),
        # No inspection compile: a replayed training run has no XLA to inspect.
        ("phase", "training"),
        ("started", "01-baseline-r1"),
        ("done", "01-baseline-r1 finished"),
        ("started", "02-xla-r1"),
        ("done", "02-xla-r1 finished"),
    ]
    saved = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in saved["runs"]] == ["finished", "finished"]
    assert report.comparison is not None and report.comparison.interleaved is not None


def test_the_inspection_compile_comes_after_a_speed_only_answer(
    scan: DatasetScan, tmp_path: Path
) -> None:
    """With the real runner (no replayed `worker`), the untimed compile with XLA's dump, in a
    worker started with the request's command (the fake here)."""
    request = request_for(scan, tmp_path / "out", worker=None, config={"quick": True})
    watcher = Recorder()
    report = compare.run(request, watcher, TaskState())
    phases = [what for name, what in watcher.said if name == "phase"]
    assert phases == ["measuring", "inspecting"]
    assert [(r.run_id, r.status) for r in report.inspect_runs] == [
        ("i-baseline", "finished"), ("i-xla", "finished")]  # the why looks at both sides
    assert report.runs == []


@pytest.mark.parametrize(("reason", "cut", "skipped"),
                         [("", "cancelled", "cancelled"), (CLOSING, "interrupted", "not run")])
def test_a_stop_in_the_measurement_records_every_run(
    scan: DatasetScan, tmp_path: Path, reason: str, cut: str, skipped: str
) -> None:
    """A stop mid-measurement (Stop, or the app closing): the measuring workers keep their
    pairs, the inspection compile and the training runs never start, and every training run
    is recorded and saved as the stop says, not left queued."""
    state = TaskState()

    class StopInRound2(Recorder):
        def on_event(self, entry: RunEntry, event: Event) -> None:
            if entry.variant == "xla" and isinstance(event, BlockEvent) and event.seq == 1:
                state.request_interruption(reason)

    watcher = StopInRound2()
    trained = trainer()
    request = request_for(scan, tmp_path / "out", worker=trained, config={"repeats": 2})
    report = compare.run(request, watcher, state)
    assert [r.status for r in report.measure_runs] == [cut, cut]
    assert [r.status for r in report.runs] == [skipped] * 4 and trained.specs == []
    assert ("phase", "training") not in watcher.said and report.inspect_runs == []
    saved = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert [r["status"] for r in saved["runs"]] == [skipped] * 4
    assert saved["comparison"]["interleaved"]["pairs"] >= 2


def test_the_plan_a_watcher_shows_is_the_report_filled(scan: DatasetScan, tmp_path: Path) -> None:
    request = request_for(scan, tmp_path / "out")
    planned = plan(request)
    assert [r.status for r in planned.runs] == ["queued", "queued"]
    assert compare.run(request, Watcher(), TaskState(), report=planned) is planned
    assert [r.status for r in planned.runs] == ["finished", "finished"]


def test_a_model_is_checked_first_unless_the_watcher_checked_it(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker = FakeModelChecker()
    monkeypatch.setattr(machine, "check_models", checker)
    model = ModelChoice(name="mobilenetv2")
    request = request_for(scan, tmp_path / "out", config={"model": model, "quick": True})
    watcher = Recorder()
    report = compare.run(request, watcher, TaskState())
    assert watcher.said[:3] == [("phase", "checking model"),
                                ("model checked", report.config.model.label), ("planned", "")]
    assert [s.num_classes for s in checker.asked] == [2]
    assert report.model_check is not None and report.config.model.params == 1_000 * 2 + 48

    checked = report.model_check
    again = Recorder()
    compare.run(request_for(scan, tmp_path / "again", config={"model": model, "quick": True},
                            model_check=checked), again, TaskState())
    assert ("phase", "checking model") not in again.said
    assert len(checker.asked) == 1  # the window's model panel checked it: not again


def test_a_refused_model_or_folder_ends_it_before_anything_is_made(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(machine, "check_models", FakeModelChecker(refuse={"bad.py": "line 2"}))
    bad = tmp_path / "bad.py"
    bad.write_text("def build_model(input_shape, num_classes): ...\n")
    out = tmp_path / "out"
    request = request_for(scan, out, config={"model": ModelChoice(source="python",
                                                                   file=str(bad))})
    with pytest.raises(ConfigError, match="line 2"):
        compare.run(request, Watcher(), TaskState())
    assert not out.exists()

    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError, match="cannot write to the output folder"):
        compare.run(request_for(scan, tmp_path / "a-file" / "out"), Watcher(), TaskState())


def host_info(sshd: SshServer, host: str) -> HostInfo:
    """The test host's preflight answer, without its TensorFlow (tests/ui/test_stop.py)."""
    return HostInfo(host=host, hostname="localhost", xlagui="test", protocol=PROTOCOL_VERSION,
                    python="3", platform=sys.platform, cpu="Test CPU", cpu_count=2,
                    cache=str(sshd.host_cache / "remote"), free_disk_bytes=10**12,
                    tensorflow="2.99", python_command=str(sshd.python),
                    devices=(DeviceInfo(id="cpu", name="CPU", kind="CPU"),))


def on_host(sshd: SshServer, host: str = ALIAS) -> dict[str, Any]:
    target = Target(host, python=str(sshd.python), options=sshd.options)
    return {"target": target, "host_info": host_info(sshd, host)}


def test_on_a_host_the_machine_is_set_up_and_taken_down(
    scan: DatasetScan, tmp_path: Path, sshd: SshServer
) -> None:
    watcher = Recorder()
    request = request_for(scan, tmp_path / "out", config={"quick": True}, **on_host(sshd))
    report = compare.run(request, watcher, TaskState())
    assert watcher.names()[:5] == ["phase", "host", "planned", "phase", "dataset"]
    assert [what for name, what in watcher.said if name == "phase"] == [
        "connecting", "copying", "measuring"]
    assert [r.status for r in report.measure_runs] == ["finished", "finished"]
    assert report.environment["host"] == ALIAS
    assert list((sshd.host_cache / "remote" / "runs").iterdir()) == []


def test_a_host_that_refuses_is_said_and_nothing_runs(
    scan: DatasetScan, tmp_path: Path, sshd: SshServer
) -> None:
    watcher = Recorder()
    request = request_for(scan, tmp_path / "out", **on_host(sshd, WRONG_KEY_ALIAS))
    planned = plan(request)
    with pytest.raises(MachineError) as refused:
        compare.run(request, watcher, TaskState(), report=planned)
    assert "refused the login" in error_text(refused.value)
    assert watcher.said == [("phase", "connecting"), ("refused", WRONG_KEY_ALIAS)]
    assert [r.status for r in [*planned.measure_runs, *planned.runs]] == ["cancelled"] * 4


def test_a_stop_while_the_dataset_is_copied_runs_nothing(
    scan: DatasetScan, tmp_path: Path, sshd: SshServer
) -> None:
    state = TaskState()

    class CloseWhileCopying(Recorder):
        def on_copy_progress(self, done: int, total: int) -> None:
            state.request_interruption(CLOSING)

    planned_request = request_for(scan, tmp_path / "out", **on_host(sshd))
    planned = plan(planned_request)
    with pytest.raises(Cancelled):
        compare.run(planned_request, CloseWhileCopying(), state, report=planned)
    assert [r.status for r in [*planned.measure_runs, *planned.runs]] == ["not run"] * 4
    assert not (tmp_path / "out" / "comparison.json").exists()  # nothing measured, none saved


def test_a_comparison_runs_on_a_made_up_transport(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transport a newcomer registers (tests/helpers/elsewhere.py, one line in TRANSPORTS)
    takes a whole comparison, typed as its host is: connected, readied, every child started
    through it and brought home, let go at the end; nothing above `core/measure/` knows it."""
    elsewhere.register(monkeypatch)
    watcher = Recorder()
    request = request_for(scan, tmp_path / "out", config={"quick": True},
                          target=Target(elsewhere.HOST))
    report = compare.run(request, watcher, TaskState())
    assert [what for name, what in watcher.said if name == "phase"] == [
        "connecting", "copying", "measuring"]
    assert ("host", elsewhere.HOST) in watcher.said
    assert [r.status for r in report.measure_runs] == ["finished", "finished"]
    assert report.environment["host"] == elsewhere.HOST
    log = elsewhere.ElsewhereTransport.log
    assert log[:2] == ["connect", "prepare"] and log[-1] == "close"
    started = [line for line in log if line.startswith("start ")]
    assert len(started) == 2 and all("measuring worker of" in line for line in started)
    assert log.count("finish") == 2
