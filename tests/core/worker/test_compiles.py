"""The compile watch without TensorFlow: a fake model whose step methods the test "traces",
a fake clock, the events it sends (`xlagui.core.worker.compiles`)."""

from __future__ import annotations

from typing import Any

import pytest

from xlagui.core.data.pipeline import batch_sizes
from xlagui.core.protocol.compiles import (
    Compilation,
    CompileReason,
    CompileReasonKind,
    StepFunction,
)
from xlagui.core.protocol.events import CompiledEvent, Event, event_from_dict
from xlagui.core.protocol.record import RunEntry
from xlagui.core.worker.compiles import CompileWatch, XlaCompiling, reason_between

IMAGE = ("float32", (48, 48, 3))
LABEL = ("float32", ())


class FakeModel:
    def train_step(self, data: Any) -> Any:
        return data

    def test_step(self, data: Any) -> Any:
        return data

    def predict_step(self, data: Any) -> Any:
        return data


class Sink:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)

    def now(self) -> float:
        return 100.0

    def compiled(self) -> list[CompiledEvent]:
        return [e for e in self.events if isinstance(e, CompiledEvent)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Harness:
    """A watch on a fake model: `step` runs one step of `seconds`, traced or not."""

    def __init__(self, xla: XlaCompiling, val_sizes: tuple[int, ...] = (8, 8, 2)) -> None:
        self.model = FakeModel()
        self.sink = Sink()
        self.clock = Clock()
        self.watch = CompileWatch(self.model, self.sink, xla, clock=self.clock)  # type: ignore[arg-type]
        self.watch.feed(StepFunction.TRAIN, (IMAGE, LABEL), (8, 8, 8))
        self.watch.feed(StepFunction.EVAL, (IMAGE, LABEL), val_sizes)

    def step(self, fn: StepFunction, index: int, seconds: float, trace: bool = False) -> None:
        self.watch.begin(fn)
        if trace:
            method = {"train": "train_step", "eval": "test_step", "predict": "predict_step"}[fn]
            getattr(self.model, method)(None)
        self.clock.now += seconds
        self.watch.end(fn, index)

    def epoch(self, first: bool = False) -> None:
        for i in range(3):
            compiles = first and i == 0
            self.step(StepFunction.TRAIN, i, 5.0 if compiles else 1.0, trace=compiles)
        for i, secs in enumerate((0.4, 0.4, 0.1)):
            extra = (3.0 if i == 0 else 0.5 if i == 2 else 0.0) if first else 0.0
            self.step(StepFunction.EVAL, i, secs + extra, trace=first and i == 0)
        self.watch.settle()


def test_a_trace_is_a_compile_and_its_cost_is_beyond_a_steady_step() -> None:
    h = Harness(XlaCompiling.NONE)
    h.epoch(first=True)
    train, evaluation = h.sink.compiled()
    assert train.function is StepFunction.TRAIN and evaluation.function is StepFunction.EVAL
    assert train.seconds == pytest.approx(4.0) and train.steady_seconds == 1.0
    assert train.shapes == ["float32[8,48,48,3]", "float32[8]"]
    assert train.reason.kind is CompileReasonKind.FIRST_CALL
    assert evaluation.seconds == pytest.approx(3.0)
    h.epoch()
    h.watch.flush()
    # Without XLA the partial batch runs in the shape-relaxed trace: no recompile.
    assert len(h.sink.compiled()) == 2


def test_xla_recompiles_the_partial_batch_with_its_reason() -> None:
    h = Harness(XlaCompiling.STRICT)
    h.epoch(first=True)
    assert len(h.sink.compiled()) == 2  # the partial batch's waits for a steady step
    h.epoch()  # a second pass compiles nothing again: its partial step (0.1 s) is steady
    evals = [e for e in h.sink.compiled() if e.function is StepFunction.EVAL]
    assert len(evals) == 2
    again = evals[1]
    assert again.shapes == ["float32[2,48,48,3]", "float32[2]"]
    assert again.reason == CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 2, True)
    assert again.steady_seconds == pytest.approx(0.1)
    assert evals[0].traced and not again.traced  # XLA met a new shape in the same trace


def test_the_cost_of_a_shape_never_seen_steady_is_scaled_per_image() -> None:
    h = Harness(XlaCompiling.STRICT)
    h.epoch(first=True)
    h.watch.flush()
    partial = [e for e in h.sink.compiled() if e.reason.partial_batch]
    assert len(partial) == 1
    # Steady eval steps: 0.4 s for 8 images, so 0.1 s for 2; the step took 0.6 s.
    assert partial[0].steady_seconds == pytest.approx(0.1)
    assert partial[0].seconds == pytest.approx(0.5)


