"""The "Machine" group, through a real OpenSSH server on localhost (tests/helpers/sshd.py): a
host picked with real clicks from the ssh configuration, its preflight in the background, its
devices in the settings, a comparison run there, and the machines side by side in History."""

from __future__ import annotations

import platform
from pathlib import Path

import psutil
import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.helpers import elsewhere
from tests.helpers.clicks import (
    ModalAnswerer,
    choose_combo_item,
    click,
    click_tree_item,
    item_at,
    watching,
)
from tests.helpers.sshd import ALIAS, WRONG_KEY_ALIAS, SshServer
from tests.ui.conftest import WindowFactory, load_small
from xlagui.core.measure.transports.ssh.dataset import cache_key
from xlagui.core.protocol.events import StartedEvent
from xlagui.ui.window.main_window import TAB_HISTORY, MainWindow


def choose(qtbot: QtBot, window: MainWindow, words: str) -> None:
    """Pick the machine whose entry says `words`, with clicks."""
    picker = window.settings_panel.machine_panel.picker
    index = next(i for i in range(picker.count()) if words in picker.itemText(i))
    choose_combo_item(qtbot, picker, index)


def type_python(qtbot: QtBot, window: MainWindow, python: Path) -> None:
    """Type the host's Python and press Enter, as a user names it."""
    edit = window.settings_panel.machine_panel.python_edit
    click(qtbot, edit)
    edit.selectAll()
    qtbot.keyClicks(edit, str(python))
    qtbot.keyClick(edit, Qt.Key.Key_Return)


def test_the_hosts_of_the_ssh_configuration_are_offered_and_a_refusal_is_said(
    qtbot: QtBot, make_window: WindowFactory, sshd: SshServer, dataset: Path
) -> None:
    window = load_small(qtbot, make_window(transport_options=sshd.options), dataset)
    machine = window.settings_panel.machine_panel
    texts = [machine.picker.itemText(i) for i in range(machine.picker.count())]
    assert texts[0] == "This computer" and texts[-1] == "Other SSH host…"
    assert f"{ALIAS}  (SSH)" in texts and f"{WRONG_KEY_ALIAS}  (SSH)" in texts
    assert not machine.python_edit.isVisible()  # this computer needs none

    choose(qtbot, window, WRONG_KEY_ALIAS)
    assert machine.python_edit.isVisible()
    assert window.cannot_run_reason() == f"Checking {WRONG_KEY_ALIAS}…"
    assert not window.run_button.isEnabled()
    qtbot.waitUntil(lambda: "refused the login" in machine.status.text(), timeout=20_000)
    assert window.cannot_run_reason().startswith(
        f"{WRONG_KEY_ALIAS} cannot measure: {WRONG_KEY_ALIAS} refused the login")
    assert not window.run_button.isEnabled()

    choose(qtbot, window, "This computer")
    assert window.cannot_run_reason() == "" and window.run_button.isEnabled()
    assert "this computer" in machine.status.text()


def test_a_host_of_a_made_up_transport_is_picked_and_measured_on(
    qtbot: QtBot, make_window: WindowFactory, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transport registered in `core/measure/transports/` (tests/helpers/elsewhere.py) offers
    its host in the picker, is checked and runs the comparison: the window names no transport."""
    elsewhere.register(monkeypatch)
    window = load_small(qtbot, make_window(), dataset)
    window.speed_only.setChecked(True)
    machine = window.settings_panel.machine_panel
    choose(qtbot, window, elsewhere.HOST)
    qtbot.waitUntil(lambda: machine.host_info() is not None, timeout=10_000)
    assert window.cannot_run_reason() == ""
    with qtbot.waitSignal(window.comparison_finished, timeout=60_000) as done:
        click(qtbot, window.run_button)
    report = done.args[0]
    assert report.environment["host"] == elsewhere.HOST
    assert [r.status for r in report.measure_runs] == ["finished", "finished"]
    assert elsewhere.ElsewhereTransport.log[-1] == "close"


@pytest.mark.tf
def test_a_comparison_runs_on_the_host_and_history_sets_the_machines_side_by_side(
    qtbot: QtBot, make_window: WindowFactory, sshd: SshServer, dataset: Path
) -> None:
    window = load_small(qtbot, make_window(transport_options=sshd.options), dataset)
    window.speed_only.setChecked(True)
    machine = window.settings_panel.machine_panel
    answerer = ModalAnswerer()
    with watching(window, answerer):
        choose(qtbot, window, ALIAS)
        type_python(qtbot, window, sshd.python)  # the host's Python: this checkout's code
        qtbot.waitUntil(lambda: machine.host_info() is not None, timeout=60_000)
        info = machine.host_info()
        assert info is not None and info.python_command == str(sshd.python)
        assert f"Both sides are measured on <b>{ALIAS}</b>" in machine.status.text()
        device = window.settings_panel.device
        assert device.itemText(0) == f"CPU — {info.cpu}"  # the host's devices
        assert window.cannot_run_reason() == ""

        with qtbot.waitSignal(window.comparison_finished, timeout=120_000) as done:
            click(qtbot, window.run_button)
        remote = done.args[0]
        assert remote.environment["host"] == ALIAS
        # It ran there: the dataset went into the host's cache, its run folders came home
        # and were removed there.
        host_cache = sshd.host_cache / "remote"
        # (keyed by the files and their modification times: `cache_key`)
        assert window.datasets.scan is not None
        assert (host_cache / "datasets" / cache_key(window.datasets.scan)).is_dir()
        assert list((host_cache / "runs").iterdir()) == []
        assert [r.status for r in remote.measure_runs] == ["finished", "finished"]
        pids = [e.pid for r in remote.measure_runs for e in r.events
                if isinstance(e, StartedEvent)]
        assert len(pids) == 2 and not any(psutil.pid_exists(p) and psutil.Process(p).status()
                                          != psutil.STATUS_ZOMBIE for p in pids)

        # The same comparison on this computer.
        choose(qtbot, window, "This computer")
        with qtbot.waitSignal(window.comparison_finished, timeout=120_000) as done:
            click(qtbot, window.run_button)
        assert "host" not in done.args[0].environment

        panel = window.history_panel
        window.tabs.setCurrentIndex(TAB_HISTORY)
        qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() == 2, timeout=10_000)
        # The Machine column names the CPU (the same machine twice here: the host is this
        # computer over SSH); which host each ran on is in its tooltip.
        tips = [item_at(panel.tree, i).toolTip(2) for i in range(2)]
        assert any(ALIAS in t for t in tips) and any(platform.node() in t for t in tips), tips
        click_tree_item(qtbot, panel.tree, item_at(panel.tree, 1))  # the older: on the host
        assert panel.side_by_side_button.isEnabled()
        click(qtbot, panel.side_by_side_button)
        assert panel.machines.isVisible() and panel.machines.topLevelItemCount() == 2
        rows = [item_at(panel.machines, i) for i in range(2)]
        assert [r.text(0) for r in rows] == [ALIAS, platform.node()]
        for row in rows:  # each machine's own speed-up with its interval, its own step times
            assert "95% CI" in row.text(2) or "single measurement" in row.text(2)
            assert row.text(3).endswith("s") and row.text(4).endswith("s")
        assert "never divided across machines" in panel.machines_caption.text()
