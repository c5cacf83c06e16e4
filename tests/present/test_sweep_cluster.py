"""A sweep on a cluster in words: the cluster executor's reasons and a rerun cell's note."""

from __future__ import annotations

from xlagui.core.sweep.cell import CellResult, CellStatus
from xlagui.core.sweep.cluster import NO_NODE, NODES_LOST, OUT_OF_MEMORY
from xlagui.present.sweep_cluster import cluster_reason_text, ray_missing_text, rerun_note


def test_the_reasons_in_words() -> None:
    lost = CellResult(key="b16", status=CellStatus.FAILED, reason=NODES_LOST, attempts=3,
                      lost_nodes=["n1", "n2", "n3"])
    assert cluster_reason_text(lost) == "its node was lost at each of 3 starts (n1, n2, n3)"
    assert "no node" in cluster_reason_text(
        CellResult(key="k", status=CellStatus.FAILED, reason=NO_NODE))
    assert "out of memory" in cluster_reason_text(
        CellResult(key="k", status=CellStatus.FAILED, reason=OUT_OF_MEMORY))
    other = CellResult(key="k", status=CellStatus.FAILED, reason="batch 500 is too large")
    assert cluster_reason_text(other) == "batch 500 is too large"


def test_a_rerun_cell_says_so_and_a_first_run_says_nothing() -> None:
    rerun = CellResult(key="k", status=CellStatus.DONE, node="n2", attempts=2, lost_nodes=["n1"])
    assert rerun_note(rerun) == "rerun on n2 after losing its node once (n1)"
    assert rerun_note(CellResult(key="k", status=CellStatus.DONE, node="n1")) == ""


def test_the_install_line_is_the_extra() -> None:
    assert "pip install 'xlagui[ray]'" in ray_missing_text()
