"""Comparisons on an SSH host, through a real OpenSSH server on localhost: a `--quick`
comparison with real TensorFlow workers on the host, a stop and a lost connection in the middle
of a measurement (the pairs kept, nothing left running on the host), and a real worker that
ends when its ssh process is killed.

Every test here connects a real SSH transport, whose preflight (once per module) imports
TensorFlow on the host: marked `tf`. The stop and the lost connection drive the fake measuring
worker (tests/helpers/fake_measure_worker.py) on the host, through the same transport as a real
one.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.helpers.cli import assert_ran
from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.sshd import ALIAS, SshServer
from xlagui.cli import main
from xlagui.core.compare import new_report, run_measurement, spec_for
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure import transports
from xlagui.core.measure.jobs import WorkerJob
from xlagui.core.measure.runner import samples_from_scan
from xlagui.core.measure.transports import Target, Transport
from xlagui.core.measure.transports.ssh.dataset import cache_key
from xlagui.core.measure.worker_process import WorkerProcess
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.events import BlockEvent, ErrorEvent, Event, StartedEvent
from xlagui.core.protocol.identity import WorkerMode
from xlagui.core.protocol.record import RunEntry
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.results.report import ComparisonReport
from xlagui.present.errors import error_hint

pytestmark = pytest.mark.tf

FAKE = Path(__file__).resolve().parents[4] / "helpers" / "fake_measure_worker.py"


def fake_command(spec: RunSpec) -> list[str]:
    return [sys.executable, str(FAKE), str(spec.run_dir / "spec.json")]


@pytest.fixture(scope="module")
def target(sshd: SshServer) -> Target:
    return Target(ALIAS, python=str(sshd.python), options=sshd.options)


@pytest.fixture(scope="module")
def info(target: Target) -> HostInfo:
    return transports.check(target)  # the preflight, once: each test then logs in again


@pytest.fixture
def host(target: Target, info: HostInfo) -> Iterator[Transport]:
    transport = transports.connect(target, info=info)
    try:
        yield transport
    finally:
        transport.close()


@pytest.fixture
def scan(tmp_path: Path) -> DatasetScan:
    return scan_dataset(tiny_split_dataset(tmp_path / "data", train=6, test=2))


def gone(pid: int, within: float = 10.0) -> bool:
    """The process has ended (a zombie has ended too) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def host_pids(report: ComparisonReport) -> list[int]:
    """The workers' own pids, as they said them on the host (the host is this machine)."""
    return [e.pid for r in report.measure_runs for e in r.events if isinstance(e, StartedEvent)]


def ssh_of(run_id: str) -> psutil.Process:
    """The local ssh process that runs `run_id`'s worker on the host."""
    for proc in psutil.Process().children(recursive=True):
        cmdline = " ".join(proc.cmdline())
        if proc.name() == "ssh" and f"/runs/{run_id}/tmp" in cmdline:
            return proc
    raise AssertionError(f"no ssh process for {run_id}")


def measure_on(
    host: Transport,
    scan: DatasetScan,
    out: Path,
    state: TaskState,
    on_event: object,
    **fake: object,
) -> ComparisonReport:
    config = RunConfig(
        batch_size=4, image_size=48, quick=True, budget_seconds=60,
        extra={"fake": {"step": 0.01, "ratio": 2.0, "sleep": 1.0, **fake}},
    )
    report = new_report(scan, config, environment=host.environment())
    try:
        host.prepare(scan, config, out, state)
        run_measurement(report, scan, out, state, on_event=on_event,  # type: ignore[arg-type]
                        command_for=fake_command, transport=host)
    finally:
        host.close()  # this comparison's folder on the host goes with the connection
    return report


def test_a_stop_mid_measurement_leaves_nothing_on_the_host(
    host: Transport, scan: DatasetScan, tmp_path: Path
) -> None:
    state = TaskState()

    def stop_in_round_2(entry: RunEntry, event: Event) -> None:
        # XLA gets its round-2 block as the stop comes, and sleeps through the cancel
        # (`hang_at`): only killing its ssh process ends it.
        if entry.variant == "baseline" and isinstance(event, BlockEvent) and event.seq == 2:
            state.request_interruption()

    report = measure_on(host, scan, tmp_path / "out", state, stop_in_round_2, hang_at=2)
    baseline, xla = report.measure_runs
    assert baseline.events[-1].type == "cancelled" and not getattr(
        baseline.events[-1], "forced", True
    )  # the cooperative cancel went over ssh
    assert xla.events[-1].type == "cancelled" and getattr(xla.events[-1], "forced", False)
    c = report.comparison
    assert c is not None and c.interleaved is not None
    assert c.interleaved.pairs == 2 and c.interleaved.stopped_by == "stopped"
    pids = host_pids(report)
    assert len(pids) == 2 and all(gone(pid) for pid in pids)  # no orphan on the host
    assert not Path(str(host.remote_out)).exists()  # type: ignore[attr-defined]  # it went
    assert not [p for p in psutil.Process().children(recursive=True) if p.name() == "ssh"
                and "ControlMaster=no" in p.cmdline()]
    # Each run's folder came home: the worker's log (its stderr on the host) is here.
    assert (tmp_path / "out" / "runs" / "m2-xla" / "commands.log").exists()
    assert json.loads((tmp_path / "out" / "comparison.json").read_text())[
        "environment"]["host"] == ALIAS


