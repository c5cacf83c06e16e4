"""The sweep on a Ray cluster (`pip install 'xlagui[ray]'`): each cell a Ray task on a whole
node. Ray itself is imported only when a sweep runs on a cluster.

- `dispatch.py`: which cell runs on which node, reruns when a node is lost, the stop;
- `executor.py`: `RayExecutor`, the dispatch on Ray (connecting, the dataset, the tasks);
- `node.py`: the task's body on the node (the cell, its environment, its files back);
- `data.py`: folders as archives, and where a node finds the dataset.
"""

from __future__ import annotations

from xlagui.core.sweep.cluster.available import RayMissing, import_ray
from xlagui.core.sweep.cluster.dispatch import DispatchOptions
from xlagui.core.sweep.cluster.executor import (
    RayConnectError,
    RayExecutor,
    RayOptions,
    RayRefusal,
)

__all__ = ["DispatchOptions", "RayConnectError",
           "RayExecutor", "RayMissing", "RayOptions", "RayRefusal", "import_ray"]
