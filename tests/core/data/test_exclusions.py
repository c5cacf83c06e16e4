"""Leaving the files of a dataset problem out of a comparison: which files, the training and
validation samples without them, the record in the JSON, and a folder left untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.corpus import CASES_BY_NAME
from tests.helpers.images import copy, make_split_dataset, tree_snapshot
from tests.helpers.streams import FakeWorker, run_events
from xlagui.core.compare import new_report, run_comparison
from xlagui.core.data.exclusions import (
    Exclusions,
    can_leave_out,
    empty_after,
    files_left_out,
    parse_kinds,
    without_recorded,
)
from xlagui.core.data.scan import DatasetScan, Problem, scan_dataset
from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState


def scan_case(name: str, tmp_path: Path) -> DatasetScan:
    return scan_dataset(CASES_BY_NAME[name].build(tmp_path / name))


def only_problem(scan: DatasetScan, kind: str) -> Problem:
    found = [p for p in scan.problems if p.kind == kind]
    assert len(found) == 1, [p.kind for p in scan.problems]
    return found[0]


def rels(files: list) -> list[str]:  # type: ignore[type-arg]
    return [f.rel for f in files]


def fake_worker() -> FakeWorker:
    return FakeWorker(
        {
            "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
            "xla": run_events(variant="xla", xla_mode="jit", epoch_seconds=(6.0, 0.5, 0.5)),
        }
    )


@pytest.fixture
def mixed(tmp_path: Path) -> DatasetScan:
    """Two label conflicts, a leak into the test data and a duplicate within a class."""
    root = tmp_path / "mixed"
    make_split_dataset(root, {"african": 6, "asian": 6}, {"african": 2, "asian": 2})
    train = root / "train"
    copy(train / "african" / "african_0000.jpg", train / "asian" / "which_0.jpg")
    copy(train / "african" / "african_0001.jpg", train / "asian" / "which_1.jpg")
    copy(train / "asian" / "asian_0002.jpg", root / "test" / "asian" / "seen.jpg")
    copy(train / "asian" / "asian_0003.jpg", train / "asian" / "again.jpg")
    return scan_dataset(root)


def test_kinds_are_read_from_the_command_line_words() -> None:
    assert parse_kinds("conflict,leakage, duplicate") == (
        "label_conflict",
        "leakage",
        "duplicate_in_class",
    )
    assert parse_kinds("") == ()
    assert parse_kinds("leakage,leakage") == ("leakage",)
    with pytest.raises(ValueError, match="unknown problem kind 'imbalance'"):
        parse_kinds("conflict,imbalance")


def test_a_label_conflict_leaves_out_every_copy(tmp_path: Path) -> None:
    scan = scan_case("same_image_two_classes", tmp_path)
    problem = only_problem(scan, "label_conflict")
    assert can_leave_out(problem)
    assert rels(files_left_out(problem, scan)) == ["train/cats/cats_0001.jpg", "train/dogs/who.jpg"]
    trained = Exclusions().leave_out(problem).apply(scan)
    assert len(trained.files) == len(scan.files) - 2
    assert "train/dogs/who.jpg" not in rels(trained.files)
    assert len(scan.files) == 9  # the scan itself is not changed


def test_leakage_leaves_out_the_test_copy_only(tmp_path: Path) -> None:
    scan = scan_case("same_image_train_test", tmp_path)
    problem = only_problem(scan, "leakage")
    assert rels(files_left_out(problem, scan)) == ["test/dogs/seen.jpg"]
    trained = Exclusions().leave_out(problem).apply(scan)
    assert "train/dogs/dogs_0002.jpg" in rels(trained.files_for("train"))
    assert "test/dogs/seen.jpg" not in rels(trained.files_for("test"))


def test_a_duplicate_keeps_its_first_copy(tmp_path: Path) -> None:
    scan = scan_case("duplicate_in_class", tmp_path)
    problem = only_problem(scan, "duplicate_in_class")
    # Both copies are named; the first by path stays.
    assert rels(files_left_out(problem, scan)) == ["train/cats/cats_0001.jpg"]


def test_other_problems_cannot_be_left_out(tmp_path: Path) -> None:
    scan = scan_case("imbalance", tmp_path)
    problem = only_problem(scan, "imbalance")
    assert not can_leave_out(problem)
    assert files_left_out(problem, scan) == []
    assert len(Exclusions().leave_out(problem)) == 0


def test_whole_kinds_and_the_record(mixed: DatasetScan) -> None:
    kinds = sorted(p.kind for p in mixed.problems)
    assert kinds == ["duplicate_in_class", "label_conflict", "label_conflict", "leakage"]
    chosen = Exclusions.of_kinds(mixed, parse_kinds("conflict,leakage"))
    assert len(chosen) == 3
    assert rels(chosen.files(mixed)) == [
        "train/african/african_0000.jpg",
        "train/african/african_0001.jpg",
        "train/asian/which_0.jpg",
        "train/asian/which_1.jpg",
        "test/asian/seen.jpg",
    ]
    record = chosen.record(mixed)
    assert record["kinds"] == ["conflict", "leakage"]
    assert record["problems"] == 3 and record["reproducible"] is True
    assert record["files"][0] == {
        "path": "train/african/african_0000.jpg",
        "split": "train",
        "label": "african",
        "problem": "label_conflict",
    }
    assert record["files"][-1]["path"] == "test/asian/seen.jpg"
    # One of the two conflicts only: the command line cannot say that.
    conflict = next(p for p in mixed.problems if p.kind == "label_conflict")
    one = Exclusions().leave_out(conflict)
    assert one.record(mixed)["kinds"] == [] and one.record(mixed)["reproducible"] is False
    assert one.put_back(conflict).keys == frozenset()


def test_the_list_survives_a_rescan(mixed: DatasetScan) -> None:
    chosen = Exclusions.of_kinds(mixed, ["leakage"])
    again = scan_dataset(mixed.root)
    assert chosen.restricted_to(again).keys == chosen.keys
    assert rels(chosen.files(again)) == ["test/asian/seen.jpg"]
    assert chosen.restricted_to(again).apply(again).files == chosen.apply(mixed).files


def test_nothing_left_to_train_is_said(tmp_path: Path) -> None:
    root = tmp_path / "tiny"
    make_split_dataset(root, {"a": 1, "b": 2}, {"a": 1, "b": 1})
    copy(root / "train" / "a" / "a_0000.jpg", root / "train" / "b" / "also_a.jpg")
    scan = scan_dataset(root)
    assert empty_after(scan) == ""
    trained = Exclusions.of_kinds(scan, ["conflict"]).apply(scan)
    assert "no training images of class 'a'" in empty_after(trained)


def test_a_comparison_trains_without_the_files_and_records_them(
    mixed: DatasetScan, tmp_path: Path
) -> None:
    before = tree_snapshot(mixed.root)
    chosen = Exclusions.of_kinds(mixed, parse_kinds("conflict,leakage,duplicate"))
    left_out = {f.path for f in chosen.files(mixed)}
    assert len(left_out) == 6
    report = new_report(mixed, RunConfig(epochs=3, batch_size=4, image_size=48), exclusions=chosen)
    assert sum(report.dataset["counts"]["train"].values()) == len(mixed.files_for("train")) - 5
    fake = fake_worker()
    out = tmp_path / "out"
    # Handed the full scan, the comparison still leaves out what its report records.
    run_comparison(report, mixed, out, TaskState(), worker=fake)
    for spec in fake.specs:
        used = {s.path for s in spec.train + spec.val}
        assert not used & left_out
        assert len(spec.train) == len(mixed.files_for("train")) - 5
        assert len(spec.val) == len(mixed.files_for("test")) - 1
    data = json.loads((out / "comparison.json").read_text())
    excluded = data["dataset"]["excluded"]
    assert excluded["kinds"] == ["conflict", "leakage", "duplicate"]
    assert len(excluded["files"]) == 6
    assert data["reproduce"].endswith("--exclude-problems conflict,leakage,duplicate")
    assert tree_snapshot(mixed.root) == before  # the dataset folder is never touched


def test_a_comparison_without_exclusions_says_so(mixed: DatasetScan) -> None:
    report = new_report(mixed, RunConfig(epochs=3, batch_size=4, image_size=48))
    assert report.dataset["excluded"]["files"] == []
    assert "--exclude-problems" not in report.reproduce_command()
    assert without_recorded(mixed, report.dataset) is mixed
