"""A command's memory as the machine holds it, all its processes at once: sampled over the
process tree (the command and every descendant) while it runs. Each measuring worker reports
its own peak RSS, but the workers of a comparison are alive together, and their peaks, added,
count the pages they share (TensorFlow's libraries, mapped by each) once per process and add
peaks that need not coincide. The sampler reads, every `interval` seconds:

- RSS summed over the tree (shared pages counted in every process that maps them);
- PSS summed over the tree (each shared page split among the processes that map it): what
  the tree holds of the machine's memory at that moment, the figure a memory goal is about.

A sample of one process costs a read of its `smaps_rollup` (about 1 ms for a TensorFlow worker
here), so at the default interval the sampler takes well under 1% of a core. Samples miss a
peak that lasts less than the interval: a JAX step's largest buffers live for about a second
of its ten. Where this user may make a memory cgroup (root, cgroup v1 or v2), the command runs
in one of its own and the kernel's own high-water mark is read too (`peak_cgroup`): exact for
what it counts, every page charged to the command's processes at once, with the page cache of
the files they were first to read or write (their outputs), but not the pages of libraries
another process had loaded first (TensorFlow's): here it read 0.5 GB under the PSS sum,
and once 0.1 GB over it, where the samples had missed the peak.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

INTERVAL_SECONDS = 0.25


@dataclass
class TreeMemory:
    """The largest sums seen, and who held what at the largest PSS sum."""

    peak_pss: int = 0
    peak_rss: int = 0
    at_peak: dict[str, int] = field(default_factory=dict)  # "name pid" → PSS at peak_pss
    own_peak: dict[str, int] = field(default_factory=dict)  # "name pid" → its largest PSS
    samples: int = 0
    peak_cgroup: int | None = None  # the kernel's high-water mark (None: no cgroup made)


# A memory cgroup's folder and its high-water mark's file: cgroup v1, then v2.
_CGROUPS = ((Path("/sys/fs/cgroup/memory"), "memory.max_usage_in_bytes"),
            (Path("/sys/fs/cgroup"), "memory.peak"))


def _make_cgroup() -> tuple[Path, str] | None:
    """A fresh memory cgroup of this process's making, and its peak file (None: none can be
    made here)."""
    for root, peak in _CGROUPS:
        if not (root / "cgroup.procs").exists():
            continue
        group = root / f"xlagui-bench-{os.getpid()}"
        try:
            group.mkdir(exist_ok=True)
        except OSError:
            continue
        if (group / peak).exists():
            return group, peak
        group.rmdir()
    return None


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
            key = f"{name} ({p.pid})"
            held[key] = info.pss
            into.own_peak[key] = max(into.own_peak.get(key, 0), info.pss)
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
    cgroup = _make_cgroup()
    if cgroup is not None:  # the command joins the group before it runs: so do its children
        cmd = ["sh", "-c", f'echo $$ > {cgroup[0] / "cgroup.procs"} && exec "$@"', "sh", *cmd]
    with subprocess.Popen(cmd, **popen) as proc:
        sampler = threading.Thread(target=sample_tree, args=(proc.pid, stop, memory),
                                   daemon=True)
        sampler.start()
        code = proc.wait()
        stop.set()
        sampler.join()
    if cgroup is not None:
        memory.peak_cgroup = int((cgroup[0] / cgroup[1]).read_text())
        try:
            cgroup[0].rmdir()
        except OSError:  # a process left in it: the folder stays, empty of use
            pass
    return code, memory
