"""What runs on a cluster's node for one cell: the Ray task's body.

Ray imports this module on the node from the package the sweep sent with its `runtime_env`
(`py_modules`), so a cluster with TensorFlow installed runs it unchanged; the measuring workers
the cell starts find the same package through the `PYTHONPATH` Ray sets for the task.

The cell runs exactly as it does on a single machine (`run_cell`, in fresh workers), writing its
comparison into a folder of the node's own; that folder comes back as an archive with the
result, and the node keeps nothing but its cache of unpacked datasets. A polite cancel arrives as
a `KeyboardInterrupt` in the task's thread: the cell is then asked to stop through its
`TaskState` and given the workers' stop ladder to end them, so no worker outlives the task.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import xlagui
from xlagui.core.machine.environment import host_environment
from xlagui.core.protocol.task import TaskState
from xlagui.core.sweep.cell import CELLS, CellJob, CellResult, CellStatus, run_cell
from xlagui.core.sweep.cluster.available import import_ray
from xlagui.core.sweep.cluster.data import DatasetSource, pack_folder, unpack_folder
from xlagui.core.sweep.plan import Cell

CACHE_NAME = "xlagui-ray-datasets"  # under the node's temporary folder
_STOP_GRACE_SECONDS = 60.0  # a cell's workers end within the stop ladder's seconds; then give up


@dataclass
class NodeOutcome:
    """What a node sends back for a cell: its result and its comparison folder's archive
    (empty when the cell wrote none)."""

    result: CellResult
    files: bytes = b""


def run_on_node(cell: Cell, job: CellJob, data: DatasetSource) -> NodeOutcome:
    """Run `cell` here, on the node Ray placed it on: the Ray task's body."""
    ray = import_ray()
    dataset = data.on_node(Path(tempfile.gettempdir()) / CACHE_NAME, ray.get)
    with tempfile.TemporaryDirectory(prefix="xlagui-cell-") as work:
        here = dataclasses.replace(job, dataset=dataset or job.dataset, folder=Path(work))
        result = _run_stoppable(cell, here)
        result.environment = {**(result.environment or host_environment()),
                              "ray": node_facts()}
        folder = Path(work) / CELLS / cell.key
        files = pack_folder(folder) if folder.is_dir() else b""
    return NodeOutcome(result=result, files=files)


def _run_stoppable(cell: Cell, job: CellJob) -> CellResult:
    """`run_cell` in a thread of its own, so that the `KeyboardInterrupt` of Ray's polite
    cancel lands here, in the waiting thread, and becomes a stop the cell obeys."""
    state = TaskState()
    box: list[CellResult] = []
    thread = threading.Thread(target=lambda: box.append(run_cell(cell, job, state)),
                              name=f"xlagui-cell-{cell.key}", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        state.request_interruption()
        thread.join(_STOP_GRACE_SECONDS)
    if box:
        return box[0]
    return CellResult(key=cell.key, status=CellStatus.INTERRUPTED)


def node_facts() -> dict[str, Any]:
    """What Ray knows of the node this runs on and of what the task was given there: recorded
    per cell, beside the machine's own environment, so that cells are compared only within
    one machine."""
    ray = import_ray()
    context = ray.get_runtime_context()
    facts: dict[str, Any] = {"node_id": context.get_node_id(),
                             "node_ip": ray.util.get_node_ip_address(),
                             "resources": context.get_assigned_resources(),
                             # where the node imported xlagui from: the job's py_modules
                             "package": str(Path(xlagui.__file__).parent)}
    gpus = os.environ.get("CUDA_VISIBLE_DEVICES")
    if gpus is not None:
        facts["gpus"] = gpus
    return facts


def unpack_outcome(outcome: NodeOutcome, sweep_folder: Path) -> CellResult:
    """The node's result, its comparison folder unpacked into `sweep_folder/cells/<key>` here."""
    result = outcome.result
    if outcome.files:
        unpack_folder(outcome.files, sweep_folder / CELLS / result.key)
        result.comparison_dir = f"{CELLS}/{result.key}"
    else:
        result.comparison_dir = ""
        shutil.rmtree(sweep_folder / CELLS / result.key, ignore_errors=True)
    return result
