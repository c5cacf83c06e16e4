"""The short children (the device probe, the peak probe, the TensorBoard text, the model check)
through the one supervisor and the one decoder: driven by small fake children (no TensorFlow),
then, marked `tf`, the real ones at tiny sizes."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO

import pytest

from xlagui.core.measure import children
from xlagui.core.measure.children import child_folder, run_child
from xlagui.core.measure.jobs import ChildJob, DevicesJob
from xlagui.core.measure.model_check import check_models
from xlagui.core.measure.transports.local import LocalTransport
from xlagui.core.model.check import ModelCheckSpec, ModelRefused
from xlagui.core.protocol.config import ModelChoice
from xlagui.core.protocol.events import (
    PROTOCOL_VERSION,
    DevicesEvent,
    ErrorEvent,
    LimitsEvent,
    ModelEvent,
    TextWrittenEvent,
)
from xlagui.core.protocol.probes import DeviceInfo, LayerCeiling
from xlagui.core.protocol.task import Cancelled, TaskState


class Faked(LocalTransport):
    """This computer, every child replaced by `script` (a Python body: `emit(event)` writes
    one line, `said` is what came on stdin once it ended)."""

    def __init__(self, tmp_path: Path, body: str) -> None:
        self.script = tmp_path / "fake_child.py"
        self.script.write_text(
            "import json, os, sys, time\n"
            "def emit(line):\n    sys.stdout.write(line + '\\n'); sys.stdout.flush()\n"
            + textwrap.dedent(body), encoding="utf-8")
        self.jobs: list[ChildJob] = []
        self.processes: list[subprocess.Popen[str]] = []

    def start(self, job: ChildJob, log: IO[bytes]) -> object:  # type: ignore[override]
        self.jobs.append(job)
        process = super().start(dataclasses.replace(job, command=(sys.executable,
                                                                  str(self.script))), log)
        self.processes.append(process)
        return process

    def ended_by_a_signal(self) -> bool:
        """Every child started has ended, each by a signal (terminated or killed): stopped,
        not waited for until its script ended by itself."""
        return bool(self.processes) and all(
            p.poll() is not None and p.returncode < 0 for p in self.processes)


def devices_line() -> str:
    return DevicesEvent(t=0.1, protocol=PROTOCOL_VERSION,
                        devices=[DeviceInfo("cpu", "x86_64", "CPU"),
                                 DeviceInfo("gpu:0", "NVIDIA H200", "GPU")]).to_json()


def test_the_device_probe_answers_in_an_event(tmp_path: Path) -> None:
    fake = Faked(tmp_path, f"emit({devices_line()!r})\n")
    found = children.devices(fake)  # type: ignore[arg-type]
    assert [d.id for d in found] == ["cpu", "gpu:0"]
    assert [d.choice() for d in found][1] == {"id": "gpu:0", "name": "NVIDIA H200", "kind": "GPU"}
    (job,) = fake.jobs
    assert isinstance(job, DevicesJob)
    assert not job.folder.exists()  # its folder goes once it has answered


def test_a_short_child_that_prints_noise_is_refused_like_a_worker(tmp_path: Path) -> None:
    fake = Faked(tmp_path, f"emit('noise on stdout')\nemit({devices_line()!r})\ntime.sleep(60)\n")
    with child_folder("xlagui-test-") as folder:
        ran = run_child(DevicesJob(folder), fake)  # type: ignore[arg-type]
    assert isinstance(ran.terminal, ErrorEvent) and ran.terminal.kind == "not_an_event"
    assert ran.terminal.details == "noise on stdout"
    assert ran.answer(DevicesEvent) is None  # nothing after the bad line is believed
    assert ran.returncode == -signal.SIGTERM  # refused and terminated, not waited for
    # The window then lists the CPU alone.
    assert children.devices(fake) == children.CPU_ONLY  # type: ignore[arg-type]


def test_a_child_of_another_protocol_is_refused(tmp_path: Path) -> None:
    stale = json.loads(devices_line())
    stale["protocol"] = PROTOCOL_VERSION - 1
    fake = Faked(tmp_path, f"emit({json.dumps(stale)!r})\n")
    with child_folder("xlagui-test-") as folder:
        ran = run_child(DevicesJob(folder), fake)  # type: ignore[arg-type]
    assert isinstance(ran.terminal, ErrorEvent) and ran.terminal.kind == "protocol_mismatch"


SPEC = ModelCheckSpec(model=ModelChoice(name="mixer"), image_size=48, num_classes=2)


def test_the_model_check_refuses_a_line_that_is_not_an_event(tmp_path: Path) -> None:
    """It used to skip such lines: a check whose answer was lost among them then said it
    ended without an answer, or kept the wrong one."""
    model = ModelEvent(t=1.0, protocol=PROTOCOL_VERSION, model=SPEC.model, image_size=48)
    fake = Faked(tmp_path, f"sys.stdin.read()\nemit('{{broken')\nemit({model.to_json()!r})\n")
    with pytest.raises(ModelRefused, match="the worker sent a line that is not an event"):
        check_models([SPEC], transport=fake)  # type: ignore[arg-type]


def test_the_model_check_gets_its_specs_on_stdin(tmp_path: Path) -> None:
    said = tmp_path / "said.txt"
    model = ModelEvent(t=1.0, protocol=PROTOCOL_VERSION, model=SPEC.model, image_size=48,
                       layers=7)
    body = (f"open({str(said)!r}, 'w').write(sys.stdin.read() + ' '.join(sys.argv[1:]))\n"
            f"emit({model.to_json()!r})\n")
    fake = Faked(tmp_path, body)
    (answer,) = check_models([SPEC], transport=fake)  # type: ignore[arg-type]
    assert answer.layers == 7
    (job,) = fake.jobs
    assert job.request(children.HERE).words == ["--check-model", "-"]
    lines = said.read_text().splitlines()
    assert ModelCheckSpec.from_json(lines[0]) == SPEC


def test_a_model_check_that_dies_says_how_in_its_own_words(tmp_path: Path) -> None:
    fake = Faked(tmp_path, "sys.stderr.write('Segmentation fault\\n'); os._exit(139)\n")
    with pytest.raises(ModelRefused) as refused:
        check_models([SPEC], transport=fake)  # type: ignore[arg-type]
    assert str(refused.value) == ("the model check of mixer ended without an answer (exit "
                                  "status 139): Segmentation fault")


def test_a_stop_ends_a_short_child_at_once(tmp_path: Path) -> None:
    fake = Faked(tmp_path, "time.sleep(60)\n")
    state = TaskState()
    state.request_interruption()
    with pytest.raises(Cancelled):
        check_models([SPEC], state=state, transport=fake)  # type: ignore[arg-type]


def test_the_peak_probe_answers_with_what_it_measured(tmp_path: Path) -> None:
    ceiling = LayerCeiling(["conv2d_1", "conv2d"], 48, 2, 1e9, 0.05, 2e10)
    limits = LimitsEvent(t=2.0, protocol=PROTOCOL_VERSION, device="cpu", matmul_size=256,
                         matmul_flops_per_second=1e11, ceiling=ceiling)
    fake = Faked(tmp_path, f"emit({limits.to_json()!r})\n")
    got = children.peak_probe("cpu", 48, 2, peak=False, transport=fake)  # type: ignore[arg-type]
    assert got == limits
    (job,) = fake.jobs
    assert job.request(children.HERE).words == [
        "--peak", "--device", "cpu", "--image-size", "48", "--batch", "2", "--ceiling-only"]
    failing = Faked(tmp_path, "sys.stderr.write('no memory here\\n'); sys.exit(1)\n")
    with pytest.raises(RuntimeError, match=r"the peak probe failed \(exit 1\): no memory here"):
        children.peak_probe("cpu", 48, 2, transport=failing)  # type: ignore[arg-type]


def test_the_tensorboard_text_goes_to_the_child_on_stdin(tmp_path: Path) -> None:
    said = tmp_path / "said.txt"
    body = (f"open({str(said)!r}, 'w').write(sys.stdin.read() + '|' + sys.argv[-1])\n"
            f"emit({TextWrittenEvent(t=1.0, protocol=PROTOCOL_VERSION).to_json()!r})\n")
    fake = Faked(tmp_path, body)
    out = tmp_path / "out"
    assert children.write_tensorboard_text(out, "# Summary", transport=fake)  # type: ignore[arg-type]
    text, _ = said.read_text().split("|")
    assert text == "# Summary"
    silent = Faked(tmp_path, "sys.exit(0)\n")
    assert not children.write_tensorboard_text(out, "x", transport=silent)  # type: ignore[arg-type]


@pytest.mark.tf
def test_the_real_children_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The device probe and the peak probe, real, on this computer at tiny sizes."""
    monkeypatch.delenv("XLAGUI_PEAK_PROBE", raising=False)
    found = children.devices()
    assert found[0].id == "cpu" and found[0].kind == "CPU"
    from xlagui.core.machine import peak

    limits = children.machine_limits("cpu", 48, 2, path=tmp_path / "limits.json", quick=True)
    assert limits is not None
    assert limits.matmul_size == 256
    # Any CPU TensorFlow runs on does between 0.1 GFLOP/s and 100 TFLOP/s, and moves between
    # 10 MB/s and 10 TB/s; a timing or unit bug lands outside.
    assert 1e8 < limits.matmul_flops_per_second < 1e14
    assert 1e7 < limits.bandwidth_bytes_per_second < 1e13
    ceiling = limits.ceiling(48, 2)
    assert ceiling is not None and ceiling.layers == ["conv2d_1", "conv2d"]
    assert 1e7 < ceiling.flops_per_second < 1e14
    assert limits.tf_version == peak.tf_version() != "unknown"
    assert limits.machine == peak.machine_id()
    assert peak.load(limits.key, tmp_path / "limits.json") == limits
    # A peak per compute dtype, float32's being the one the older field keeps.
    assert set(limits.matmul_peaks) == {"float32", "bfloat16", "float16"}
    assert limits.peak("float32") == limits.matmul_flops_per_second
    assert all(1e8 < rate < 1e15 for rate in limits.matmul_peaks.values())
    assert os.environ.get("XLAGUI_PEAK_PROBE") is None


