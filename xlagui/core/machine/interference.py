"""Reading what else uses the machine (psutil, on the host where the worker runs): a
`CpuReading` before and after a timed stretch gives its `Interference`
(`xlagui.core.protocol.interference`), and `busiest_processes` names who took the time.

A reading costs about 0.1 ms (two small reads), so every block and every epoch takes one at each
end. Naming processes walks every process (10 ms for 70 of them, more on a desktop), so it is
done only after a stretch found disturbed, outside the timed stretch, over `NAMING_SECONDS`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from xlagui.core.protocol.interference import (
    BUSIEST_COUNT,
    NAMED_ABOVE_SHARE,
    Interference,
    ProcessShare,
    is_disturbed,
)

NAMING_SECONDS = 0.25
# The preflight's look before measuring; `XLAGUI_PREFLIGHT_SECONDS` sets another (0: none, as
# the test suite does where a test is not about it).
PREFLIGHT_SECONDS = 1.0


def preflight_seconds() -> float:
    try:
        return max(0.0, float(os.environ.get("XLAGUI_PREFLIGHT_SECONDS", PREFLIGHT_SECONDS)))
    except ValueError:
        return PREFLIGHT_SECONDS


@dataclass(frozen=True)
class CpuReading:
    """The machine's CPU seconds so far, summed over its cores: `busy` (everything but idle
    and I/O wait; steal included), `steal` (a VM's hypervisor), and `own`: this process's
    (all its threads); `wall` is the monotonic clock."""

    wall: float
    busy: float
    steal: float
    own: float
    cores: int


def read_cpu() -> CpuReading:
    import psutil  # lazy: keeps psutil off the window's start-up

    t = psutil.cpu_times()
    fields = t._asdict()
    # psutil's own busy time: the sum less idle and I/O wait; on Linux guest time is already
    # in user (and guest_nice in nice), so it is taken out once.
    total = sum(fields.values()) - fields.get("guest", 0.0) - fields.get("guest_nice", 0.0)
    busy = total - t.idle - fields.get("iowait", 0.0)
    return CpuReading(wall=time.monotonic(), busy=busy, steal=fields.get("steal", 0.0),
                      own=own_seconds(psutil.Process()), cores=psutil.cpu_count() or 1)


def own_seconds(me: Any) -> float:
    """CPU seconds of this process and of its children, the ended ones (once waited for) and
    the living: the window's own model check or device probe is its work, not "other
    programs" (it once read 29% of the 2 cores as other programs' before a measurement)."""
    import psutil  # lazy: see `read_cpu`

    t = me.cpu_times()
    seconds = float(t.user + t.system + t.children_user + t.children_system)
    for child in me.children(recursive=True):
        try:
            c = child.cpu_times()
        except psutil.Error:  # ended meanwhile: its time is its parent's `children_*` now
            continue
        seconds += c.user + c.system
    return seconds


def own_pids() -> frozenset[int]:
    """This process and its living children: left out when naming the busiest programs."""
    import psutil  # lazy: see `read_cpu`

    me = psutil.Process()
    try:
        return frozenset({me.pid, *(c.pid for c in me.children(recursive=True))})
    except psutil.Error:
        return frozenset({me.pid})


def interference_between(before: CpuReading, after: CpuReading, busy_percent: float,
                         busiest: Callable[[], list[ProcessShare]] | None = None
                         ) -> Interference:
    """What else used the machine between two readings, as shares of its cores; `busiest`
    (called only when the stretch was disturbed) names the processes."""
    seconds = max(after.wall - before.wall, 0.0)
    capacity = seconds * max(after.cores, 1)
    if capacity <= 0:
        return Interference(seconds=seconds, cores=after.cores)

    def share(x: float) -> float:
        return min(max(x / capacity, 0.0), 1.0)

    own = after.own - before.own
    other = share(after.busy - before.busy - own)
    disturbed = is_disturbed(other, busy_percent)
    return Interference(
        seconds=seconds,
        cores=after.cores,
        other_share=other,
        steal_share=share(after.steal - before.steal),
        own_share=share(own),
        disturbed=disturbed,
        busiest=busiest() if disturbed and busiest is not None else [],
    )


ProcessTimes = dict[int, tuple[str, float]]


def process_times(exclude: frozenset[int] | None = None) -> ProcessTimes:
    """Every process's name and CPU seconds so far (this one and its children left out)."""
    import psutil  # lazy: see `read_cpu`

    skip = exclude if exclude is not None else own_pids()
    out = {}
    for p in psutil.process_iter(["name", "cpu_times"]):
        times = p.info.get("cpu_times")
        if p.pid in skip or times is None:
            continue
        out[p.pid] = (p.info.get("name") or "?", times.user + times.system)
    return out


def busiest_between(first: ProcessTimes, second: ProcessTimes, seconds: float, cores: int,
                    count: int = BUSIEST_COUNT) -> list[ProcessShare]:
    """The processes that used most of the machine between two `process_times`, busiest
    first, each above `NAMED_ABOVE_SHARE` of its cores."""
    capacity = max(seconds, 1e-6) * max(cores, 1)
    shares = [ProcessShare(name=name, pid=pid, share=(cpu - first[pid][1]) / capacity)
              for pid, (name, cpu) in second.items() if pid in first]
    shares = [s for s in shares if s.share > NAMED_ABOVE_SHARE]
    return sorted(shares, key=lambda s: -s.share)[:count]


def busiest_processes(seconds: float = NAMING_SECONDS, count: int = BUSIEST_COUNT,
                      exclude: frozenset[int] | None = None) -> list[ProcessShare]:
    """The processes that used most of the machine over the next `seconds` (this one left
    out), busiest first, each above `NAMED_ABOVE_SHARE` of its cores."""
    import psutil  # lazy: see `read_cpu`

    first = process_times(exclude)
    t0 = time.monotonic()
    time.sleep(seconds)
    second = process_times(exclude)
    return busiest_between(first, second, time.monotonic() - t0, psutil.cpu_count() or 1, count)


class MachineLook:
    """The preflight's look at the machine before any worker starts: `begin()`, wait (a sleep
    in the CLI, a timer in the window, which must not block), then `end()`: what else used the
    machine meanwhile, disturbed above `busy_percent`, with the busiest processes."""

    def __init__(self, busy_percent: float) -> None:
        self.busy_percent = busy_percent
        self._cpu: CpuReading | None = None
        self._procs: ProcessTimes = {}

    def begin(self) -> None:
        self._procs = process_times()
        self._cpu = read_cpu()

    def end(self) -> Interference:
        if self._cpu is None:
            raise RuntimeError("MachineLook.end before begin")
        before, after = self._cpu, read_cpu()
        procs = process_times()
        return interference_between(
            before, after, self.busy_percent,
            lambda: busiest_between(self._procs, procs, after.wall - before.wall, after.cores))


def look_at_machine(seconds: float, busy_percent: float) -> Interference:
    """What else used the machine over the next `seconds` (`MachineLook`, waited by sleeping)."""
    look = MachineLook(busy_percent)
    look.begin()
    time.sleep(seconds)
    return look.end()
