"""The workflow's front door (`core/compare/inputs.py`): a comparison's dataset, less the files
left out, is checked once, where every front end's request comes in, and nowhere else."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.datasets import tiny_split_dataset
from xlagui.core.compare import ComparisonRequest, Watcher, run
from xlagui.core.compare.inputs import trained_scan
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


def test_no_front_end_checks_the_inputs_itself() -> None:
    """The CLI, the window and a sweep's cells hand the scan, the exclusions and the settings
    to the workflow; `check_batch_fits` is the workflow's (`present/` may word advice)."""
    callers = []
    for folder in ("xlagui/cli", "xlagui/ui", "xlagui/core/sweep"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if re.search(r"\bcheck_batch_fits\b", path.read_text(encoding="utf-8")):
                callers.append(str(path.relative_to(ROOT)))
    assert callers == []
