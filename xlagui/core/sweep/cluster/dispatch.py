"""Which cell runs on which node, and what happens when a node is lost: the cluster executor's
logic, apart from Ray itself (`cluster.ray_nodes` binds it to Ray; the tests to a fake cluster).

A cell gets a whole node: it is sent to one node that runs nothing else of the sweep, asking
for all that node's CPUs (and one GPU when it has any), so both arms of the cell share that node
and the scheduler places nothing else there. Results stream back as cells finish. A cell whose
node was lost (the node died, the worker running it crashed) is queued again for another node,
up to `max_attempts` starts, and its result names the lost nodes (`CellFailure.NODE_LOST` when
every start lost one: a resume tries it again). A stop cancels the cells in
progress (a polite cancel first, then a forced one after `grace_seconds`): each is reported
`interrupted`; cells that never started are not reported at all.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellFailure, CellResult, CellStatus
from xlagui.core.sweep.plan import Cell

# The facts of a cell that found no node (`CellFailure.MACHINE`: resume tries it again).
NO_NODE = "no node of the cluster has CPUs"


@dataclass(frozen=True)
class Node:
    """One machine of the cluster: Ray's id for it, the name a row shows, and what it has."""

    node_id: str
    name: str
    cpus: float
    gpus: float = 0.0


class NodeLost(Exception):
    """A cell's node (or the worker process running the cell there) went away before the cell
    ended; `kind` is what the cluster said (Ray's exception's name)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Cluster(Protocol):
    """What the dispatch needs of a cluster. A handle is whatever `submit` returns."""

    def nodes(self) -> list[Node]:
        """The nodes alive now that can run a cell."""

    def submit(self, cell: Cell, node: Node) -> Hashable:
        """Start `cell` on the whole of `node`."""

    def wait(self, handles: list[Hashable], timeout: float) -> list[Hashable]:
        """The handles among `handles` whose cell ended, waiting up to `timeout` for one."""

    def outcome(self, handle: Hashable) -> CellResult:
        """How the cell of an ended handle went; raises `NodeLost`."""

    def cancel(self, handle: Hashable, force: bool) -> None:
        """Stop a cell: politely (it ends its workers), or at once (`force`)."""


@dataclass
class _Pending:
    cell: Cell
    attempts: int = 0
    lost: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)  # what the cluster said, each time
    node: Node | None = None
    started: float = 0.0


@dataclass(frozen=True)
class DispatchOptions:
    """`max_attempts`: starts of a cell before it fails as `CellFailure.NODE_LOST`;
    `grace_seconds`: how long a stopped cell may take to end its workers before it is ended
    at once; `poll_seconds`: how often nodes and a stop are looked at; `no_node_seconds`: how
    long cells wait for a node to appear (an autoscaling cluster adds them) before they fail
    for want of a machine."""

    max_attempts: int = 3
    grace_seconds: float = 30.0
    poll_seconds: float = 1.0
    no_node_seconds: float = 600.0


def dispatch(cells: Sequence[Cell], cluster: Cluster, state: TaskState,
             on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
             options: DispatchOptions | None = None) -> None:
    """Run every cell of `cells` on `cluster`, one per node at a time, telling `on_started`
    when a cell is sent to a node and `on_done` as each ends (in the order they end)."""
    opts = options or DispatchOptions()
    queue = collections.deque(_Pending(c) for c in cells)
    running: dict[Hashable, _Pending] = {}
    nodeless_since: float | None = None
    while queue or running:
        if state.is_interruption_requested():
            _stop(cluster, running, on_done, opts)
            return
        _place(cluster, queue, running, on_started)
        if not running:
            nodeless_since = nodeless_since or time.monotonic()
            if time.monotonic() - nodeless_since >= opts.no_node_seconds:
                for p in queue:
                    on_done(_failed(p, CellFailure.MACHINE, NO_NODE))
                return
            state.wait_interruption(opts.poll_seconds)
            continue
        nodeless_since = None
        for handle in cluster.wait(list(running), opts.poll_seconds):
            _ended(cluster, handle, running.pop(handle), queue, on_done, opts)


def _place(cluster: Cluster, queue: collections.deque[_Pending],
           running: dict[Hashable, _Pending], on_started: Callable[[Cell], None]) -> None:
    """Send queued cells to the nodes running none of them; a rerun prefers a node it has not
    lost yet (a lost node normally no longer appears at all)."""
    if not queue:
        return
    busy = {p.node.node_id for p in running.values() if p.node is not None}
    free = [n for n in cluster.nodes() if n.node_id not in busy and n.cpus > 0]
    while queue and free:
        pending = queue.popleft()
        fresh = [n for n in free if n.name not in pending.lost] or free
        node = fresh[0]
        free.remove(node)
        pending.node, pending.attempts = node, pending.attempts + 1
        pending.started = time.monotonic()
        running[cluster.submit(pending.cell, node)] = pending
        on_started(pending.cell)


def _ended(cluster: Cluster, handle: Hashable, pending: _Pending,
           queue: collections.deque[_Pending], on_done: Callable[[CellResult], None],
           opts: DispatchOptions) -> None:
    node = pending.node.name if pending.node is not None else ""
    try:
        result = cluster.outcome(handle)
    except NodeLost as lost:
        pending.lost.append(node)
        pending.kinds.append(f"{lost.kind} on {node}")
        if pending.attempts >= opts.max_attempts:
            on_done(_failed(pending, CellFailure.NODE_LOST, "; ".join(pending.kinds)))
        else:
            queue.appendleft(pending)  # first in line for the next free node
        return
    result.attempts, result.lost_nodes = pending.attempts, list(pending.lost)
    result.node = result.node or node
    on_done(result)


def _stop(cluster: Cluster, running: dict[Hashable, _Pending],
          on_done: Callable[[CellResult], None], opts: DispatchOptions) -> None:
    """Cancel every cell in progress: politely, then at once for those not ended after the
    grace period; each is `interrupted` (whatever it had measured is not kept)."""
    for handle in running:
        cluster.cancel(handle, force=False)
    deadline = time.monotonic() + opts.grace_seconds
    left = list(running)
    while left and time.monotonic() < deadline:
        ended = cluster.wait(left, min(opts.poll_seconds, deadline - time.monotonic()))
        left = [h for h in left if h not in ended]
    for handle in left:
        cluster.cancel(handle, force=True)
    for pending in running.values():
        result = _failed(pending, CellFailure.CRASH, "")
        result.status, result.failure = CellStatus.INTERRUPTED, ""
        on_done(result)


def _failed(pending: _Pending, failure: CellFailure, reason: str) -> CellResult:
    return CellResult(
        key=pending.cell.key, status=CellStatus.FAILED, failure=failure, reason=reason,
        node=pending.node.name if pending.node is not None else "",
        attempts=pending.attempts, lost_nodes=list(pending.lost),
        wall_seconds=time.monotonic() - pending.started if pending.started else 0.0,
    )
