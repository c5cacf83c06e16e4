"""Ray, when it is installed: an optional dependency (`pip install 'xlagui[ray]'`), imported only
when a sweep runs on a cluster, so xlagui without it starts and sweeps here as before."""

from __future__ import annotations

import importlib
import types


class RayMissing(Exception):
    """Ray is not installed here: a sweep cannot run on a cluster (`present/` words how to get
    it)."""


def import_ray() -> types.ModuleType:
    """The `ray` module, or `RayMissing`. Typed as a plain module: Ray's own annotations are
    partial, and what this package calls of it is checked by the tests against a real head."""
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayMissing() from None
