"""Why a machine cannot measure, worded from the error's kind and facts, word for word as the
SSH transport once wrote them into its errors; and the host's rows and lines."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from xlagui import __version__
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.transports import MachineError, MachineFailure, PlacedDataset
from xlagui.core.protocol.events import PROTOCOL_VERSION
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.present.hosts import (
    HINTS,
    MESSAGES,
    dataset_line,
    error_hint,
    error_message,
    error_text,
    host_line,
)

F = MachineFailure
SAID = "ssh: connect to host x port 22: Connection refused"
INSTALL = f"python3 -m pip install 'xlagui=={__version__}'"

CASES = [
    (MachineError(F.NO_CLIENT, client="ssh"), "no ssh command on this computer",
     "Install the OpenSSH client (Debian/Ubuntu: apt install openssh-client; Windows: the "
     "optional feature 'OpenSSH Client')."),
    (MachineError(F.AUTH_FAILED, host="gpu", said="Permission denied (publickey)."),
     "gpu refused the login: Permission denied (publickey).",
     "xlagui logs in with keys only (BatchMode). Check that `ssh gpu` logs in without a "
     "password prompt (ssh-copy-id, ssh-add, IdentityFile in ~/.ssh/config); a changed host "
     "key must be accepted in a terminal first."),
    (MachineError(F.HOST_NOT_FOUND, host="gpu", said="Could not resolve hostname gpu"),
     "no host called gpu: Could not resolve hostname gpu",
     "Check the name, or the Host alias in your ssh configuration."),
    (MachineError(F.UNREACHABLE, host="gpu", said=SAID), f"gpu cannot be reached: {SAID}",
     "Check that the host is up, the network or VPN is there, and the port is the one ssh "
     "uses."),
    (MachineError(F.CLIENT_FAILED, client="ssh", host="gpu", said=""),
     "ssh could not run a command on gpu",
     "Try `ssh gpu true` in a terminal."),
    (MachineError(F.NO_ANSWER, host="gpu", seconds=30.0), "gpu did not answer within 30 s",
     "Check that the host is up and the network or VPN is there."),
    (MachineError(F.NO_CONNECTION, host="gpu", said="kex failed"),
     "ssh could not connect to gpu: kex failed", ""),
    (MachineError(F.COMMAND_FAILED, host="gpu", step="model_copy", file="net.keras",
                  status=1, said="No space left on device"),
     "copying the model file net.keras failed on gpu (exit status 1): No space left on device",
     ""),
    (MachineError(F.COMMAND_FAILED, host="gpu", step="", file="", status=2, said="x"),
     "a command failed on gpu (exit status 2): x", ""),
    (MachineError(F.PREFLIGHT_TIMEOUT, host="gpu", seconds=180.0),
     "the preflight on gpu did not answer within 180 s",
     "Importing TensorFlow on the host took too long, or the host is overloaded."),
    (MachineError(F.PYTHON_MISSING, host="gpu", python="/no/python3", said="not found"),
     "gpu has no Python called '/no/python3': not found",
     "Name the host's Python (--remote-python, or the Machine settings): the one with "
     "TensorFlow and xlagui, e.g. ~/venv/bin/python."),
    (MachineError(F.PREFLIGHT_FAILED, host="gpu", status=1, said=""),
     "the preflight on gpu failed (exit status 1): it printed nothing", ""),
    (MachineError(F.XLAGUI_MISSING, host="gpu", python="python3",
                  missing="No module named 'xlagui'", version=__version__),
     "xlagui is not installed for python3 on gpu (No module named 'xlagui')",
     f"Install this app's version there: `{INSTALL}`."),
    (MachineError(F.VERSION_MISMATCH, host="gpu", python="python3", theirs="0.0.1",
                  their_protocol=5, version=__version__, protocol=PROTOCOL_VERSION),
     f"gpu has xlagui 0.0.1 (protocol 5), this app is {__version__} (protocol "
     f"{PROTOCOL_VERSION}): both sides must be the same version",
     f"Install the matching version on the host: `{INSTALL}`."),
    (MachineError(F.PREFLIGHT_STOPPED, host="gpu", status=1, said="Killed"),
     "the preflight on gpu stopped before describing the host (exit status 1): Killed", ""),
    (MachineError(F.TENSORFLOW_MISSING, host="gpu", python="python3",
                  said="no module"),
     "gpu: TensorFlow cannot be imported: no module",
     "Install TensorFlow for that Python: `python3 -m pip install tensorflow`."),
    (MachineError(F.PREFLIGHT_GARBLED, host="gpu", said="field 'cpu' should be str"),
     "gpu: field 'cpu' should be str", ""),
    (MachineError(F.COPY_FAILED, host="gpu", said="tar: write error"),
     "copying the dataset to gpu failed: tar: write error",
     "The host needs tar and room in its cache for the dataset."),
    (MachineError(F.REMOTE_DATA_UNCHECKED, host="gpu", root="/data"),
     "checking /data on gpu gave no answer", ""),
    (MachineError(F.REMOTE_DATA_MISSING, host="gpu", root="/data"),
     "there is no folder /data on gpu",
     "Give the dataset's folder as the host sees it, or leave it out to copy the dataset "
     "there."),
    (MachineError(F.REMOTE_DATA_DIFFERS, host="gpu", root="/data", count=2, files=16,
                  examples="a/1.jpg, b/2.jpg"),
     "2 of the dataset's 16 files are missing from /data on gpu, or differ in size (e.g. "
     "a/1.jpg, b/2.jpg)",
     "The folder on the host must hold the same files as the one scanned here, under the same "
     "relative paths."),
]


@pytest.mark.parametrize(("error", "message", "hint"), CASES,
                         ids=[f"{c[0].kind}-{i}" for i, c in enumerate(CASES)])
def test_each_kind_is_worded_as_before(error: MachineError, message: str, hint: str) -> None:
    assert error_message(error) == message
    assert error_hint(error) == hint
    assert error_text(error) == (f"{message.rstrip('.')}. {hint}" if hint else message)


def test_every_kind_has_its_message() -> None:
    assert set(MESSAGES) == set(MachineFailure)
    assert set(HINTS) <= set(MachineFailure)
    assert {c[0].kind for c in CASES} == set(MachineFailure)


INFO = HostInfo(
    host="gpu", hostname="gpu-box", xlagui=__version__, protocol=PROTOCOL_VERSION,
    python="3.11.7", platform="Linux", cpu="Xeon", cpu_count=64, cache="/home/u/.cache",
    free_disk_bytes=10 * 2**30, tensorflow="2.21.0",
    devices=(DeviceInfo("cpu", "Xeon", "CPU"), DeviceInfo("gpu:0", "H200", "GPU", 2**30),
             DeviceInfo("gpu:1", "H200", "GPU"), DeviceInfo("all", "all 2 GPUs", "GPU")),
)


def test_the_host_line_names_each_gpu_but_not_all_of_them_at_once() -> None:
    assert host_line(INFO) == (
        "Measuring on gpu over SSH: Xeon (64 cores), gpu:0 H200, 1.0 GB; gpu:1 H200, "
        "TensorFlow 2.21.0"
    )
    assert INFO.has_device("gpu:1") and INFO.has_device("all") and INFO.has_device("cpu")
    assert not INFO.has_device("gpu:2") and not INFO.has_device("tpu")


def test_the_dataset_line() -> None:
    root = PurePosixPath("/c/datasets/abc")
    assert dataset_line(PlacedDataset(root, 40, cached=True), "gpu") == (
        "The dataset is already on gpu (/c/datasets/abc): nothing copied")
    assert dataset_line(PlacedDataset(root, 40), "gpu") == (
        "Using the dataset folder /c/datasets/abc on gpu (40 files)")
