"""Look at an image folder before training on it: layout, classes, sizes, colour modes, problems.

`scan_dataset` reads file headers only (never pixels), so it is quick enough to run whenever a
folder is chosen, and it never writes anything. What it finds is a `DatasetScan`: the usable
files with their split and class, and a list of `Problem`s a person can act on. Anything odd in
the folder (a text file named `.jpg`, a cut-off download, a link that points nowhere, a file
deleted while we look) becomes a problem, never an exception; only a path that is not a folder
at all raises `DatasetError`.

Two layouts are understood:

- ``DIR/train/<class>/`` next to ``DIR/test/<class>/`` (or ``val/``, ``validation/``): "split".
- ``DIR/<class>/`` (or a ``train/`` with no test folder): "auto-split". The scan holds out a
  seeded, stratified share of each class for testing, the same one every time for a given seed.

The modules, in the order a scan runs them: `walk` (folders), `probe` (headers, truncation),
`duplicates` (hashing), `split` (the auto-split), `classes` (checks on the classes as a whole);
`scanner` strings them together and `model` holds what they find and the text report.
"""

from xlagui.core.data.scan.model import (
    PROBLEM_KINDS,
    TEST,
    TRAIN,
    DatasetError,
    DatasetScan,
    ImageFile,
    Problem,
)
from xlagui.core.data.scan.probe import DEFAULT_PIXEL_LIMIT
from xlagui.core.data.scan.scanner import scan_dataset

__all__ = [
    "DEFAULT_PIXEL_LIMIT",
    "PROBLEM_KINDS",
    "TEST",
    "TRAIN",
    "DatasetError",
    "DatasetScan",
    "ImageFile",
    "Problem",
    "scan_dataset",
]
