"""How the parent names a run's worker in its messages about it (a death, a lost connection):
the words of the error event's message, which travels as it is."""

from __future__ import annotations

from pathlib import Path

from xlagui.core.measure.jobs import WorkerJob, run_words
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.spec import RunSpec


def test_a_run_is_named_by_its_arm_its_kind_of_worker_and_its_sizes(tmp_path: Path) -> None:
    base = RunSpec("r1", "baseline", XlaMode.OFF, RunConfig(epochs=3, image_size=48,
                   batch_size=4), ["a", "b"], [], [], tmp_path / "run")
    assert run_words(base) == "training worker of baseline, batch size 4, image size 48"
    assert WorkerJob.of(base).describe() == run_words(base)
    arm = RunSpec(
        "m", "bf16", XlaMode.JIT, RunConfig(batch_size=8, image_size=96), [], [], [],
        tmp_path, mode="measure", precision="mixed_bfloat16",  # type: ignore[arg-type]
    )
    assert run_words(arm) == (
        "measuring worker of bf16, XLA jit, mixed_bfloat16, batch size 8, image size 96"
    )
    inspecting = RunSpec("i-xla", "xla", XlaMode.JIT, RunConfig(epochs=3, image_size=48),
                         ["a", "b"], [], [], tmp_path, mode="inspect",  # type: ignore[arg-type]
                         precision="mixed_float16")  # type: ignore[arg-type]
    assert run_words(inspecting).startswith("inspecting worker of xla, XLA jit, mixed_float16,")
