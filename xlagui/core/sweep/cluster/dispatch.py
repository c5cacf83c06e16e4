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
    lost: list[str] = field(default_factory=list)  # the lost nodes' names, for the row
    lost_ids: set[str] = field(default_factory=set)
    kinds: list[str] = field(default_factory=list)  # what the cluster said, each time
    node: Node | None = None
    started: float = 0.0


@dataclass(frozen=True)
class DispatchOptions:
    """`max_attempts`: starts of a cell before it fails as `CellFailure.NODE_LOST`;
    `grace_seconds`: how long a stopped cell may take to end its workers before it is ended
    at once; `poll_seconds`: how often nodes and a stop are looked at; `no_node_seconds`: how
    long cells wait for a node to appear (an autoscaling cluster adds them) before they fail
    for want of a machine; `suspect_seconds`: how long a node that lost a cell is the last
    choice (Ray may list a dead node as alive until its health check fails)."""

    max_attempts: int = 3
    grace_seconds: float = 30.0
    poll_seconds: float = 1.0
    no_node_seconds: float = 600.0
    suspect_seconds: float = 120.0


def dispatch(cells: Sequence[Cell], cluster: Cluster, state: TaskState,
             on_started: Callable[[Cell], None], on_done: Callable[[CellResult], None],
             options: DispatchOptions | None = None) -> None:
    """Run every cell of `cells` on `cluster`, one per node at a time, telling `on_started`
    when a cell is sent to a node and `on_done` as each ends (in the order they end)."""
    opts = options or DispatchOptions()
    run = _Dispatch(cluster, opts, on_started, on_done)
    run.queue.extend(_Pending(c) for c in cells)
    nodeless_since: float | None = None
    while run.queue or run.running:
        if state.is_interruption_requested():
            _stop(cluster, run.running, on_done, opts)
            return
        run.place()
        if not run.running:
            nodeless_since = nodeless_since or time.monotonic()
            if time.monotonic() - nodeless_since >= opts.no_node_seconds:
                for p in run.queue:
                    on_done(_failed(p, CellFailure.NO_NODE, ""))
                return
            state.wait_interruption(opts.poll_seconds)
            continue
        nodeless_since = None
        for handle in cluster.wait(list(run.running), opts.poll_seconds):
            run.ended(handle)


class _Dispatch:
    """The cells waiting and running, and the nodes lately lost: the cluster may list a dead
    node as alive for a while (its health check has not failed yet), so a node that lost a
    cell is the last choice for any cell for `suspect_seconds`."""

    def __init__(self, cluster: Cluster, opts: DispatchOptions,
                 on_started: Callable[[Cell], None],
                 on_done: Callable[[CellResult], None]) -> None:
        self.cluster, self.opts = cluster, opts
        self.on_started, self.on_done = on_started, on_done
        self.queue: collections.deque[_Pending] = collections.deque()
        self.running: dict[Hashable, _Pending] = {}
        self.suspect: dict[str, float] = {}  # node id -> when it lost a cell

    def place(self) -> None:
        """Send queued cells to the nodes running none of them, a node not lost by the cell
        first. A node lately lost is used only when every node is (one machine whose worker
        crashed is still the machine to run on); else its cells wait for a sound one."""
        if not self.queue:
            return
        nodes = [n for n in self.cluster.nodes() if n.cpus > 0]
        busy = {p.node.node_id for p in self.running.values() if p.node is not None}
        now = time.monotonic()
        suspect = {i for i, t in self.suspect.items() if now - t < self.opts.suspect_seconds}
        sound = [n for n in nodes if n.node_id not in suspect]
        free = [n for n in (sound or nodes) if n.node_id not in busy]
        while self.queue and free:
            pending = self.queue.popleft()
            node = min(free, key=lambda n: n.node_id in pending.lost_ids)
            free.remove(node)
            pending.node, pending.attempts = node, pending.attempts + 1
            pending.started = time.monotonic()
            self.running[self.cluster.submit(pending.cell, node)] = pending
            self.on_started(pending.cell)

    def ended(self, handle: Hashable) -> None:
        pending = self.running.pop(handle)
        node = pending.node or Node(node_id="", name="", cpus=0)
        try:
            result = self.cluster.outcome(handle)
        except NodeLost as lost:
            self.suspect[node.node_id] = time.monotonic()
            pending.lost.append(node.name)
            pending.lost_ids.add(node.node_id)
            pending.kinds.append(f"{lost.kind} on {node.name}")
            if pending.attempts >= self.opts.max_attempts:
                self.on_done(_failed(pending, CellFailure.NODE_LOST, "; ".join(pending.kinds)))
            else:
                self.queue.appendleft(pending)  # first in line for the next free node
            return
        result.attempts, result.lost_nodes = pending.attempts, list(pending.lost)
        result.node = result.node or node.name
        self.on_done(result)


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
