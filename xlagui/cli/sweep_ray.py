"""`xlagui sweep --ray ADDRESS`: the sweep's cells as tasks on a Ray cluster
(`xlagui.core.sweep.cluster`), each on a whole node; `--remote-data` is then the dataset's path
on every node (else the dataset travels through Ray's object store).

The parser's options (`add_ray_arguments`) and the executor they ask for (`ray_executor`, None
without `--ray`), connected before the sweep starts so that a cluster out of reach, or Ray not
installed, is said at once.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from xlagui.core.protocol.config import ConfigError

if TYPE_CHECKING:  # the parser imports this module; the sweep's rooms only when one runs
    from xlagui.core.sweep.runner import CellExecutor


def add_ray_arguments(w: argparse.ArgumentParser) -> None:
    w.add_argument(
        "--ray", metavar="ADDRESS", default="",
        help="run the cells on a Ray cluster (HOST:PORT, ray://HOST:PORT, or auto: the cluster "
        "this machine belongs to), each cell on a whole node; needs pip install 'xlagui[ray]'; "
        "with --remote-data, the dataset's path on every node (else it is sent through Ray's "
        "object store) (default: no cluster, the cells run here or on --host)")


def ray_executor(args: argparse.Namespace) -> CellExecutor | None:
    """The cluster's executor of `--ray`, connected (ConfigError, in words, when it cannot be);
    None without `--ray`."""
    address = getattr(args, "ray", "")
    if not address:
        return None
    if getattr(args, "host", ""):
        raise ConfigError("--ray and --host are two ways to place cells: give one of them "
                          "(on a cluster, Ray chooses the nodes)")
    from xlagui.core.sweep.cluster import RayConnectError, RayExecutor, RayMissing, RayOptions
    from xlagui.present.sweep_cluster import ray_connect_text, ray_missing_text

    executor = RayExecutor(RayOptions(address=address, remote_data=args.remote_data))
    try:
        executor.connect()
    except RayMissing:
        raise ConfigError(ray_missing_text()) from None
    except RayConnectError as exc:
        raise ConfigError(ray_connect_text(exc)) from None
    return executor