def test_auto_clustering_compiles_a_new_shape_at_its_second_step() -> None:
    h = Harness(XlaCompiling.LAZY)
    h.epoch(first=True)
    h.epoch()
    h.watch.flush()
    evals = [e for e in h.sink.compiled() if e.function is StepFunction.EVAL]
    assert [e.reason.kind for e in evals] == [CompileReasonKind.FIRST_CALL,
                                             CompileReasonKind.NEW_SHAPE]
    # The first partial step ran uncompiled: it is no steady step, the cost is per image.
    assert evals[1].steady_seconds == pytest.approx(0.1)


def test_a_function_with_no_steady_step_costs_its_whole_step() -> None:
    h = Harness(XlaCompiling.STRICT, val_sizes=(4,))
    h.step(StepFunction.EVAL, 0, 2.0, trace=True)
    h.watch.flush()
    (only,) = h.sink.compiled()
    assert only.seconds == 2.0 and only.steady_seconds is None
    assert only.traced and only.started == 98.0  # the sink's now (100) less the step
    assert only.shapes == ["float32[4,48,48,3]", "float32[4]"]


def test_an_end_without_a_begin_is_ignored() -> None:
    h = Harness(XlaCompiling.STRICT)
    h.watch.end(StepFunction.TRAIN, 0)
    h.watch.flush()
    assert h.sink.compiled() == []


@pytest.mark.parametrize(
    ("was", "now", "partial", "expected"),
    [
        (("float32[8,4]",), ("float32[2,4]",), True,
         CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 2, True)),
        (("float32[8,4]",), ("float32[8,5]",), True,
         CompileReason(CompileReasonKind.NEW_SHAPE, 1, 4, 5, False)),
        (("float32[8,4]",), ("float32[16,4]",), True,  # bigger: no partial batch
         CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 16, False)),
        (("float32[8,4]",), ("bfloat16[8,4]",), False, CompileReason(CompileReasonKind.NEW_DTYPE)),
        (("float32[8,4]",), ("float32[8,4]",), False, CompileReason(CompileReasonKind.OTHER)),
        (("float32[8,4]",), ("float32[2,5]",), False, CompileReason(CompileReasonKind.NEW_SHAPE)),
        (("float32[8]",), ("float32[8]", "int32[8]"), False,
         CompileReason(CompileReasonKind.OTHER)),
        (("float32[8,4]",), ("float32[8,4,1]",), False,
         CompileReason(CompileReasonKind.NEW_SHAPE)),
        (("float32[8,4]", "float32[8]"), ("float32[2,4]", "float32[2]"), True,
         CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 2, True)),
    ],
)
def test_the_reason_between_two_signatures(
    was: tuple[str, ...], now: tuple[str, ...], partial: bool, expected: CompileReason
) -> None:
    assert reason_between(was, now, partial) == expected


def test_compiled_events_round_trip_and_older_records_have_none() -> None:
    event = CompiledEvent(t=1.5, function=StepFunction.EVAL, shapes=["float32[2,48,48,3]"],
                          seconds=0.4, step_seconds=0.5, steady_seconds=0.1,
                          reason=CompileReason(CompileReasonKind.NEW_SHAPE, 0, 8, 2, True))
    back = event_from_dict(event.to_dict())
    assert back == event
    entry = RunEntry(run_id="r", variant="xla", repeat=1, xla_mode="jit", events=[back])
    again = RunEntry.from_dict(entry.to_dict())
    assert again.compilations == [Compilation(StepFunction.EVAL, ("float32[2,48,48,3]",), 0.4,
                                              event.reason)]
    assert again.compilations[0].to_dict() == {
        "function": "eval", "shapes": ["float32[2,48,48,3]"], "seconds": 0.4,
        "reason": {"kind": "new_shape", "dimension": 0, "was": 8, "now": 2,
                   "partial_batch": True},
    }
    assert Compilation.from_dict(again.compilations[0].to_dict()) == again.compilations[0]
    old = RunEntry.from_dict({"run_id": "r", "variant": "xla", "repeat": 1, "xla_mode": "jit",
                              "events": []})
    assert old.compilations == []


@pytest.mark.parametrize(
    ("count", "batch", "drop", "sizes"),
    [(10, 8, False, (8, 2)), (10, 8, True, (8,)), (16, 8, False, (8, 8)), (3, 8, True, (3,)),
     (0, 8, False, ())],
)
def test_batch_sizes(count: int, batch: int, drop: bool, sizes: tuple[int, ...]) -> None:
    assert batch_sizes(count, batch, drop) == sizes
