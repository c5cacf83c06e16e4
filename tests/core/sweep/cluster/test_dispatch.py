"""The cluster executor's dispatch against a fake cluster: one cell per node at a time, results as
cells end, a lost node's cell rerun elsewhere and said so, a stop cancelling what runs."""

from __future__ import annotations

from collections.abc import Hashable

import pytest

from xlagui.core.protocol.config import RunConfig
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CellFailure, CellResult, CellStatus
from xlagui.core.sweep.cluster.dispatch import (
    DispatchOptions,
    Node,
    NodeLost,
    dispatch,
)
from xlagui.core.sweep.plan import Axis, Cell, plan_sweep

FAST = DispatchOptions(max_attempts=3, grace_seconds=0.0, poll_seconds=0.0, no_node_seconds=0.0)


def _cells(n: int) -> tuple[Cell, ...]:
    sizes = tuple(str(16 * (i + 1)) for i in range(n))
    return plan_sweep(RunConfig(), [Axis("batch_size", sizes)], None).cells


class FakeCluster:
    """Nodes that end a cell at the next `wait`; `lose` maps a node's name to how many of the
    cells it is given it loses (it is then gone, as a dead node is)."""

    def __init__(self, nodes: list[Node], lose: dict[str, int] | None = None,
                 linger: bool = False) -> None:
        self.alive = list(nodes)
        self.lose = dict(lose or {})
        self.linger = linger  # a lost node stays listed, as Ray lists it until its health check
        self.running: dict[int, tuple[Cell, Node]] = {}
        self.submitted: list[tuple[str, str, float]] = []  # (cell, node, cpus asked)
        self.cancelled: list[tuple[str, bool]] = []
        self._next = 0

    def nodes(self) -> list[Node]:
        return list(self.alive)

    def submit(self, cell: Cell, node: Node) -> Hashable:
        assert all(n.node_id != node.node_id for _, n in self.running.values()), "node shared"
        self._next += 1
        self.running[self._next] = (cell, node)
        self.submitted.append((cell.key, node.name, node.cpus))
        return self._next

    def wait(self, handles: list[Hashable], timeout: float) -> list[Hashable]:
        return handles[:1]

    def outcome(self, handle: Hashable) -> CellResult:
        assert isinstance(handle, int)
        cell, node = self.running.pop(handle)
        if self.lose.get(node.name, 0) > 0:
            self.lose[node.name] -= 1
            if not self.linger:
                self.alive = [n for n in self.alive if n.name != node.name]
            raise NodeLost("NodeDiedError")
        return CellResult(key=cell.key, status=CellStatus.DONE, node=node.name)

    def cancel(self, handle: Hashable, force: bool) -> None:
        cell, _ = self.running[handle]  # type: ignore[index]
        self.cancelled.append((cell.key, force))


def _run(cells: tuple[Cell, ...], cluster: FakeCluster, state: TaskState | None = None,
         options: DispatchOptions = FAST) -> tuple[list[str], list[CellResult]]:
    started: list[str] = []
    done: list[CellResult] = []
    dispatch(cells, cluster, state or TaskState(), lambda c: started.append(c.key),
             done.append, options)
    return started, done


def test_every_cell_runs_once_on_a_whole_node() -> None:
    cells = _cells(4)
    cluster = FakeCluster([Node("a", "alpha", 8), Node("b", "beta", 4)])
    started, done = _run(cells, cluster)
    assert sorted(started) == sorted(c.key for c in cells)
    assert [r.status for r in done] == [CellStatus.DONE] * 4
    assert {(name, cpus) for _, name, cpus in cluster.submitted} == {("alpha", 8), ("beta", 4)}
    assert all(r.attempts == 1 and r.lost_nodes == [] for r in done)


def test_a_node_without_cpus_gets_no_cell() -> None:
    cluster = FakeCluster([Node("h", "head", 0), Node("w", "worker", 2)])
    _run(_cells(2), cluster)
    assert {name for _, name, _ in cluster.submitted} == {"worker"}


def test_a_lost_node_s_cell_is_rerun_elsewhere_and_says_so() -> None:
    cells = _cells(1)
    cluster = FakeCluster([Node("a", "alpha", 2), Node("b", "beta", 2)], lose={"alpha": 1})
    _, done = _run(cells, cluster)
    [result] = done
    assert result.status == CellStatus.DONE
    assert result.node == "beta"
    assert result.attempts == 2
    assert result.lost_nodes == ["alpha"]


def test_a_dead_node_still_listed_is_the_last_choice_of_every_cell() -> None:
    """alpha dies with the first cell but stays listed: the rerun and the next cells go to
    beta, one after the other, rather than to alpha."""
    cells = _cells(3)
    cluster = FakeCluster([Node("a", "alpha", 2), Node("b", "beta", 2)], lose={"alpha": 99},
                          linger=True)
    _, done = _run(cells, cluster)
    assert [r.status for r in done] == [CellStatus.DONE] * 3
    assert [name for _, name, _ in cluster.submitted].count("alpha") == 1
    lost = [r for r in done if r.lost_nodes]
    assert [(r.attempts, r.lost_nodes, r.node) for r in lost] == [(2, ["alpha"], "beta")]


def test_a_cell_that_loses_every_node_fails_with_the_lost_nodes() -> None:
    nodes = [Node(i, f"n{i}", 2) for i in "abc"]
    cluster = FakeCluster(nodes, lose={"na": 1, "nb": 1, "nc": 1})
    _, done = _run(_cells(1), cluster)
    [result] = done
    assert result.status == CellStatus.FAILED
    assert result.failure == CellFailure.NODE_LOST
    assert result.reason == "NodeDiedError on na; NodeDiedError on nb; NodeDiedError on nc"
    assert result.attempts == 3
    assert result.lost_nodes == ["na", "nb", "nc"]


def test_cells_fail_when_no_node_ever_appears() -> None:
    _, done = _run(_cells(2), FakeCluster([]))
    assert [(r.status, r.failure, r.reason) for r in done] == [
        (CellStatus.FAILED, CellFailure.NO_NODE, "")] * 2


def test_a_stop_cancels_the_running_cells_and_starts_no_other() -> None:
    state = TaskState()

    class Stopping(FakeCluster):
        def wait(self, handles: list[Hashable], timeout: float) -> list[Hashable]:
            state.request_interruption()
            return []  # nothing ends before the stop; nor within the grace period

    cluster = Stopping([Node("a", "alpha", 2)])
    started, done = _run(_cells(3), cluster, state)
    assert len(started) == 1
    assert [(r.status, r.failure) for r in done] == [(CellStatus.INTERRUPTED, "")]
    assert cluster.cancelled == [(started[0], False), (started[0], True)]


@pytest.mark.parametrize("attempts", [1, 2])
def test_max_attempts_bounds_the_reruns(attempts: int) -> None:
    cluster = FakeCluster([Node(i, f"n{i}", 2) for i in "abc"], lose={"na": 1, "nb": 1})
    options = DispatchOptions(max_attempts=attempts, grace_seconds=0, poll_seconds=0,
                              no_node_seconds=0)
    _, [result] = _run(_cells(1), cluster, options=options)
    assert result.status == CellStatus.FAILED and result.attempts == attempts
