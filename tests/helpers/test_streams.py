"""The recorded streams are real finished runs, and the known-answer streams keep their shape."""

from __future__ import annotations

import dataclasses

import pytest

from tests.helpers.streams import recorded_events, run_events
from xlagui.core.analysis.stats import summarize_epochs
from xlagui.core.protocol.events import EpochEvent, Event, FinishedEvent, StartedEvent

RERECORD = "re-record them: python tests/helpers/record_streams.py"


def finished(events: list[Event]) -> FinishedEvent:
    return next(e for e in events if isinstance(e, FinishedEvent))


def started(events: list[Event]) -> StartedEvent:
    return next(e for e in events if isinstance(e, StartedEvent))


@pytest.mark.parametrize(("mode", "variant"), [("off", "baseline"), ("jit", "xla")])
def test_each_recording_is_a_finished_run_of_its_mode(mode: str, variant: str) -> None:
    events = recorded_events(mode)
    kinds = [e.type for e in events]
    assert kinds[0] == "started" and kinds[-1] == "finished"
    assert set(kinds) == {"started", "batch", "epoch", "finished"}
    s = started(events)
    assert (s.variant, s.xla_mode, s.xla_in_effect) == (variant, mode, mode != "off")
    epochs = [e for e in events if isinstance(e, EpochEvent)]
    assert [e.epoch for e in epochs] == [1, 2, 3]
    times = [e.t for e in events]
    assert times == sorted(times)
    summary = finished(events).summary
    # The worker summarises with the same function the GUI and the CLI use.
    assert summarize_epochs(epochs, summary) == summary, RERECORD
    assert summary.xla_evidence is not None
    assert summary.xla_evidence.compiled is (mode != "off")


def test_known_answer_streams_have_the_recorded_shape() -> None:
    for mode, variant in (("off", "baseline"), ("jit", "xla")):
        real = recorded_events(mode)
        made = run_events(variant=variant, xla_mode=mode, epoch_seconds=(2.0, 1.0))
        # What was not asked for is the worker's own: its cache, its XLA report.
        made_summary, real_summary = finished(made).summary, finished(real).summary
        assert (made_summary.cache, made_summary.xla_did) == (real_summary.cache,
                                                              real_summary.xla_did)
        assert made_summary.xla_evidence is not None and real_summary.xla_evidence is not None
        assert made_summary.xla_evidence.dump_dir == real_summary.xla_evidence.dump_dir
        # Only the numbers asked for differ from what the worker sent.
        kept = {"device_name", "device_kind", "versions", "config", "seed", "class_names", "pid"}
        real_started, made_started = (
            dataclasses.asdict(started(real)),
            dataclasses.asdict(started(made)),
        )
        assert {k: made_started[k] for k in kept} == {k: real_started[k] for k in kept}


def test_known_answer_streams_have_the_timings_asked_for() -> None:
    events = run_events(epoch_seconds=(3.0, 1.0, 2.0), steps=2)
    epochs = [e for e in events if isinstance(e, EpochEvent)]
    assert [e.epoch_seconds for e in epochs] == [3.0, 1.0, 2.0]
    assert [e.cumulative_seconds for e in epochs] == [3.0, 4.0, 6.0]
    assert [e.t for e in epochs] == [4.0, 5.0, 7.0]  # after 1 s of setup
    assert [e.type for e in events].count("batch") == 6
    summary = finished(events).summary
    assert summary.total_seconds == 6.0 and summary.steady_epoch_seconds == 1.5
