"""What else used the machine over a timed stretch (`xlagui.core.machine.interference`), from
recorded CPU-time series with known answers: a quiet machine, one busy core, a burst in the
middle, and steal on a VM. Each reading is what psutil gave at a block's two ends (2 cores)."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time

import pytest

from tests.helpers.spinner import spinning_elsewhere
from xlagui.core.machine.interference import (
    CpuReading,
    busiest_processes,
    interference_between,
    read_cpu,
)
from xlagui.core.protocol.interference import Interference, ProcessShare, is_disturbed

THRESHOLD = 10  # percent, the default (`DEFAULTS["busy_percent"]`)
NAMED = [ProcessShare(name="python3", pid=4242, share=0.33)]


def series(blocks: list[tuple[float, float, float]], cores: int = 2) -> list[CpuReading]:
    """Readings at the ends of 1-second blocks, each (own, other, steal) in core-seconds:
    the worker's CPU time, anything else's, and the hypervisor's part of anything else."""
    out = [CpuReading(wall=100.0, busy=500.0, steal=7.0, own=40.0, cores=cores)]
    for own, other, steal in blocks:
        last = out[-1]
        out.append(CpuReading(wall=last.wall + 1.0, busy=last.busy + own + other,
                              steal=last.steal + steal, own=last.own + own, cores=cores))
    return out


def judged(readings: list[CpuReading]) -> list[Interference]:
    return [interference_between(a, b, THRESHOLD, busiest=lambda: list(NAMED))
            for a, b in itertools.pairwise(readings)]


def test_a_quiet_machine_is_not_disturbed() -> None:
    """Recorded on the 2-core machine with nothing else running: the worker uses most of both
    cores, the app and TensorFlow's idle threads a trace (1%)."""
    got = judged(series([(1.85, 0.02, 0.0), (1.9, 0.01, 0.0), (1.88, 0.03, 0.003)]))
    assert [round(i.other_share, 3) for i in got] == [0.01, 0.005, 0.015]
    assert not any(i.disturbed for i in got) and all(i.busiest == [] for i in got)
    assert got[0].own_share == pytest.approx(0.925) and got[0].cores == 2


def test_one_busy_core_disturbs_every_block_and_names_the_process() -> None:
    """Beside one spinning core the scheduler gives the spinner a third of the CPU time."""
    got = judged(series([(1.33, 0.66, 0.0)] * 4))
    assert all(i.other_share == pytest.approx(0.33) for i in got)
    assert all(i.disturbed and i.busiest == NAMED for i in got)


def test_a_burst_in_the_middle_disturbs_only_its_blocks() -> None:
    quiet, burst = (1.9, 0.02, 0.0), (1.2, 0.8, 0.0)
    got = judged(series([quiet] * 3 + [burst] * 2 + [quiet] * 3))
    assert [i.disturbed for i in got] == [False] * 3 + [True] * 2 + [False] * 3
    assert got[3].other_share == pytest.approx(0.4)


def test_steal_on_a_vm_counts_as_something_else() -> None:
    """The hypervisor ran another guest on these cores for 0.4 core-seconds a block: the
    worker's own time shrank, and the machine's busy time (psutil's, steal included) says so."""
    got = judged(series([(1.55, 0.42, 0.4)] * 2))
    assert all(i.steal_share == pytest.approx(0.2) for i in got)
    assert all(i.other_share == pytest.approx(0.21) and i.disturbed for i in got)


def test_the_rule_is_the_threshold_and_a_reading_never_exceeds_the_machine() -> None:
    assert is_disturbed(0.11, 10) and not is_disturbed(0.10, 10) and not is_disturbed(0.3, 40)
    # Clock skew between the two counters must not give more than the whole machine.
    over = interference_between(*series([(0.0, 5.0, 0.0)]), THRESHOLD)
    assert over.other_share == 1.0 and over.busiest == []  # no naming without a sampler
    none = interference_between(series([])[0], series([])[0], THRESHOLD)
    assert none.seconds == 0 and not none.disturbed


def _half_a_second_asleep() -> tuple[CpuReading, Interference]:
    """The real readers over half a second this process sleeps through (after a moment for a
    new process to start spinning): the last reading, and what it saw."""
    time.sleep(0.3)
    before = read_cpu()
    time.sleep(0.5)
    after = read_cpu()
    return after, interference_between(before, after, THRESHOLD, busiest_processes)


def test_readings_from_this_machine_see_a_spinning_process_and_name_it() -> None:
    """The real readers (psutil): a process spinning on one core while this one sleeps is most
    of what else used the machine, and is named with its share."""
    with spinning_elsewhere() as spinner:
        _, seen = _half_a_second_asleep()
        cores = os.cpu_count() or 1
        assert seen.cores == cores
        # At least a fifth of a core (CI runs another test beside this one), of the machine's.
        assert seen.other_share >= 0.2 / cores
        assert seen.own_share < 0.05  # this process slept
        assert seen.disturbed == (seen.other_share * 100 > THRESHOLD)
        named = busiest_processes()
        assert spinner in [p.pid for p in named], named
        assert next(p for p in named if p.pid == spinner).share >= 0.2 / cores


def test_this_processs_own_children_are_its_own_work_not_other_programs() -> None:
    """A child of this process (the window's model check, its device probe) spinning while
    this one sleeps is this process's own work: not other programs' load, not named as one."""
    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        after, seen = _half_a_second_asleep()
        cores = os.cpu_count() or 1
        assert seen.own_share >= 0.2 / cores  # the child's core, counted as this process's
        assert child.pid not in [p.pid for p in busiest_processes()]
    finally:
        child.kill()
        child.wait()
    ended = read_cpu()  # once waited for, its seconds stay this process's
    assert ended.own >= after.own
