"""The dataset on the host, through a real OpenSSH server on localhost: copied once by
fingerprint (a second run copies nothing), a stopped copy never trusted, a folder already on
the host checked file by file."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from tests.helpers.sshd import ALIAS, SshServer
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.measure.transports import MachineError, MachineFailure, Target
from xlagui.core.measure.transports.ssh.client import Ssh
from xlagui.core.measure.transports.ssh.dataset import MARKER, cache_key, dataset_on_host
from xlagui.core.protocol.task import Cancelled, TaskState
from xlagui.present.hosts import error_message, error_text


@pytest.fixture
def ssh(sshd: SshServer) -> Iterator[Ssh]:
    with Ssh(Target(ALIAS, python=str(sshd.python), options=sshd.options)) as ssh:
        ssh.open()
        yield ssh


@pytest.fixture
def scan(tmp_path: Path) -> DatasetScan:
    return scan_dataset(tiny_split_dataset(tmp_path / "data", train=6, test=2))


def test_the_dataset_is_copied_once(ssh: Ssh, scan: DatasetScan, tmp_path: Path) -> None:
    cache = tmp_path / "host-cache"  # the host is this machine: its cache is a folder here
    seen: list[tuple[int, int]] = []
    first = dataset_on_host(ssh, str(cache), scan, TaskState(),
                            on_progress=lambda done, total: seen.append((done, total)))
    total = sum(f.size_bytes for f in scan.files)
    assert not first.cached and first.copied_bytes > total  # the files and tar's headers
    assert first.files == len(scan.files) == 16
    assert seen[-1] == (total, total) and len(seen) > 1
    root = cache / "datasets" / cache_key(scan)
    assert Path(str(first.root)) == root
    for f in scan.files:
        assert (root / f.rel).read_bytes() == Path(f.path).read_bytes()
    assert json.loads((root / MARKER).read_text()) == {f.rel: f.size_bytes for f in scan.files}
    stamp = (root / MARKER).stat().st_mtime_ns

    again = dataset_on_host(ssh, str(cache), scan, TaskState(),
                            on_progress=lambda done, total: seen.append((done, total)))
    assert again.cached and again.copied_bytes == 0 and again.root == first.root
    assert (root / MARKER).stat().st_mtime_ns == stamp  # nothing was written
    assert len(seen) == len([s for s in seen if s[1] == total])  # no progress the 2nd time
    assert not list((cache / "datasets").glob(".partial-*"))


def test_a_stopped_copy_is_never_trusted(ssh: Ssh, scan: DatasetScan, tmp_path: Path) -> None:
    cache = tmp_path / "host-cache"
    datasets = cache / "datasets"
    state = TaskState()
    with pytest.raises(Cancelled):
        dataset_on_host(ssh, str(cache), scan, state,
                        on_progress=lambda done, total: state.request_interruption())
    # No copy, no partial one: the host's side of the stopped copy removes its own folder,
    # which beside CI's other lanes it once made after the parent had removed it.
    deadline = time.monotonic() + 10
    while os.listdir(datasets) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.listdir(datasets) == []

    # A partial copy from a crash an hour ago goes; one under way elsewhere stays.
    stale, fresh = datasets / ".partial-crashed", datasets / ".partial-under-way"
    for folder in (stale, fresh):
        folder.mkdir()
        (folder / "half.jpg").write_bytes(b"\xff\xd8")
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    copied = dataset_on_host(ssh, str(cache), scan, TaskState())
    assert not copied.cached
    assert sorted(os.listdir(datasets)) == sorted([".partial-under-way", cache_key(scan)])


def test_an_edited_image_of_the_same_size_is_copied_again(
    ssh: Ssh, scan: DatasetScan, tmp_path: Path
) -> None:
    """The cache is keyed by each file's modification time too, not only names and sizes: an
    image edited in place to the same size is not served from the old copy."""
    cache = tmp_path / "host-cache"
    first = dataset_on_host(ssh, str(cache), scan, TaskState())
    edited = Path(scan.files[0].path)
    data = bytearray(edited.read_bytes())
    data[-3] ^= 0xFF  # a byte near the end changed: same size, same name
    edited.write_bytes(bytes(data))
    later = edited.stat().st_mtime + 5
    os.utime(edited, (later, later))
    assert scan_dataset(Path(scan.root)).fingerprint() == scan.fingerprint()  # names and sizes
    again = dataset_on_host(ssh, str(cache), scan, TaskState())
    assert not again.cached and again.root != first.root
    assert (Path(str(again.root)) / scan.files[0].rel).read_bytes() == bytes(data)


def test_a_folder_already_on_the_host_is_checked(
    ssh: Ssh, scan: DatasetScan, tmp_path: Path
) -> None:
    there = dataset_on_host(ssh, str(tmp_path / "cache"), scan, TaskState(),
                            remote_data=scan.root)
    assert str(there.root) == scan.root and there.copied_bytes == 0
    assert not (tmp_path / "cache").exists()  # nothing copied, nothing made

    other = tmp_path / "on-host"
    shutil.copytree(scan.root, other)
    gone = scan.files[3]
    (other / gone.rel).unlink()
    with pytest.raises(MachineError) as missing:
        dataset_on_host(ssh, str(tmp_path / "cache"), scan, TaskState(), remote_data=str(other))
    assert missing.value.kind is MachineFailure.REMOTE_DATA_DIFFERS
    said = error_message(missing.value)
    assert f"1 of the dataset's 16 files are missing from {other}" in said
    assert gone.rel in said
    assert "under the same relative paths" in error_text(missing.value)
    with pytest.raises(MachineError) as nowhere:
        dataset_on_host(ssh, str(tmp_path / "cache"), scan, TaskState(),
                        remote_data="/no/such/folder")
    assert nowhere.value.kind is MachineFailure.REMOTE_DATA_MISSING
    assert error_message(nowhere.value).startswith("there is no folder /no/such/folder")
