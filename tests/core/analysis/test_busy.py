"""Rounds something else disturbed are set aside (`xlagui.core.analysis.busy`), by every
reader of a measurement's blocks: the recorded summary, the arms, the A/A check and the live
stopping rule. Streams are recorded block events with their interference."""

from __future__ import annotations

import pytest

from xlagui.core.analysis.busy import counted, machine_load
from xlagui.core.analysis.pairs import MIN_PAIRS_FOR_INTERVAL, Pair, estimate_ratio
from xlagui.core.analysis.summary import summarize
from xlagui.core.measure.interleave import _estimate
from xlagui.core.protocol.events import BlockEvent, Event
from xlagui.core.protocol.interference import Interference, ProcessShare

SPINNER = ProcessShare(name="python3", pid=4242, share=0.33)


def block(seq: int, seconds: float, other: float, steps: int = 10) -> BlockEvent:
    disturbed = other > 0.10
    return BlockEvent(t=float(seq), seq=seq, steps=steps, seconds=seconds, interference=(
        Interference(seconds=seconds, cores=2, other_share=other, own_share=0.9,
                     disturbed=disturbed, busiest=[SPINNER] if disturbed else [])))


def streams(arm_seconds: list[float], others: list[float]) -> tuple[list[Event], list[Event]]:
    base = [block(s, 1.0, o) for s, o in enumerate(others)]
    arm = [block(s, sec, o) for s, (sec, o) in enumerate(zip(arm_seconds, others, strict=True))]
    return base, arm


def test_enough_clean_rounds_are_counted_alone() -> None:
    rounds = [Pair(s, 1.0, 1.0, disturbed=s in (3, 4)) for s in range(10)]
    kept, busy = counted(rounds, MIN_PAIRS_FOR_INTERVAL)
    assert [p.seq for p in kept] == [0, 1, 2, 5, 6, 7, 8, 9] and not busy


def test_too_few_clean_rounds_count_every_round_and_say_busy() -> None:
    rounds = [Pair(s, 1.0, 1.0, disturbed=s != 0) for s in range(10)]
    kept, busy = counted(rounds, MIN_PAIRS_FOR_INTERVAL)
    assert kept == rounds and busy
    assert counted(rounds[:1], MIN_PAIRS_FOR_INTERVAL) == ([rounds[0]], False)  # none disturbed


def test_a_burst_in_the_middle_is_set_aside_and_the_answer_is_the_quiet_rounds() -> None:
    """Rounds 8–10 ran beside a burst that slowed the XLA side alone by 30%: counted, they
    would move the answer; set aside, it is the quiet rounds' estimate and not busy."""
    arm = [0.60 + 0.01 * (s % 3) for s in range(20)]
    others = [0.01] * 20
    for s in (8, 9, 10):
        arm[s] *= 1.3
        others[s] = 0.4
    base, xla = streams(arm, others)
    s = summarize(("off", base), ("jit", xla))
    quiet = estimate_ratio([a / 1.0 for i, a in enumerate(arm) if i not in (8, 9, 10)])
    assert (s.ratio, s.low, s.high, s.pairs) == (quiet.ratio, quiet.low, quiet.high, 17)
    assert s.disturbed_pairs == 3 and s.pair_disturbed[8:11] == [True] * 3
    assert s.pair_counted == [not d for d in s.pair_disturbed] and len(s.pair_ratios) == 20
    assert s.machine is not None and not s.machine.busy
    assert (s.machine.rounds, s.machine.disturbed_rounds) == (20, 3)
    assert s.machine.clean_share == pytest.approx(0.85)
    assert s.machine.busiest == [SPINNER]  # named in the disturbed blocks
    # The live stopping rule counts the same rounds.
    live = _estimate(base, xla)
    assert live is not None and live.ratio == s.ratio and live.pairs == 17


def test_a_busy_machine_throughout_still_answers_and_says_so() -> None:
    base, xla = streams([0.7] * 12, [0.33] * 12)
    s = summarize(("off", base), ("jit", xla))
    assert s.pairs == 12 and s.ratio == pytest.approx(0.7)  # every round counted
    assert s.machine is not None and s.machine.busy and s.machine.disturbed_rounds == 12
    assert s.machine.other_share == pytest.approx(0.33) and s.machine.cores == 2


def test_a_quiet_run_keeps_every_round_and_reports_its_share() -> None:
    base, xla = streams([0.7] * 10, [0.012] * 10)
    s = summarize(("off", base), ("jit", xla))
    assert s.pairs == 10 and s.disturbed_pairs == 0 and s.machine is not None
    assert not s.machine.busy and s.machine.other_share == pytest.approx(0.012)
    assert s.machine.clean_share == 1.0 and s.machine.busiest == []


def test_streams_from_before_the_readings_count_every_round() -> None:
    base = [BlockEvent(t=0.0, seq=s, steps=10, seconds=1.0) for s in range(8)]
    s = summarize(("off", base), ("jit", [BlockEvent(t=0.0, seq=x, steps=10, seconds=0.5)
                                          for x in range(8)]))
    assert s.pairs == 8 and s.machine is not None and s.machine.other_share is None
    assert machine_load([base], busy=False).rounds == 8