def test_a_lost_connection_keeps_its_pairs_and_says_so(
    host: Transport, scan: DatasetScan, tmp_path: Path
) -> None:
    state = TaskState()
    killed: list[int] = []

    def cut_in_round_2(entry: RunEntry, event: Event) -> None:
        if entry.variant == "baseline" and isinstance(event, BlockEvent) and event.seq == 2:
            proc = ssh_of("m2-xla")
            killed.append(proc.pid)
            proc.send_signal(signal.SIGKILL)  # as a dropped network ends it

    report = measure_on(host, scan, tmp_path / "out", state, cut_in_round_2)
    assert killed
    m = report.measurement
    assert m is not None and m.stopped_by == "error"
    assert m.error.startswith("the connection to xlagui-test was lost (measuring worker of xla")
    xla = report.measure_runs[1]
    error = xla.events[-1]
    assert isinstance(error, ErrorEvent) and error.error_type == "ConnectionLost"
    assert "What was measured before is kept" in error_hint(error)
    c = report.comparison
    assert c is not None and c.interleaved is not None and c.interleaved.pairs == 2
    assert all(gone(pid) for pid in host_pids(report))  # its stdin closed: it exited


def test_killing_ssh_ends_a_real_worker_on_the_host(
    host: Transport, scan: DatasetScan, tmp_path: Path
) -> None:
    config = RunConfig(batch_size=4, image_size=48, quick=True)
    report = new_report(scan, config, environment=host.environment())
    out = tmp_path / "out"
    host.prepare(scan, config, out, TaskState())
    spec = spec_for(report.measure_runs[1], report, samples_from_scan(scan), out,
                    mode=WorkerMode.MEASURE)
    try:
        with WorkerProcess(spec, transport=host) as worker:
            worker.start()
            started = worker.wait_for("started", TaskState())
            assert isinstance(started, StartedEvent) and started.xla_in_effect
            assert worker.pid is not None
            psutil.Process(worker.pid).send_signal(signal.SIGKILL)
            deadline = time.monotonic() + 60
            while not worker.ended:
                assert time.monotonic() < deadline, "the killed connection not seen in 60 s"
                worker.poll()
        assert isinstance(worker.terminal, ErrorEvent)
        assert worker.terminal.error_type == "ConnectionLost"
        assert gone(started.pid)  # TensorFlow's worker saw its stdin end and exited
    finally:
        host.close()
    log = (out / "runs" / "m2-xla" / "worker.log").read_text()
    assert "TensorFlow" in log or "tensorflow" in log  # the host's log came home


