"""A comparison's inputs, prepared and checked once: the front door every front end comes in by.

The CLI, the window and a sweep's cells hand over what the user gave (a folder or the demo set,
the held-out share and seed, the files to leave out, the settings); this module turns it into
what the workflow (`workflow.run`) trains on:

- `dataset_folder`: the folder given, or the demo set, drawn into the cache the first time;
- `open_dataset`: its scan (headers only; a `ConfigError` when it is no dataset folder);
- `trainable_problem`: why a scan cannot be trained on at all (its errors; none when it can);
- `exclusions_of_kinds`: the files of some kinds of problem left out, refused when that would
  leave a class or the test set empty;
- `left_out_problem` and `trained_scan`: the dataset less the files left out must still have
  every class in training and a test set, and at least one full training batch.

None of the front ends scans, draws the demo set or checks a batch itself
(tests/core/compare/test_inputs.py greps for it)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from xlagui.core.data import demo
from xlagui.core.data.exclusions import Exclusions, empty_after
from xlagui.core.data.scan import DatasetError, DatasetScan, Problem, scan_dataset
from xlagui.core.protocol.config import ConfigError, RunConfig, check_batch_fits
from xlagui.core.protocol.identity import Split

if TYPE_CHECKING:
    from xlagui.core.protocol.task import TaskState

Folder = str | os.PathLike[str]


def dataset_folder(folder: Folder | None) -> tuple[Path, bool]:
    """The folder a comparison reads, and whether it is the demo set: `folder` as given, or
    (None) the demo set, drawn into the cache once and reused after (a few seconds the first
    time: a front end says so while it waits)."""
    if folder is not None:
        return Path(folder), False
    return demo.ensure_demo_dataset(seed=0), True


def open_dataset(folder: Folder, *, holdout_percent: int, seed: int,
                 state: TaskState | None = None) -> DatasetScan:
    """The scan of `folder` (headers only, nothing written), its test files drawn with
    `holdout_percent` and `seed` when it has no test folder. `ConfigError`, with the scan's
    own words, when `folder` is no dataset folder; a problem inside it is in the scan."""
    try:
        return scan_dataset(folder, holdout_percent=holdout_percent, seed=seed, state=state)
    except DatasetError as exc:
        raise ConfigError(str(exc)) from None


def trainable_problem(scan: DatasetScan) -> list[Problem]:
    """Why `scan` cannot be trained on: its errors (`xlagui.present.scan_problems` words them);
    none when it can."""
    return [] if scan.ok else list(scan.errors)


def exclusions_of_kinds(scan: DatasetScan, kinds: Iterable[str]) -> Exclusions:
    """Every file of `scan` with a problem of one of `kinds` (problem kinds or the command
    line's words), left out. `ConfigError` when that would leave a class or the test set
    empty."""
    exclusions = Exclusions.of_kinds(scan, kinds)
    why = left_out_problem(scan, exclusions)
    if why:
        raise ConfigError(f"{why}; exclude fewer kinds of problem")
    return exclusions


def left_out_problem(scan: DatasetScan, exclusions: Exclusions | None) -> str:
    """Why `scan` less the files `exclusions` leave out cannot be trained on (a class or the
    test set left empty), in words; "" when it can, or when nothing is left out."""
    if not exclusions:
        return ""
    return empty_after(exclusions.apply(scan))


def trained_scan(scan: DatasetScan, exclusions: Exclusions | None, config: RunConfig
                 ) -> DatasetScan:
    """What the comparison trains and validates on: `scan` less the files `exclusions` leave
    out. `ConfigError` when leaving them out empties a class or the test set (what
    `empty_after` says), or when the training set is smaller than one batch."""
    chosen = exclusions or Exclusions()
    why = left_out_problem(scan, chosen)
    if why:
        raise ConfigError(f"the files left out: {why}; leave fewer out")
    trained = chosen.apply(scan)
    check_batch_fits(config.batch_size, len(trained.files_for(Split.TRAIN)))
    return trained
