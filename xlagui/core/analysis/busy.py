"""What else used the machine over a measurement, summed up from its blocks' records
(`BlockEvent.interference`): how much, in how many rounds, and which processes, plus the one
rule for which rounds an estimate counts (`counted`).

Every reader calls these: the live stopping rule (`measure.interleave`), the recorded summary
(`summary.summarize`), the plot and the sweep, so a round is set aside everywhere or nowhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from xlagui.core.protocol.events import BlockEvent, Event
from xlagui.core.protocol.interference import ProcessShare


class Round(Protocol):
    """What `counted` needs of a round: whether something else disturbed it."""

    @property
    def disturbed(self) -> bool: ...


R = TypeVar("R", bound=Round)


def counted(rounds: Sequence[R], minimum: int) -> tuple[list[R], bool]:
    """The rounds an estimate counts, and whether that had to include disturbed ones.

    The undisturbed rounds, when there are at least `minimum` of them (the fewest an interval
    is computed from, `pairs.MIN_PAIRS_FOR_INTERVAL`): the disturbed
    ones are set aside (they stay in the data, drawn apart and counted). With fewer, every
    round: the answer is still given, marked as measured on a busy machine (True)."""
    clean = [r for r in rounds if not r.disturbed]
    if clean_only(len(clean), len(rounds), minimum):
        return clean, False
    return list(rounds), True


def clean_only(clean: int, rounds: int, minimum: int) -> bool:
    """`counted`'s rule on counts (a running estimate keeps counts, not rounds): whether the
    undisturbed rounds are counted alone."""
    return clean == rounds or clean >= minimum


@dataclass
class MachineLoad:
    """What else used the machine over a measurement's timed blocks, every worker's.

    `other_share`: the share of the machine's cores anything else used, weighted by each
    block's time (steal included; `steal_share` is the hypervisor's part). `rounds` and
    `disturbed_rounds`: rounds with a block over the threshold (`busy_percent`). `busy`: an
    estimate had to count disturbed rounds (`counted`); the answer is then marked "measured on a
    busy machine". `busiest`: the processes named in disturbed blocks, each at the highest
    share seen, busiest first."""

    other_share: float | None = None
    steal_share: float | None = None
    cores: int = 0
    rounds: int = 0
    disturbed_rounds: int = 0
    busy: bool = False
    busy_percent: float | None = None
    busiest: list[ProcessShare] = field(default_factory=list)

    @property
    def clean_share(self) -> float | None:
        """The share of rounds that count as undisturbed (None before any round)."""
        return 1 - self.disturbed_rounds / self.rounds if self.rounds else None


def machine_load(streams: Sequence[Sequence[Event]], busy: bool,
                 busy_percent: float | None = None) -> MachineLoad:
    """The measurement's `MachineLoad` from every measuring worker's events; `busy`: whether
    an estimate counted disturbed rounds (`counted`)."""
    blocks = [e for s in streams for e in s if isinstance(e, BlockEvent) and e.steps > 0]
    read = [e for e in blocks if e.interference is not None]
    load = MachineLoad(busy=busy, busy_percent=busy_percent,
                       rounds=len({e.seq for e in blocks}))
    load.disturbed_rounds = len({e.seq for e in read if e.disturbed})
    seconds = sum(e.interference.seconds for e in read if e.interference is not None)
    if read and seconds > 0:
        load.other_share = sum(e.interference.other_share * e.interference.seconds
                               for e in read if e.interference is not None) / seconds
        load.steal_share = sum(e.interference.steal_share * e.interference.seconds
                               for e in read if e.interference is not None) / seconds
        load.cores = max(e.interference.cores for e in read if e.interference is not None)
    top: dict[str, ProcessShare] = {}
    for e in read:
        for p in e.interference.busiest if e.interference is not None else ():
            if p.name not in top or p.share > top[p.name].share:
                top[p.name] = p
    load.busiest = sorted(top.values(), key=lambda p: -p.share)[:5]
    return load