def test_a_quick_comparison_on_the_host(
    sshd: SshServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d")
    out = tmp_path / "o"
    code = main(["compare", str(data), "--quick", "--budget", "10", "--batch", "8",
                 "--image-size", "48", "--no-explain", "--out", str(out), "--host", ALIAS,
                 "--ssh-config", str(sshd.config), "--remote-python", str(sshd.python)])
    text = capsys.readouterr().out.replace("\n", " ")
    assert_ran(code, out, text)  # 1: a 10 s measurement may not be valid; it still ran
    assert f"Measuring on {ALIAS} over SSH" in text
    assert "Copied the dataset to xlagui-test: 40 files" in text
    saved = json.loads((out / "comparison.json").read_text())
    env = saved["environment"]
    assert env["host"] == ALIAS and env["remote_python"] == str(sshd.python)
    # The peak probe runs on the host through its transport now (off in tests: no limits,
    # and no error); it is never this computer's limits that a host's comparison gets.
    assert "machine_limits_error" not in env and saved["machine_limits"] is None
    assert saved["comparison"]["interleaved"]["pairs"] >= 1
    assert [r["status"] for r in saved["measure_runs"]] == ["finished", "finished"]
    for run in ("m1-baseline", "m2-xla"):  # the worker's stderr on the host came home (what
        # TensorFlow says at import differs by CPU: "oneDNN" only where it is on by default)
        assert (out / "runs" / run / "worker.log").read_text().strip()
    started = [e for r in saved["measure_runs"] for e in r["events"] if e["type"] == "started"]
    assert all(gone(e["pid"]) for e in started)
    assert list((sshd.host_cache / "remote" / "runs").iterdir()) == []

    # The dataset stays in the host's cache for the next comparison (test_dataset.py: a
    # second run copies nothing).
    assert (sshd.host_cache / "remote" / "datasets" / cache_key(scan_dataset(data))).is_dir()


def test_the_transport_runs_workers_with_the_hosts_paths(
    host: Transport, scan: DatasetScan, tmp_path: Path
) -> None:
    """The spec a host's worker gets names the host's folders, never this computer's."""
    config = RunConfig(batch_size=4, image_size=48)
    report = new_report(scan, config, environment=host.environment())
    out = tmp_path / "out"
    dataset = host.prepare(scan, config, out, TaskState())
    spec = spec_for(report.runs[1], report, samples_from_scan(scan), out)
    job = WorkerJob.of(spec)
    ssh: Any = host  # the SSH transport's own workings
    line = ssh.command(job, [sys.executable, "-m", "xlagui.core.worker.child",
                             str(spec.run_dir / "spec.json")])
    remote = ssh.remote_spec(spec)
    base = str(ssh.remote_out)
    assert str(remote.run_dir) == f"{base}/runs/{spec.run_id}"
    assert remote.tensorboard_dir == f"{base}/tensorboard/{spec.run_id}"
    assert all(s.path.startswith(str(dataset.root)) for s in remote.train + remote.val)
    assert f"-m xlagui.core.worker.child - 2>>{base}/runs/{spec.run_id}/worker.log" in line
    assert "-u XLA_FLAGS" in line  # a timed run dumps nothing, whatever the host's shell has
    assert "TF_CPP_VMODULE=device_compilation_profiler=1" in line
    assert f"TMPDIR={base}/runs/{spec.run_id}/tmp" in line
    assert str(tmp_path) not in line  # nothing of this computer's folders


def test_a_line_the_host_runs_after_the_close_leaves_nothing(
    host: Transport, scan: DatasetScan, tmp_path: Path
) -> None:
    """A worker's line that the host starts late, after the stop removed this connection's
    folder (a loaded host), makes no folder again: the clean-up holds."""
    config = RunConfig(batch_size=4, image_size=48)
    report = new_report(scan, config, environment=host.environment())
    out = tmp_path / "out"
    host.prepare(scan, config, out, TaskState())
    spec = spec_for(report.runs[1], report, samples_from_scan(scan), out)
    ssh: Any = host
    line = ssh.command(WorkerJob.of(spec), [sys.executable, "-c", "pass"])
    folder = Path(str(ssh.remote_out))
    assert folder.is_dir()  # made once, before the first child
    ssh.ssh.run(f"rm -rf {folder}", timeout=60)  # what `close` does first
    assert ssh.ssh.run(line, timeout=60).returncode != 0
    assert not folder.exists()


def test_the_short_children_run_on_the_host(
    host: Transport, scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model check, the device probe, the peak probe and the TensorBoard text run through
    the host's transport, on the host: a model file is copied there, the limits are the
    host's (cached under its name), the text comes home."""
    from xlagui.core.measure import children
    from xlagui.core.measure.model_check import check_models
    from xlagui.core.model.check import ModelCheckSpec
    from xlagui.core.model.sources import parse_model
    from xlagui.core.worker import tensorboard as tboard

    model = tmp_path / "net.py"
    model.write_text(
        "import keras\n\n\ndef build_model(input_shape, num_classes):\n"
        "    inputs = keras.Input(shape=input_shape)\n"
        "    x = keras.layers.GlobalAveragePooling2D()(inputs)\n"
        "    return keras.Model(inputs, keras.layers.Dense(1, activation='sigmoid')(x))\n"
    )
    choice = parse_model(str(model))
    import keras  # a legacy HDF5 model file too, copied and loaded there the same way

    inputs = keras.Input(shape=(None, None, 3))
    x = keras.layers.GlobalAveragePooling2D()(inputs)
    h5 = tmp_path / "legacy.h5"
    keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x)).save(h5)
    legacy = parse_model(str(h5))
    check, check_h5 = check_models(
        [ModelCheckSpec(model=m, image_size=48, batch_size=4) for m in (choice, legacy)],
        transport=host)
    assert check.model.file == str(model) and check.model.params == 4  # the user's file
    assert (check_h5.model.source, check_h5.model.params) == ("h5", 4)
    info = host.info
    assert info is not None
    assert (Path(info.cache) / "models" / str(choice.sha256) / "net.py").is_file()
    assert (Path(info.cache) / "models" / str(legacy.sha256) / "legacy.h5").is_file()

    assert children.devices(host)[0].id == "cpu"
    monkeypatch.delenv("XLAGUI_PEAK_PROBE", raising=False)
    limits = children.machine_limits("cpu", 48, 2, transport=host, quick=True,
                                     path=tmp_path / "limits.json")
    assert limits is not None and limits.machine == info.machine_id
    assert limits.key.startswith(f"{info.machine_id} | cpu | TensorFlow {info.tensorflow}")

    out = tmp_path / "out"
    host.prepare(scan, RunConfig(batch_size=4, image_size=48), out, TaskState())
    assert children.write_tensorboard_text(out, "# The comparison", transport=host)
    written = tboard.logdir(out) / tboard.TEXT_RUN
    assert list(written.glob("events.out.tfevents.*"))  # it came home
    remote: Any = host
    assert not list(Path(str(remote.remote_out)).glob("children/*"))  # nothing left there
