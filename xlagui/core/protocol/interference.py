"""What else used the machine while a worker timed something: the record a timed block or an
epoch carries (`Interference`), and the one rule that calls it disturbed (`is_disturbed`).

Interleaving cancels drift that hits both sides alike. Another program does not hit them alike
(XLA's thread pool and oneDNN's lose different amounts of time to it), so a ratio measured beside
one moves outside its own interval while nothing says why (issue 37: 7% beside one busy core).
The worker therefore reads, over each timed stretch, the whole machine's busy time (steal
included: on a VM the hypervisor's share) and its own process's CPU time; the rest is what
anything else took: other programs, the app's own window, the hypervisor. Read with psutil
(`xlagui.core.machine.interference`), on the host where the worker runs.

The threshold is a setting (`RunConfig.busy_percent`), calibrated on a quiet machine and beside
one busy core (BENCHMARKS.md, "What a busy machine looks like"): the worker decides with it and
records the decision, so a replayed recording is judged as the live run was.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Processes named in a disturbed stretch's record: the busiest few, each above this share.
BUSIEST_COUNT = 3
NAMED_ABOVE_SHARE = 0.02


@dataclass
class ProcessShare:
    """Another process and the share of the machine's cores it used (0.25: a quarter of them;
    one busy core of two is 0.5)."""

    name: str = ""
    pid: int = 0
    share: float = 0.0


@dataclass
class Interference:
    """What the machine did over one timed stretch of `seconds`, as shares of its `cores`
    (1.0: every core for the whole stretch). `other_share`: anything but the worker itself,
    steal included; `steal_share`: the hypervisor's part of it; `own_share`: the worker's.
    `disturbed`: `other_share` was above the threshold the run was given; `busiest`: the
    processes that used most, sampled right after a disturbed stretch ([] otherwise)."""

    seconds: float = 0.0
    cores: int = 0
    other_share: float = 0.0
    steal_share: float = 0.0
    own_share: float = 0.0
    disturbed: bool = False
    busiest: list[ProcessShare] = field(default_factory=list)


def is_disturbed(other_share: float, busy_percent: float) -> bool:
    """The rule: a stretch is disturbed when anything else used more than `busy_percent` of
    the machine's cores over it."""
    return other_share * 100 > busy_percent


@dataclass
class Preflight:
    """The look at the machine before the measuring workers start
    (`xlagui.core.compare.workflow`): what else used it (`look`, the last look), how long the
    comparison waited for it to go quiet (`waited_seconds`, up to `wait_limit_seconds`; None:
    it was not asked to wait) and whether it was still busy when measuring began."""

    look: Interference = field(default_factory=Interference)
    waited_seconds: float = 0.0
    wait_limit_seconds: float | None = None

    @property
    def busy(self) -> bool:
        return self.look.disturbed
