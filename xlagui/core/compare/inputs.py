"""A comparison's inputs, checked once, where every front end's request comes in
(`workflow.run`): the dataset less the files the user left out must still have every class in
training and a test set, and at least one full training batch. The CLI, the window and a
sweep's cells hand the scan, the exclusions and the settings over; none checks them itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.data.exclusions import Exclusions, empty_after
from xlagui.core.protocol.config import ConfigError, RunConfig, check_batch_fits
from xlagui.core.protocol.identity import Split

if TYPE_CHECKING:
    from xlagui.core.data.scan import DatasetScan


def trained_scan(scan: DatasetScan, exclusions: Exclusions | None, config: RunConfig
                 ) -> DatasetScan:
    """What the comparison trains and validates on: `scan` less the files `exclusions` leave
    out. `ConfigError` when leaving them out empties a class or the test set (what
    `empty_after` says), or when the training set is smaller than one batch."""
    chosen = exclusions or Exclusions()
    trained = chosen.apply(scan)
    why = empty_after(trained) if len(chosen) else ""
    if why:
        raise ConfigError(f"the files left out: {why}; leave fewer out")
    check_batch_fits(config.batch_size, len(trained.files_for(Split.TRAIN)))
    return trained
