"""“What XLA did” in words and rows: the one wording the CLI (`xlagui inspect`), the window's
panel and the PNG report share. The figures come from `xlagui.core.xla.hlo`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xlagui.core.xla.hlo import DiffRow, Fusion, HeavyOp, ModuleReport, XlaReport
from xlagui.core.xla.steps import StepKind, step_kind
from xlagui.present.report import run_name
from xlagui.present.units import DASH, size_bytes

if TYPE_CHECKING:
    from xlagui.core.results.report import ComparisonReport

MODULE_COLUMNS = (
    "module",
    "what it compiles",
    "instructions before",
    "instructions after",
    "fusions",
    "by kind",
    "conv / dot",
    "buffers",
    "compile",
)
FUSION_COLUMNS = ("module", "fusion", "kind", "output", "bytes", "ops", "ops inside", "TF op")
HEAVY_COLUMNS = ("module", "op", "result", "operands", "detail", "where", "TF op")
DIFF_COLUMNS = ("figure", "A", "B", "B − A")


# What a module compiles, in the user's words (its function's name is in `module_tip`).
STEP_WORDS: dict[StepKind, str] = {
    StepKind.TRAIN: "the training step",
    StepKind.EVALUATE: "the evaluation step",
    StepKind.PREDICT: "the prediction step",
    StepKind.FORWARD: "a step without gradients (evaluation or prediction)",
    StepKind.CLUSTER: "a cluster of ops XLA chose (auto-clustering)",
    StepKind.OTHER: "another function",
}


def step_words(m: ModuleReport) -> str:
    return STEP_WORDS[step_kind(m)]


def module_tip(m: ModuleReport) -> str:
    """The module's names as TensorFlow and XLA give them, for its row's tooltip."""
    return f"TensorFlow's function: {m.name}\nXLA's module number: {m.module_id}"


def run_label(report: ComparisonReport, run_id: str) -> str:
    """A run that XLA compiled, in the user's words: its arm, and what the run was ("XLA
    jit_compile, the inspection compile", "bf16, training run 1"); the id if it is unknown."""
    groups = (
        (report.inspect_runs, "the inspection compile"),
        (report.runs, "training run {repeat}"),
        (report.measure_runs, "speed measurement"),
    )
    for entries, what in groups:
        for e in entries:
            if e.run_id == run_id:
                arm = run_name(e.variant, e.xla_mode.value, e.arm.name, e.repeat)
                return f"{arm.rsplit(' #', 1)[0]}, {what.format(repeat=e.repeat)}"
    return run_id


def kind_label(kind: str) -> str:
    """`kLoop` → `loop`; `kCustom (ynn_fusion)` → `custom (ynn_fusion)`."""
    return kind[1].lower() + kind[2:] if kind.startswith("k") and len(kind) > 1 else kind


def kinds_text(by_kind: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind_label(k)}" for k, n in by_kind.items()) or "none"


def one_line(report: XlaReport | None) -> str:
    """“XLA did: 3 modules, 143 fusions (140 loop, 3 custom (ynn_fusion))”, or why not."""
    if report is None:
        return "XLA did: not recorded (a run from before this was read)"
    if not report.modules:
        return "XLA did: no HLO modules in the dump"
    n = len(report.modules)
    return (
        f"XLA did: {n} module{'s' if n != 1 else ''}, {report.fusions} fusions "
        f"({kinds_text(report.fusions_by_kind())})"
    )


def report_line(comparison: ComparisonReport) -> str | None:
    """The PNG report's compact line for a `ComparisonReport`: what XLA did in its first XLA
    run that recorded it (a training run's; measuring workers dump nothing), or None."""
    from xlagui.core.results.dumps import xla_runs

    runs = xla_runs(comparison)
    if not runs:
        return None
    run_id, report = runs[0]
    return f"{one_line(report)} — in {run_label(comparison, run_id)}"


def _seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f} s"


def _count(value: int | None) -> str:
    return "unavailable" if value is None else str(value)


def module_rows(report: XlaReport) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for m in report.modules:
        convs = sum(1 for h in m.heavy_ops if h.opcode == "convolution")
        dots = len(m.heavy_ops) - convs
        rows.append(
            (
                m.module_id,
                step_words(m),
                _count(m.instructions_before),
                str(m.instructions_after),
                str(m.fusions),
                kinds_text(m.fusions_by_kind),
                f"{convs} / {dots}",
                size_bytes(m.buffer_bytes) if m.buffer_bytes is not None else "unavailable",
                _seconds(m.compile_seconds),
            )
        )
    return rows


def ops_text(f: Fusion, limit: int = 6) -> str:
    items = list(f.ops.items())
    text = ", ".join(f"{op}×{n}" if n > 1 else op for op, n in items[:limit])
    return text + (f", … ({len(items) - limit} more)" if len(items) > limit else "")


def fusion_rows(
    report: XlaReport, limit: int | None = None
) -> list[tuple[ModuleReport, Fusion, tuple[str, ...]]]:
    """The largest fusions of every module (by output bytes), with their row text."""
    items = [(m, f) for m in report.modules for f in m.top_fusions]
    items.sort(key=lambda mf: (-mf[1].output_bytes, -mf[1].instructions))
    out: list[tuple[ModuleReport, Fusion, tuple[str, ...]]] = []
    for m, f in items[:limit] if limit else items:
        out.append(
            (
                m,
                f,
                (
                    m.module_id,
                    f.name,
                    kind_label(f.kind),
                    f.shape,
                    size_bytes(f.output_bytes) if f.output_bytes else "0 B",
                    str(f.instructions),
                    ops_text(f),
                    f.op_name or DASH,
                ),
            )
        )
    return out


def heavy_rows(report: XlaReport) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for m in report.modules:
        for h in m.heavy_ops:
            rows.append(_heavy_row(m, h))
    return rows


def _heavy_row(m: ModuleReport, h: HeavyOp) -> tuple[str, ...]:
    return (
        m.module_id,
        h.opcode if h.opcode != "custom-call" else f"custom-call {h.detail}",
        h.shape,
        " × ".join(h.operand_shapes),
        h.detail if h.opcode != "custom-call" else "",
        "in a fusion" if h.fused else "on its own",
        h.op_name or DASH,
    )


def _diff_value(v: float | None, unit: str) -> str:
    if v is None:
        return "unavailable"
    if unit == "bytes":
        return size_bytes(v)
    if unit == "s":
        return f"{v:.2f} s"
    return f"{v:.0f}"


def diff_rows(rows: Sequence[DiffRow]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for r in rows:
        change = r.change
        if change is None:
            delta = DASH
        elif r.unit == "bytes":
            delta = ("+" if change >= 0 else "−") + size_bytes(abs(change)) if change else "0"
        elif r.unit == "s":
            delta = f"{change:+.2f} s"
        else:
            delta = f"{change:+.0f}" if change else "0"
        out.append((r.what, _diff_value(r.a, r.unit), _diff_value(r.b, r.unit), delta))
    return out
