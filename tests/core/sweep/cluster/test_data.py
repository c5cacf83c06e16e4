"""Folders as archives for a cluster's nodes: round trip, all-or-nothing, members kept inside,
and where a node finds the dataset."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from xlagui.core.sweep.cluster.data import DatasetSource, digest, pack_folder, unpack_folder


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_folder_round_trips(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "train" / "a").mkdir(parents=True)
    (src / "train" / "a" / "1.jpg").write_bytes(b"\xff\xd8jpeg")
    (src / "top.txt").write_text("x")
    out = unpack_folder(pack_folder(src), tmp_path / "out")
    assert _tree(out) == _tree(src)


def test_unpacking_replaces_the_target_whole(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "new.txt").write_text("new")
    target = tmp_path / "out"
    target.mkdir()
    (target / "old.txt").write_text("old")
    unpack_folder(pack_folder(src), target)
    assert sorted(_tree(target)) == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_member_outside_the_target_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tarfile.TarError):
        unpack_folder(buf.getvalue(), tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()
    assert not (tmp_path / "out").exists()


def test_a_node_unpacks_the_archive_once(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "f.txt").write_text("data")
    archive = pack_folder(src)
    fetched: list[Any] = []

    def fetch(ref: Any) -> bytes:
        fetched.append(ref)
        return archive

    source = DatasetSource(archive="ref", digest=digest(archive))
    first = source.on_node(tmp_path / "cache", fetch)
    second = source.on_node(tmp_path / "cache", fetch)
    assert first == second and (Path(first) / "f.txt").read_text() == "data"
    assert fetched == ["ref"]


def test_a_shared_path_and_the_demo_are_not_fetched(tmp_path: Path) -> None:
    def fetch(ref: Any) -> bytes:
        raise AssertionError("fetched")

    assert DatasetSource(shared="/data/set").on_node(tmp_path, fetch) == "/data/set"
    assert DatasetSource().on_node(tmp_path, fetch) == ""


def test_different_contents_have_different_digests() -> None:
    assert digest(b"a") != digest(b"b")
