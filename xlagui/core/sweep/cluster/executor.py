"""The sweep on a Ray cluster: `RayExecutor`, a `CellExecutor` whose cells are Ray tasks.

The sweep connects to the cluster (`ray.init(address)`, "auto" for the one this machine belongs
to) with this xlagui package as the job's `py_modules`, so nodes need TensorFlow and xlagui's
light dependencies but no copy of xlagui. The dataset reaches the nodes through Ray's object
store (one `ray.put` of its archive, unpacked once per node) or a path they share
(`--remote-data`); the demo set is drawn on each node. Each cell is one task pinned to one node
and asking for all of it (`dispatch`); its comparison folder comes back with its result into the
sweep folder here, so the sweep's files are the same as a local sweep's.

Ray is optional (`pip install 'xlagui[ray]'`): it is imported only when a sweep asks for a
cluster, and `RayMissing` says it is not installed (`present/` words how to get it).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import xlagui
from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellFailure, CellJob, CellResult, CellStatus
from xlagui.core.sweep.cluster.available import import_ray
from xlagui.core.sweep.cluster.data import DatasetSource, digest, pack_folder
from xlagui.core.sweep.cluster.dispatch import DispatchOptions, Node, NodeLost, dispatch
from xlagui.core.sweep.cluster.node import NodeOutcome, run_on_node, unpack_outcome
from xlagui.core.sweep.plan import Cell
from xlagui.core.sweep.runner import OnRound

_PROBE_SECONDS = 10.0  # a head's port that does not answer within this is out of reach

# What Ray raises from `ray.get` when the cell's node or its worker went away: rerun elsewhere.
_LOST = ("NodeDiedError", "WorkerCrashedError", "TaskUnschedulableError", "ObjectLostError",
         "OwnerDiedError", "LocalRayletDiedError", "ActorUnschedulableError")


class RayRefusal(StrEnum):
    """Why a cluster could not be joined: nothing answered, or its head answered and refused."""

    UNREACHABLE = "unreachable"  # nothing listens there, or Ray gave up reaching it
    TOKEN = "token"  # the cluster uses token authentication and this machine has no token for it


class RayConnectError(Exception):
    """The cluster at `address` could not be reached; `detail` is what Ray said, `refusal` why."""

    def __init__(self, address: str, detail: str,
                 refusal: RayRefusal = RayRefusal.UNREACHABLE) -> None:
        super().__init__(f"{address}: {detail}")
        self.address, self.detail, self.refusal = address, detail, refusal


@dataclass(frozen=True)
class RayOptions:
    """How a sweep uses a cluster: its `address` ("auto", "HOST:PORT", "ray://HOST:PORT"),
    `remote_data` (the dataset's path on every node; "" sends it through the object store),
    and how cells are dispatched."""

    address: str = "auto"
    remote_data: str = ""
    dispatch: DispatchOptions = field(default_factory=DispatchOptions)


class RayExecutor:
    """Runs a sweep's cells on a Ray cluster, one whole node each, streaming their results
    back as they end (`CellExecutor`)."""

    def __init__(self, options: RayOptions | None = None) -> None:
        self.options = options or RayOptions()
        self._owned = False

    def connect(self) -> None:
        """Connect now (`RayMissing`, `RayConnectError`), so a command can say a cluster out of
        reach before it starts; `run` connects itself otherwise, and disconnects at its end."""
        ray = import_ray()
        self._owned = connect(ray, self.options.address) or self._owned

    def run(self, cells: Sequence[Cell], job: CellJob, state: TaskState,
            on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
            on_round: OnRound | None = None) -> None:
        """`on_round` is never called: a node's rounds are not watched from here (a cell's
        progress is its start and its end)."""
        self.connect()
        ray = import_ray()
        try:
            if cells:
                cluster = RayCluster(ray, job, self._dataset(ray, job))
                dispatch(cells, cluster, state, on_started, on_done, self.options.dispatch)
        finally:
            if self._owned:
                ray.shutdown()
                self._owned = False

    def _dataset(self, ray: Any, job: CellJob) -> DatasetSource:
        if self.options.remote_data:
            return DatasetSource(shared=self.options.remote_data)
        if job.demo and not job.dataset:
            return DatasetSource()
        archive = pack_folder(job.dataset)
        return DatasetSource(archive=ray.put(archive), digest=digest(archive))


def connect(ray: Any, address: str) -> bool:
    """Connect this process to the cluster with xlagui as the job's `py_modules`; False when
    it was connected already (then the caller's connection, and its runtime_env, are used)."""
    if ray.is_initialized():
        return False
    _reachable(address)
    runtime_env = {"py_modules": [xlagui], "excludes": ["__pycache__", "*.pyc"]}
    # Ray 2.52+ token authentication: the head wants a token this process does not have
    # (RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token). Older Rays have no such error.
    wants_token = getattr(ray.exceptions, "AuthenticationError", ())
    try:
        ray.init(address=address, runtime_env=runtime_env, log_to_driver=False,
                 logging_level="WARNING", configure_logging=True, **_loopback_node(address))
    except wants_token as exc:
        raise RayConnectError(address, str(exc), RayRefusal.TOKEN) from None
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayConnectError(address, str(exc)) from None
    return True


def _loopback_node(address: str) -> dict[str, str]:
    """A head reached at a loopback address (127.0.0.0/8) is on this machine: this process joins
    it as that address too. Ray would otherwise take the machine's network address for this
    process's node, and look for the head's processes there: a head started with
    `--node-ip-address=127.0.0.2` is not found, and on a machine whose network address refuses
    connections, nothing is. (Ray itself rewrites 127.0.0.1 and localhost to the network
    address, so for them this changes nothing.)"""
    host = address.rpartition(":")[0].strip("[]")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        return {}
    return {"_node_ip_address": host} if loopback else {}


def _reachable(address: str, timeout: float = _PROBE_SECONDS) -> None:
    """A HOST:PORT with nothing listening: said at once (Ray itself retries its head for
    minutes, printing warnings). "auto" and "ray://" addresses are left to Ray."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or "://" in address or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayConnectError(address, exc.strerror or str(exc)) from None


class RayCluster:
    """`dispatch.Cluster` on Ray: alive nodes from `ray.nodes()`, a cell as a task pinned to
    its node (hard node affinity) asking for all the node's CPUs and one of its GPUs."""

    def __init__(self, ray: Any, job: CellJob, data: DatasetSource) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self._ray, self._job, self._data = ray, job, data
        self._affinity = NodeAffinitySchedulingStrategy
        # Ray retries a task whose worker died on its own; the dispatch reruns it instead, on
        # another node and on the record (`attempts`, `lost_nodes`).
        self._task = ray.remote(max_retries=0, retry_exceptions=False)(run_on_node)
        self._keys: dict[Hashable, str] = {}

    def nodes(self) -> list[Node]:
        return [Node(node_id=n["NodeID"], name=_node_name(n),
                     cpus=float(n.get("Resources", {}).get("CPU", 0.0)),
                     gpus=float(n.get("Resources", {}).get("GPU", 0.0)))
                for n in self._ray.nodes() if n.get("Alive")]

    def submit(self, cell: Cell, node: Node) -> Hashable:
        ref = self._task.options(
            num_cpus=node.cpus, num_gpus=1 if node.gpus >= 1 else 0,
            scheduling_strategy=self._affinity(node_id=node.node_id, soft=False),
            name=f"xlagui-cell-{cell.key}",
        ).remote(cell, self._job, self._data)
        self._keys[ref] = cell.key
        return ref  # type: ignore[no-any-return]

    def wait(self, handles: list[Hashable], timeout: float) -> list[Hashable]:
        ready, _ = self._ray.wait(handles, num_returns=1, timeout=timeout)
        return list(ready)

    def outcome(self, handle: Hashable) -> CellResult:
        key = self._keys.pop(handle, "")
        try:
            outcome: NodeOutcome = self._ray.get(handle)
        except Exception as exc:
            return _raised(key, exc)
        return unpack_outcome(outcome, Path(self._job.folder))

    def cancel(self, handle: Hashable, force: bool) -> None:
        self._ray.cancel(handle, force=force)


def _raised(key: str, exc: Exception) -> CellResult:
    """A task that did not return: its node lost (`NodeLost`, rerun), stopped, or failed."""
    kinds = {k.__name__ for k in type(exc).__mro__}
    if kinds & set(_LOST):
        raise NodeLost(type(exc).__name__) from exc
    if "TaskCancelledError" in kinds:
        return CellResult(key=key, status=CellStatus.INTERRUPTED)
    if "OutOfMemoryError" in kinds:
        return CellResult(key=key, status=CellStatus.FAILED,
                          failure=CellFailure.NODE_OUT_OF_MEMORY)
    # A task that raised (run_cell never does for a cell: a bug, or the node could not import
    # what the task needs): Ray's wrapper names the task; what the row says is the cause.
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        exc = cause  # type: ignore[assignment]
    return CellResult(key=key, status=CellStatus.FAILED, failure=CellFailure.CRASH,
                      reason=f"{type(exc).__name__}: {exc}")


def _node_name(node: dict[str, Any]) -> str:
    return str(node.get("NodeManagerHostname") or node.get("NodeManagerAddress") or
               node.get("NodeID", ""))
