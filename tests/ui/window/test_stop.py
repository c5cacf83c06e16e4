"""Stop, clicked as a user clicks it, in every phase of a comparison (its workers starting,
warming up, measuring; the inspection compile; a training run), on this computer and on an SSH
host (a real OpenSSH server on localhost, tests/helpers/sshd.py): the comparison ends, the window
is ready for the next one, and every run says how it ended.

The workers are fakes that speak the protocol (tests/helpers/fake_measure_worker.py, the replayed
training runs of tests/helpers/streams.py), made slow where a real one is: 10 s of set-up that
reads no command (TensorFlow importing), a 10 s warm-up or inspection compile that never looks
at a cancel (an XLA compile), a block that ignores the cancel. A stop ends each phase long before
those 10 s; how long it takes is measured in bench/bench_stop.py, not here.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.helpers.clicks import ModalAnswerer, choose_combo_item, click, watching
from tests.helpers.sshd import ALIAS, SshServer
from tests.ui.conftest import FAKE_MEASURE, WindowFactory, load_small
from tests.ui.window.test_clicks import HeldWorker
from xlagui import __version__
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.transports import Target
from xlagui.core.protocol.events import PROTOCOL_VERSION
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState
from xlagui.core.results.report import ComparisonReport
from xlagui.ui.window.main_window import MainWindow

# The crash handler, not pytest-qt, must see what a slot raises: that is what a user meets.
pytestmark = pytest.mark.qt_no_exception_capture

# Seconds a fake worker spends where a real one cannot be asked to stop. A comparison that
# waited it out instead of stopping it would take all of it: half of it is room enough for a
# stop on a loaded machine, and still tells the two apart (no wall-clock figure is asserted).
SLOW = 120.0
ENDED_WITHIN_MS = int(SLOW * 1000) // 2

# Each phase: how its fake workers behave, whether it is a speed-only comparison, and what
# says the workers are in that phase (a run folder's files, read as the window has them).
PHASES: dict[str, dict[str, Any]] = {
    "starting": {"fake": {"setup": SLOW}},
    "warm-up": {"fake": {"warmup_sleep": SLOW}},
    "measuring": {"fake": {"hang_at": 2, "sleep": 1.0, "step": 0.002}},
    "inspection": {"fake": {"inspect_sleep": SLOW}, "quick": True},
    "training": {"fake": {}},
}


def measure_command(options: dict[str, Any]) -> Callable[[RunSpec], list[str]]:
    """The fake measuring (and inspecting) worker, behaving as `options` say."""

    def command(spec: RunSpec) -> list[str]:
        return [sys.executable, str(FAKE_MEASURE), str(spec.run_dir / "spec.json"),
                json.dumps(options)]

    return command


def said(folder: Path, run_id: str, kind: str, **fields: object) -> bool:
    """The run's worker said an event of `kind` (with these `fields`), as its events.jsonl
    keeps what the window was told."""
    path = folder / "runs" / run_id / "events.jsonl"
    if not path.exists():
        return False
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event["type"] == kind and all(event.get(k) == v for k, v in fields.items()):
            return True
    return False


def in_phase(phase: str, folder: Path, held: HeldWorker) -> Callable[[], bool]:
    """Whether the comparison in `folder` is in `phase` (its slow part under way)."""
    runs = folder / "runs"
    measuring = ("m1-baseline", "m2-xla")
    if phase == "starting":  # every measuring worker's process started, none said a word
        return lambda: all((runs / r / "worker.log").exists() for r in measuring)
    if phase == "warm-up":  # every worker started; the first warm-up (a 10 s compile) follows
        return lambda: all(said(folder, r, "started") for r in measuring)
    if phase == "measuring":  # two rounds done; in the third, the XLA worker ignores a cancel
        return lambda: said(folder, "m2-xla", "block", seq=1)
    if phase == "inspection":  # the measurement over, the inspection compile's worker started
        return lambda: said(folder, "i-xla", "started")
    return held.started.is_set


def host_checker(sshd: SshServer) -> Callable[[Target, TaskState], HostInfo]:
    """What the test host's preflight says, without its minutes of TensorFlow: the host is
    this machine, its Python this checkout's, its cache the server's own."""

    def check(target: Target, state: TaskState) -> HostInfo:
        return HostInfo(
            host=target.host, hostname="localhost", xlagui=__version__,
            protocol=PROTOCOL_VERSION, python=sys.version.split()[0], platform=sys.platform,
            cpu="Test CPU", cpu_count=2, cache=str(sshd.host_cache / "remote"),
            free_disk_bytes=10**12, tensorflow="2.99", python_command=target.python,
            devices=(DeviceInfo(id="cpu", name="CPU", kind="CPU"),),
        )

    return check


def measure_on_the_host(qtbot: QtBot, window: MainWindow, sshd: SshServer) -> None:
    """Pick the test host and name its Python, with clicks and keys, as a user does."""
    machine = window.settings_panel.machine_panel
    picker = machine.picker
    choose_combo_item(qtbot, picker, next(
        i for i in range(picker.count()) if ALIAS in picker.itemText(i)))
    edit = machine.python_edit
    click(qtbot, edit)
    edit.selectAll()
    qtbot.keyClicks(edit, str(sshd.python))
    qtbot.keyClick(edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: machine.host_info() is not None, timeout=20_000)


def stop_in(qtbot: QtBot, window: MainWindow, phase: str, held: HeldWorker) -> ComparisonReport:
    """Start a comparison with a click, click Stop once it is in `phase`; the report."""
    with qtbot.waitSignal(window.comparison_started, timeout=10_000):
        click(qtbot, window.run_button)
    folder = window.comparisons.report_folder
    assert folder is not None
    qtbot.waitUntil(in_phase(phase, folder, held), timeout=30_000)
    assert window.is_running()
    with qtbot.waitSignal(window.comparison_finished, timeout=ENDED_WITHIN_MS) as ended:
        click(qtbot, window.stop_button)
    report: ComparisonReport = ended.args[0]
    return report


def assert_statuses(phase: str, report: ComparisonReport, held: HeldWorker) -> None:
    measured = [r.status for r in report.measure_runs]
    trained = [r.status for r in report.runs]
    if phase in ("starting", "warm-up", "measuring"):
        assert measured == ["cancelled", "cancelled"]
        assert trained == ["cancelled", "cancelled"] and held.variants == []
        assert report.inspect_runs == []
    if phase == "starting":  # terminated in their set-up: no pair, no word of their own
        for entry in report.measure_runs:
            assert [e.type for e in entry.events] == ["cancelled"]
            assert getattr(entry.events[0], "forced", None) is True
    if phase == "measuring":  # the pairs of the rounds that finished are kept
        c = report.comparison
        assert c is not None and c.interleaved is not None and c.interleaved.pairs >= 2
    if phase == "inspection":
        assert measured == ["finished", "finished"] and trained == []
        assert [(r.run_id, r.status) for r in report.inspect_runs] == [
            ("i-baseline", "finished"), ("i-xla", "cancelled")]  # the baseline's why came first
    if phase == "training":
        assert measured == ["finished", "finished"]
        assert trained == ["cancelled", "cancelled"] and held.variants == ["baseline"]


@pytest.mark.parametrize("machine", ["local", "ssh"])
@pytest.mark.parametrize("phase", list(PHASES))
def test_stop_ends_the_comparison_in_every_phase(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path, request: pytest.FixtureRequest,
    phase: str, machine: str,
) -> None:
    settings = PHASES[phase]
    held = HeldWorker()
    options: dict[str, Any] = {}
    if machine == "ssh":
        sshd: SshServer = request.getfixturevalue("sshd")
        options = {"transport_options": sshd.options, "host_checker": host_checker(sshd)}
    # The inspection compile runs only with the real training runner (a replay has no XLA to
    # inspect): a speed-only comparison, which trains nothing.
    worker = {"real_worker": True} if phase == "inspection" else {"worker": held}
    window = load_small(qtbot, make_window(measure_command=measure_command(settings["fake"]),
                                           **worker, **options), dataset)
    answerer = ModalAnswerer()
    try:
        with watching(window, answerer):
            if machine == "ssh":
                measure_on_the_host(qtbot, window, request.getfixturevalue("sshd"))
            if settings.get("quick"):
                click(qtbot, window.speed_only)
            report = stop_in(qtbot, window, phase, held)
            assert not window.is_running() and window.run_button.isEnabled()
            assert "Stopped" in window.message_bar.text()
    finally:
        held.release.set()
    assert_statuses(phase, report, held)
    assert answerer.titles() == []  # no error dialog
    if machine == "ssh":  # the comparison's folder on the host is gone with it
        sshd = request.getfixturevalue("sshd")
        assert list((sshd.host_cache / "remote" / "runs").iterdir()) == []
        assert report.environment["host"] == ALIAS