def _checking_children() -> list[str]:
    """The command lines of this process's model check children still running."""
    import psutil

    running = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "--check-model" in child.cmdline():
                running.append(" ".join(child.cmdline()))
        except psutil.NoSuchProcess:
            continue  # ended between the listing and the look
    return running


@pytest.mark.tf
def test_the_real_model_check_streams_the_built_model_before_its_flops() -> None:
    """The window's two specs (the model built without a training step, then with its FLOPs
    counted), through the real child: the built model's parameters and layers arrive while the
    child still counts the FLOPs, then the answer with them."""
    from xlagui.core.model.flops import article_cnn_count

    spec = ModelCheckSpec(model=ModelChoice(name="cnn"), image_size=48, batch_size=2)
    arrived: list[tuple[int, ModelEvent, list[str]]] = []

    def on_partial(answer: object) -> None:
        assert isinstance(answer, tuple), answer
        index, event = answer
        arrived.append((index, event, _checking_children()))

    specs = [dataclasses.replace(spec, count_flops=False), spec]
    answers = check_models(specs, timeout=120, state=TaskState(on_partial=on_partial))
    assert [index for index, _, _ in arrived] == [0, 1], "each answer reported once, in order"
    (_, built, running), (_, counted, _) = arrived
    assert answers == [built, counted]
    assert built.flops_per_step is None and built.memory_bytes is None
    assert built.layers > 0 and built.summary
    assert counted.flops_per_step is not None and counted.flops_per_step > 0
    # Both from the same build, and the article CNN's count at 48 px from its shapes.
    assert built.model.params == counted.model.params == article_cnn_count(48, 2).params
    # Streamed, not collected at the end: the child was still at work on the FLOPs when the
    # built model's answer reached the caller.
    assert running, "the built model's answer arrived only after the check's child had ended"
