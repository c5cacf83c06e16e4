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


_TOKEN_HOW = (
    "Give this machine the cluster's token: `ray get-auth-token` on the cluster's head prints "
    "it; set RAY_AUTH_TOKEN to it (or RAY_AUTH_TOKEN_PATH to a file holding it, or copy it to "
    "~/.ray/auth_token) and RAY_AUTH_MODE=token, then run the sweep again."
)


def ray_connect_text(error: RayConnectError) -> str:
    from xlagui.core.sweep.cluster import RayRefusal

    if error.refusal is RayRefusal.TOKEN:
        return (
            f"The Ray cluster at {error.address} refused this machine for want of its "
            f"authentication token ({error.detail}). {_TOKEN_HOW}"
        )
    return (
        f"Could not connect to the Ray cluster at {error.address}: {error.detail}. Check the "
        "address (`ray status` on the cluster's head prints it; `auto` finds the cluster this "
        "machine belongs to). If its head answers but refuses (its log says \"Authentication "
        "token is missing or incorrect\"), the cluster uses token authentication: set "
        "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN to its token (`ray get-auth-token` on the head)."
    )
