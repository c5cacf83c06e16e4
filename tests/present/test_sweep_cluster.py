"""A sweep on a cluster in words: Ray missing, a cluster out of reach, and a cell the cluster
failed or reran, worded with every cell's."""

from __future__ import annotations

from xlagui.core.sweep.cell import CellFailure, CellResult, CellStatus
from xlagui.core.sweep.cluster import RayConnectError
from xlagui.present.sweep import reason_words
from xlagui.present.sweep_cluster import ray_connect_text, ray_missing_text


def test_ray_missing_names_the_extra() -> None:
    assert "pip install 'xlagui[ray]'" in ray_missing_text()


def test_a_cluster_out_of_reach_names_its_address_and_what_ray_said() -> None:
    text = ray_connect_text(RayConnectError("10.0.0.9:6379", "timed out"))
    assert "10.0.0.9:6379: timed out" in text


def test_the_cluster_s_failures_read_as_every_cell_s() -> None:
    lost = CellResult(key="b16", status=CellStatus.FAILED, failure=CellFailure.NODE_LOST,
                      reason="NodeDiedError on n1; NodeDiedError on n2", attempts=2,
                      lost_nodes=["n1", "n2"])
    assert reason_words(lost) == ("its node was lost every time it ran: NodeDiedError on n1; "
                                  "NodeDiedError on n2")
    nodeless = CellResult(key="b16", status=CellStatus.FAILED, failure=CellFailure.NO_NODE)
    assert reason_words(nodeless) == "the host could not take it: no node of the cluster has CPUs"
    # Ray's memory monitor, as it was said when the sentence was core's.
    starved = CellResult(key="b16", status=CellStatus.FAILED,
                         failure=CellFailure.NODE_OUT_OF_MEMORY)
    assert reason_words(starved) == ("a worker failed: Ray's memory monitor ended the cell's "
                                     "task: its node ran out of memory")


def test_a_cell_s_refusal_is_said_in_the_front_end_s_words() -> None:
    """A machine that could not take a cell is said as `present.hosts` says it (not the
    error's kind and facts); a model file's refusal as `present.model_files` does."""
    from pathlib import Path

    from xlagui.core.measure.transports import MachineError, MachineFailure
    from xlagui.core.model.check import ModelRefused
    from xlagui.core.model.files import ModelFileError, ModelFileProblem
    from xlagui.core.protocol.events import ErrorEvent
    from xlagui.present.sweep import CELL_WORDS

    lost = MachineError(MachineFailure.NO_CLIENT, client="ssh")
    assert CELL_WORDS.refusal(lost) == "no ssh command on this computer"
    bad = ModelFileError(ModelFileProblem.NO_BUILDER, Path("/m/net.py"))
    event = ErrorEvent(message=str(bad), kind="model_file", facts=bad.event_facts)
    assert CELL_WORDS.refusal(ModelRefused(str(bad), event)) == (
        "/m/net.py: it defines no build_model(input_shape, num_classes) function")
    assert CELL_WORDS.refusal(ValueError("batch 64 is larger than 25 images")) == (
        "batch 64 is larger than 25 images")
