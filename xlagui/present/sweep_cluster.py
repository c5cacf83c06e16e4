"""A sweep on a Ray cluster, in words: Ray missing, a cluster out of reach, the reasons the cluster
executor fails a cell with, and a row's note for a cell whose node was lost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.sweep.cluster import NO_NODE, NODES_LOST, OUT_OF_MEMORY

if TYPE_CHECKING:
    from xlagui.core.sweep.cell import CellResult
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


def cluster_reason_text(result: CellResult) -> str:
    """A cell's reason when the cluster executor gave it, in words; any other reason as it is."""
    lost = ", ".join(result.lost_nodes)
    if result.reason == NODES_LOST:
        return f"its node was lost at each of {result.attempts} starts ({lost})"
    if result.reason == NO_NODE:
        return "the cluster had no node with CPUs to run it on"
    if result.reason == OUT_OF_MEMORY:
        return "Ray stopped it: its node ran out of memory"
    return result.reason


def rerun_note(result: CellResult) -> str:
    """A row's note for a cell that was started again after losing its node ("" otherwise)."""
    if not result.lost_nodes or result.reason == NODES_LOST:
        return ""
    nodes = ", ".join(result.lost_nodes)
    runs = "once" if len(result.lost_nodes) == 1 else f"{len(result.lost_nodes)} times"
    return f"rerun on {result.node} after losing its node {runs} ({nodes})"
