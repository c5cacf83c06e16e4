"""The preflight through a real OpenSSH server on localhost (tests/helpers/sshd.py): what a
host has, and each way a host cannot take the workers, with its own message and exit status 2,
no traceback, nothing left behind."""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import psutil
import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.sshd import (
    ALIAS,
    CLOSED_PORT_ALIAS,
    NO_SUCH_HOST_ALIAS,
    WRONG_KEY_ALIAS,
    SshServer,
    host_python,
)
from xlagui import __version__
from xlagui.cli import main
from xlagui.core.measure import transports
from xlagui.core.measure.transports import MachineError, MachineFailure, Target
from xlagui.core.protocol.events import PROTOCOL_VERSION
from xlagui.present.hosts import error_message, error_text


def masters(sshd: SshServer, settle: float = 5.0) -> list[psutil.Process]:
    """Our master connections to the test server still running (ssh -M … -N -f with its
    configuration: another program's on this machine are not ours to count), once those told
    to exit have had `settle` seconds to do it: `ssh -O exit` returns when the master has
    agreed, and on a loaded machine its process is still seen for a moment after."""
    deadline = time.monotonic() + settle
    while True:
        found = []
        for proc in psutil.process_iter(["cmdline"]):
            cmdline = proc.info["cmdline"] or []
            if "ControlMaster=yes" in cmdline and "-N" in cmdline and str(sshd.config) in cmdline:
                found.append(proc)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


@pytest.mark.tf
def test_the_preflight_says_what_the_host_has(sshd: SshServer) -> None:
    info = transports.check(Target(ALIAS, python=str(sshd.python), options=sshd.options))
    assert info.host == ALIAS and info.hostname == platform.node()
    assert (info.xlagui, info.protocol) == (__version__, PROTOCOL_VERSION)
    assert info.tensorflow == metadata.version("tensorflow")
    assert info.python == platform.python_version()
    assert info.devices and info.devices[0].id == "cpu" and info.devices[0].kind == "CPU"
    assert info.cpu_count == os.cpu_count()
    assert info.cache == str(sshd.host_cache / "remote")
    assert info.free_disk_bytes > 0
    assert info.environment()["host"] == ALIAS
    assert not masters(sshd)  # the connection it opened is closed


def _fake_python(folder: Path, line: str) -> Path:
    """A "Python" on the host that prints `line`, whatever it is asked (another release)."""
    script = folder / "other-python"
    script.write_text(f"#!/bin/sh\necho '{line}'\n")
    script.chmod(0o755)
    return script


def _python_without_xlagui(folder: Path) -> Path:
    """This interpreter without its site-packages: a Python the app was never installed for."""
    script = folder / "bare-python"
    script.write_text(f"#!/bin/sh\nexec '{sys.executable}' -S \"$@\"\n")
    script.chmod(0o755)
    return script


def _python_without_tensorflow(folder: Path, cache: Path) -> Path:
    """The host's Python with a `tensorflow` that cannot be imported first on its path."""
    fake = folder / "no-tf" / "tensorflow"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('no TensorFlow on this host')\n")
    return host_python(folder, cache, extra_path=str(folder / "no-tf"))


CASES = {
    "wrong key": (WRONG_KEY_ALIAS, None, MachineFailure.AUTH_FAILED, [
        "refused the login", "Permission denied", "keys only (BatchMode)"]),
    "closed port": (CLOSED_PORT_ALIAS, None, MachineFailure.UNREACHABLE, [
        "cannot be reached", "Connection refused"]),
    "unknown host": (NO_SUCH_HOST_ALIAS, None, MachineFailure.HOST_NOT_FOUND, [
        "no host called xlagui-nowhere", "Could not resolve hostname"]),
    "no python": (ALIAS, "/no/such/python3", MachineFailure.PYTHON_MISSING, [
        "has no Python called '/no/such/python3'", "--remote-python"]),
    "no xlagui": (ALIAS, "bare", MachineFailure.XLAGUI_MISSING, [
        "xlagui is not installed", "No module named 'xlagui'",
        f"-m pip install 'xlagui=={__version__}'"]),
    "another version": (ALIAS, "other", MachineFailure.VERSION_MISMATCH, [
        "has xlagui 0.0.1 (protocol 5)", f"this app is {__version__} (protocol "
        f"{PROTOCOL_VERSION})", f"-m pip install 'xlagui=={__version__}'"]),
    "no tensorflow": (ALIAS, "no-tf", MachineFailure.TENSORFLOW_MISSING, [
        "TensorFlow cannot be imported: no TensorFlow on this host", "pip install tensorflow"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_way_a_host_cannot_measure_has_its_own_message(
    case: str, sshd: SshServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alias, python, kind, words = CASES[case]
    if python == "bare":
        python = str(_python_without_xlagui(tmp_path))
    elif python == "other":
        python = str(_fake_python(tmp_path, '{"python": "3.11.7", "xlagui": "0.0.1", '
                                            '"protocol": 5}'))
    elif python == "no-tf":
        python = str(_python_without_tensorflow(tmp_path, sshd.host_cache))
    target = Target(alias, python=python or str(sshd.python), options=sshd.options)
    with pytest.raises(MachineError) as raised:
        transports.check(target)
    assert raised.value.kind is kind
    said = error_text(raised.value)
    for word in words:
        assert word in said
    assert not masters(sshd)
    argv = ["hosts", alias, "--ssh-config", str(sshd.config)]
    assert main([*argv, "--remote-python", target.python]) == 2
    err = capsys.readouterr().err.replace("\n", "")
    assert words[0] in err and "Traceback" not in err


def test_no_ssh_client_is_said_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without ssh
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where a control folder would go
    with pytest.raises(MachineError) as raised:
        transports.check(Target(ALIAS))
    assert raised.value.kind is MachineFailure.NO_CLIENT
    assert error_message(raised.value) == "no ssh command on this computer"
    assert list(tmp_path.iterdir()) == []  # no control folder left behind


def test_a_host_that_cannot_measure_leaves_no_output_folder(
    sshd: SshServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    out = tmp_path / "out"
    code = main(["compare", str(data), "--quick", "--image-size", "48", "--batch", "4",
                 "--host", WRONG_KEY_ALIAS, "--ssh-config", str(sshd.config), "--out", str(out)])
    assert code == 2
    assert "refused the login" in capsys.readouterr().err
    assert not out.exists()


def test_remote_options_need_a_host(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--demo", "--remote-data", "/data/elephants"]) == 2
    assert "--remote-data is a folder on the --host" in capsys.readouterr().err
    assert main(["compare", "--demo", "--host=-oProxyCommand=x"]) == 2
    assert "cannot start with '-'" in capsys.readouterr().err


@pytest.mark.tf
def test_a_device_the_host_lacks_is_refused_before_anything_runs(
    sshd: SshServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    out = tmp_path / "out"
    code = main(["compare", str(data), "--quick", "--image-size", "48", "--batch", "4",
                 "--device", "gpu:63", "--host", ALIAS, "--ssh-config", str(sshd.config),
                 "--remote-python", str(sshd.python), "--out", str(out)])
    assert code == 2
    assert f"{ALIAS} has no device gpu:63 (TensorFlow sees: cpu" in capsys.readouterr().err
    assert not out.exists() and not masters(sshd)
