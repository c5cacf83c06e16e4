"""The model in words: the line the command line prints before a comparison, the memory
warning, and the rows of `xlagui models`. Qt-free; the window's "Model" group can call it too."""

from __future__ import annotations

from xlagui.core.model.check import MemoryGuard
from xlagui.core.protocol.config import BUILTIN_MODELS, RunConfig
from xlagui.core.protocol.events import ModelEvent
from xlagui.present.format import size_bytes
from xlagui.present.limits import flop_count


def model_line(config: RunConfig, check: ModelEvent | None) -> str:
    """"Model: mixer (file …, sha256 1a2b3c4d…), 309,649 parameters, 0.642 GFLOP per training
    step at batch 8, compiled with Adam + binary_crossentropy"."""
    m = config.model
    words = [f"Model: {m.label}"]
    if m.file:
        words[0] += f" ({m.file}, sha256 {m.sha256[:12]}…)"
    if m.params is not None:
        words.append(f"{m.params:,} parameters")
    if check is not None:
        if check.fixed_input_size:
            words.append(f"takes {check.image_size} px images")
        if check.flops_per_step:
            words.append(
                f"{flop_count(check.flops_per_step)} per training step at batch "
                f"{check.batch_size}"
            )
        elif check.flops_note:
            words.append(f"FLOPs not counted ({check.flops_note})")
        words.append(f"compiled with {check.compile_words}")
    if m.new_head:
        words.append("its last layer replaced (--new-head)")
    return ", ".join(words)


def memory_warning(guard: MemoryGuard, config: RunConfig) -> str:
    """"" when the estimate fits; else the sentence that says it may not."""
    if guard.fits:
        return ""
    each = f" ({guard.workers} workers at once, {size_bytes(guard.per_worker_bytes)} each)"
    return (
        f"{config.model.label} at batch {config.batch_size} and {config.image_size} px may not "
        f"fit: a training step needs about {size_bytes(guard.needed_bytes)}"
        f"{each if guard.workers > 1 else ''}, and {size_bytes(guard.available_bytes)} is "
        "free. Try a smaller batch size or image size."
    )


def models_rows(checks: list[ModelEvent]) -> list[tuple[str, str, str]]:
    """(name, parameters, description) per built-in model."""
    rows = []
    for check in checks:
        name = check.model.name
        facts = BUILTIN_MODELS.get(name)
        params = f"{check.model.params:,}" if check.model.params is not None else "—"
        rows.append((name, params, facts.description if facts else ""))
    return rows
