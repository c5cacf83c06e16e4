"""Look at an image folder before training on it (see `model` for what is found and how)."""

from xlagui.core.scan.model import (
    PROBLEM_KINDS,
    DatasetError,
    DatasetScan,
    ImageFile,
    Problem,
    scan_dataset,
)

__all__ = ["PROBLEM_KINDS", "DatasetError", "DatasetScan", "ImageFile", "Problem", "scan_dataset"]
