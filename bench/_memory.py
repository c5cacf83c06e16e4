"""A command's memory as the machine holds it, all its processes at once: sampled over the
process tree (the command and every descendant) while it runs. Each measuring worker reports
its own peak RSS, but the workers of a comparison are alive together, and their peaks, added,
count the pages they share (TensorFlow's libraries, mapped by each) once per process and add
peaks that need not coincide. The sampler reads, every `interval` seconds:

- RSS summed over the tree (shared pages counted in every process that maps them);
- PSS summed over the tree (each shared page split among the processes that map it): what
  the tree holds of the machine's memory at that moment, the figure a memory goal is about.

A sample of one process costs a read of its `smaps_rollup` (about 1 ms for a TensorFlow worker
here), so at the default interval the sampler takes well under 1% of a core.
"""

from __future__ import annotations

import subprocess
import threading
from dataclasses import dataclass, field
from typing import Any

INTERVAL_SECONDS = 0.25


@dataclass
class TreeMemory:
    """The largest sums seen, and who held what at the largest PSS sum."""

    peak_pss: int = 0
    peak_rss: int = 0
    at_peak: dict[str, int] = field(default_factory=dict)  # "name pid" → PSS at peak_pss
    samples: int = 0


def _tree(root: Any) -> list[Any]:
    import psutil

    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def sample_tree(root_pid: int, stop: threading.Event, into: TreeMemory,
                interval: float = INTERVAL_SECONDS) -> None:
    """Sample `root_pid`'s tree into `into` until `stop` is set or the root has ended."""
    import psutil

    try:
        root = psutil.Process(root_pid)
    except psutil.Error:
        return
    while not stop.is_set():
        pss = rss = 0
        held = {}
        for p in _tree(root):
            try:
                info = p.memory_full_info()
                name = " ".join(p.cmdline()[1:4])[:60] or p.name()
            except psutil.Error:  # ended between the listing and the read
                continue
            pss += info.pss
            rss += info.rss
            held[f"{name} ({p.pid})"] = info.pss
        if held:
            into.samples += 1
            into.peak_rss = max(into.peak_rss, rss)
            if pss > into.peak_pss:
                into.peak_pss, into.at_peak = pss, held
        if not root.is_running():
            return
        stop.wait(interval)


def run_sampled(cmd: list[str], **popen: Any) -> tuple[int, TreeMemory]:
    """Run `cmd` to its end with its tree's memory sampled; its exit code and the sums."""
    memory = TreeMemory()
    stop = threading.Event()
    with subprocess.Popen(cmd, **popen) as proc:
        sampler = threading.Thread(target=sample_tree, args=(proc.pid, stop, memory),
                                   daemon=True)
        sampler.start()
        code = proc.wait()
        stop.set()
        sampler.join()
    return code, memory
