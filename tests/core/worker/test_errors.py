"""A worker's exception as its error event: the message in one line, and the kind of failure
with the facts its advice names (worded by `xlagui.present.errors`, word for word as before)."""

from __future__ import annotations

import pytest

from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.config import ModelChoice, RunConfig
from xlagui.core.protocol.failures import Failure
from xlagui.core.protocol.levers import XLA_FLAGS
from xlagui.core.worker.errors import error_event, error_message, failure
from xlagui.present.errors import error_hint

CONFIG = RunConfig(batch_size=32, image_size=600, model=ModelChoice(name="resnet50"))


class ResourceExhaustedError(Exception):
    """Named as TensorFlow's is."""


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (ResourceExhaustedError("OOM when allocating tensor"), Failure.OUT_OF_MEMORY),
        (MemoryError(), Failure.OUT_OF_MEMORY),
        (RuntimeError("std::bad_alloc"), Failure.OUT_OF_MEMORY),
        (RuntimeError("XLA compilation failed"), Failure.XLA_FAILED),
        (RuntimeError("CUDA_ERROR_NO_DEVICE"), Failure.GPU_UNUSABLE),
        (FileNotFoundError("x.jpg"), Failure.UNREADABLE_IMAGE),
        (ValueError("something else"), Failure.SEE_LOG),
    ],
)
def test_each_exception_has_its_kind(exc: BaseException, kind: Failure) -> None:
    assert failure(exc, CONFIG)[0] is kind


def test_out_of_memory_names_the_sizes_to_change() -> None:
    try:
        raise ResourceExhaustedError("Graph execution error:\n\nOOM when allocating tensor x")
    except ResourceExhaustedError as exc:
        event = error_event(exc, CONFIG)
    assert event.kind == "out_of_memory" and event.hint == ""
    assert event.facts == {"model": "resnet50", "batch_size": 32, "image_size": 600}
    assert event.message == "out of memory: OOM when allocating tensor x"
    assert "ResourceExhaustedError" in event.details
    assert error_hint(event) == (
        "The run ran out of memory training resnet50 with batch size 32 and image size 600. "
        "Try a smaller batch size or image size."
    )


@pytest.mark.parametrize(
    ("arm", "lean"),
    [
        ("jax", "memsched+jax"),  # an arm XLA compiles: the same with the memory schedule
        ("jit+bf16", "jit+bf16+memsched"),
        ("off", None),  # no XLA: nothing of XLA's to change
        ("bf16", None),
        ("jax+memsched", None),  # has it already
        ("jit+xla_cpu_enable_concurrency_optimized_scheduler=true", None),  # chose the other
    ],
)
def test_out_of_memory_of_an_arm_xla_compiles_names_it_with_the_memory_schedule(
        arm: str, lean: str | None) -> None:
    exc = ResourceExhaustedError("OOM when allocating tensor x")
    event = error_event(exc, CONFIG, parse_arm(arm))
    assert event.facts.get("lean_arm") == lean
    hint = error_hint(event)
    assert hint.startswith("The run ran out of memory training resnet50 with batch size 32")
    if lean is None:
        assert hint.endswith("Try a smaller batch size or image size.")
    else:
        assert hint.endswith(
            f"Try a smaller batch size or image size, or measure it as {lean} (XLA orders the "
            "step to hold the least memory instead of running independent work at once).")
        assert parse_arm(lean).value(XLA_FLAGS).value == (
            "--xla_cpu_enable_concurrency_optimized_scheduler=false")


def test_the_message_skips_tensorflows_empty_first_lines() -> None:
    exc = RuntimeError("Graph execution error:\n\nDetected at node x:\n  the real cause\n")
    assert error_message(exc) == "Detected at node x:"
    assert error_message(RuntimeError("Graph execution error:\n")) == "RuntimeError"
    assert error_message(RuntimeError("  the cause  ")) == "the cause"
