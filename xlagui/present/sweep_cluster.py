"""A sweep on a Ray cluster, in words: Ray missing (how to get it), a cluster out of reach. A
cell's failure and a rerun after a lost node are worded with every cell's (`present/sweep.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xlagui.core.sweep.cluster import RayConnectError

RAY_INSTALL = "pip install 'xlagui[ray]'"


def ray_missing_text() -> str:
    """`--ray` (or the window's cluster choice) without Ray installed."""
    return (
        "Running a sweep on a Ray cluster needs Ray, which is not installed here. Install it "
        f"with: {RAY_INSTALL}"
    )


def ray_connect_text(error: RayConnectError) -> str:
    return (
        f"Could not connect to the Ray cluster at {error.address}: {error.detail}. Check the "
        "address (`ray status` on the cluster's head prints it; `auto` finds the cluster this "
        "machine belongs to)."
    )
