"""A measuring worker counts batches, not calls: with Keras' `steps_per_execution` of N one call
trains N batches, and a timed block of k steps is still k batches (no TensorFlow: a model that
counts the batches it takes)."""

from __future__ import annotations

import itertools
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from xlagui.core.protocol.events import WorkerCommand
from xlagui.core.protocol.identity import Command
from xlagui.core.worker.measure import Stepper, finish_measuring, timed_block, warm_up
from xlagui.core.worker.setup import Setup


class CountingModel:
    """A compiled model whose train function takes `steps_per_execution` batches per call."""

    def __init__(self, steps_per_execution: int) -> None:
        self.steps_per_execution = steps_per_execution
        self.batches = 0
        self.calls = 0

    def make_train_function(self) -> None:
        pass

    def train_function(self, batches: Any) -> dict[str, float]:
        for _ in range(self.steps_per_execution):
            next(batches)
            self.batches += 1
        self.calls += 1
        return {"loss": 1.0}


def stepper(spe: int) -> tuple[Stepper, CountingModel, Setup]:
    model = CountingModel(spe)
    datasets = SimpleNamespace(stream=itertools.count(), val=None)
    setup = Setup(None, model, datasets, {})
    return Stepper(setup, threading.Event()), model, setup


@pytest.fixture(autouse=True)
def no_quiet_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XLAGUI_QUIET_WAIT", "0")


@pytest.mark.parametrize(("spe", "asked", "calls", "batches"), [
    (1, 10, 10, 10), (8, 16, 2, 16), (8, 10, 2, 16), (8, 3, 1, 8),
])
def test_a_block_trains_the_batches_asked_and_says_them(spe: int, asked: int, calls: int,
                                                        batches: int) -> None:
    s, model, _setup = stepper(spe)
    event = timed_block(s, WorkerCommand(Command.BLOCK, steps=asked, seq=1), busy_percent=10)
    assert (model.calls, model.batches) == (calls, batches)
    assert event.steps == batches == s.steps_done
    # What else used the machine was read over the block, on this machine's cores.
    assert event.interference is not None and event.interference.cores >= 1
    assert event.interference.seconds >= event.seconds


def test_warm_up_times_per_batch_and_catch_up_counts_batches() -> None:
    s, model, setup = stepper(4)
    warm = warm_up(s, 2)
    assert model.calls == 2 and model.batches == 8  # the first call, then 2 batches: one call
    assert len(warm.warm_step_seconds) == 1 and warm.first_step_seconds >= 0
    summary = finish_measuring(s, setup, threading.Event(), 6)
    assert model.batches == 16 and summary.steps_done == 16  # 6 batches: two calls of 4
