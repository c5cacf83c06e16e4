"""The workflow's front door (`core/compare/inputs.py`): a comparison's dataset, less the files
left out, is checked once, where every front end's request comes in, and nowhere else."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import ComparisonRequest, Watcher, run
from xlagui.core.compare.inputs import (
    dataset_folder,
    exclusions_of_kinds,
    left_out_problem,
    open_dataset,
    trainable_problem,
    trained_scan,
)
from xlagui.core.data.exclusions import Exclusions
from xlagui.core.data.scan import scan_dataset
from xlagui.core.protocol.config import ConfigError, RunConfig
from xlagui.core.protocol.task import TaskState

ROOT = Path(__file__).resolve().parents[3]


def test_the_files_left_out_are_not_trained_on_and_an_emptied_test_set_is_refused(
        tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    test_image = next((data / "test" / "african").iterdir())
    shutil.copy(test_image, data / "train" / "african" / "seen.jpg")  # a leak
    scan = scan_dataset(data)
    leak = Exclusions.of_kinds(scan, ["leakage"])
    trained = trained_scan(scan, leak, RunConfig(batch_size=4, image_size=48))
    assert len(trained.files) == len(scan.files) - 1
    assert str(test_image) not in {f.path for f in trained.files}
    every = tiny_split_dataset(tmp_path / "e", train=4, test=1)
    for label in ("african", "asian"):  # every test image is also a training image
        for image in (every / "test" / label).iterdir():
            shutil.copy(image, every / "train" / label / "seen.jpg")
    scan = scan_dataset(every)
    with pytest.raises(ConfigError, match=r"the files left out: .*leave fewer out"):
        trained_scan(scan, Exclusions.of_kinds(scan, ["leakage"]),
                     RunConfig(batch_size=4, image_size=48))


def test_a_batch_larger_than_what_is_left_is_refused_before_anything_starts(
        tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    out = tmp_path / "out"
    request = ComparisonRequest(scan=scan_dataset(data), out_dir=out,
                                config=RunConfig(batch_size=9, image_size=48))
    with pytest.raises(ConfigError, match=r"batch size 9 is larger than the training set \(8"):
        run(request, Watcher(), TaskState())
    assert not out.exists()  # refused before the folder, the model check or any worker


# What preparing a comparison's inputs calls: the scan, the demo set, the exclusions' own
# checks and the batch check. Only the front door (`core/compare/inputs.py`) calls them.
PREPARATION = ("scan_dataset", "ensure_demo_dataset", "check_batch_fits", "empty_after",
               "of_kinds", "DatasetError")


def test_no_front_end_prepares_or_checks_the_inputs_itself() -> None:
    """The CLI, the window and a sweep's cells hand what the user gave to the front door
    (`inputs.dataset_folder`, `open_dataset`, `exclusions_of_kinds`, `left_out_problem`) and
    the workflow; none scans, draws the demo set or checks a batch itself (`present/` may
    word advice)."""
    callers = []
    for folder in ("xlagui/cli", "xlagui/ui", "xlagui/core/sweep"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            callers += [f"{path.relative_to(ROOT)}: {name}" for name in PREPARATION
                        if re.search(rf"\b{name}\b", text)]
    assert callers == []


def test_the_front_door_opens_a_folder_or_the_demo_set_and_words_what_is_wrong(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xlagui.core.data import demo

    data = tiny_split_dataset(tmp_path / "d", train=4, test=1)
    assert dataset_folder(data) == (data, False)
    drawn = []
    monkeypatch.setattr(demo, "ensure_demo_dataset",
                        lambda seed: drawn.append(seed) or tmp_path / "demo")
    assert dataset_folder(None) == (tmp_path / "demo", True) and drawn == [0]
    scan = open_dataset(data, holdout_percent=20, seed=0)
    assert len(scan.files) == 10 and trainable_problem(scan) == []
    with pytest.raises(ConfigError, match="does not exist"):  # the scan's own words
        open_dataset(tmp_path / "nowhere", holdout_percent=20, seed=0)
    one_class = tiny_split_dataset(tmp_path / "one", train=4, test=1)
    shutil.rmtree(one_class / "train" / "asian")
    shutil.rmtree(one_class / "test" / "asian")
    refusing = trainable_problem(open_dataset(one_class, holdout_percent=20, seed=0))
    assert [p.kind for p in refusing] == ["too_few_classes"], refusing


def test_leaving_out_kinds_of_problem_is_refused_when_it_empties_the_test_set(
        tmp_path: Path) -> None:
    every = tiny_split_dataset(tmp_path / "e", train=4, test=1)
    for label in ("african", "asian"):  # every test image is also a training image
        for image in (every / "test" / label).iterdir():
            shutil.copy(image, every / "train" / label / "seen.jpg")
    scan = scan_dataset(every)
    assert left_out_problem(scan, None) == "" and left_out_problem(scan, Exclusions()) == ""
    assert "test" in left_out_problem(scan, Exclusions.of_kinds(scan, ["leakage"]))
    with pytest.raises(ConfigError, match=r"; exclude fewer kinds of problem$"):
        exclusions_of_kinds(scan, ["leakage"])
    assert len(exclusions_of_kinds(scan, ["conflict"])) == 0
