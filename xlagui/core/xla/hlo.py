# Over 500 lines on purpose: one reader of one text format (XLA's HLO dump and its log lines),
# its parsers and the dataclasses they fill side by side.
"""What XLA did: the modules it compiled, read from the HLO dump of one run.

XLA writes, per compiled module, `module_NNNN.NAME.before_optimizations.txt` (the HLO that
TensorFlow handed over), `module_NNNN.NAME.cpu_after_optimizations.txt` (what it runs; the GPU
backend writes `...after_optimizations.txt`) and, next to it,
`...after_optimizations-buffer-assignment.txt`. TensorFlow/XLA offer no Python reader of those
files (`experimental_get_compiler_ir` gives the same text, and only for a `tf.function` you hold,
which Keras keeps to itself), so this module reads the text, and only these few fields of it:

- the module name (the `HloModule NAME,` header);
- each computation (`%name (...) -> ... {` … `}`; `ENTRY` marks the entry one);
- each instruction line `[ROOT] %name = SHAPE opcode(%operand, …), attr=…`: its name, result
  shape, opcode and operand names, plus, where present, `kind=` and `calls=` (fusions),
  `custom_call_target=` and the `"kind":` of a fusion's backend config (kCustom fusions), `window=`
  and `dim_labels=` (convolutions) and the metadata's `op_name=` (the Keras layer);
- in the buffer assignment, the `Total bytes used:` line and the sizes of `preallocated-temp`
  allocations;
- in the worker's log, TensorFlow's `Compiled NAME N times, compile time: T us` lines (logged with
  TF_CPP_VMODULE=device_compilation_profiler=1, which `transports.environment.child_settings` sets).

Everything else in the text is skipped. The instruction count is that of every computation in the
module (fused ones included), as `HloModule::instruction_count()` counts it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Container
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

TOP_FUSIONS = 15  # the largest fusions (by output bytes) kept per module in a run summary

_FILE_RE = re.compile(r"^module_(\d+)\.(.+?)\.(?:cpu_|gpu_)?after_optimizations\.txt$")
_HEADER_RE = re.compile(r"^HloModule\s+([^\s,]+)")
_COMPUTATION_RE = re.compile(r"^(ENTRY\s+)?%?([^\s(]+)\s*\(.*\{\s*$")
_INSTRUCTION_RE = re.compile(r"^\s*(?:ROOT\s+)?%?([^\s=]+)\s*=\s*(.*)$")
_OPCODE_RE = re.compile(r"\s*([a-z][a-z0-9-]*)\(")
_OPERAND_RE = re.compile(r"%([^\s,()]+)")
_ATTR_RES = {
    "kind": re.compile(r"\bkind=(k\w+)"),
    "calls": re.compile(r"\bcalls=%?([^\s,}]+)"),
    "target": re.compile(r'\bcustom_call_target="([^"]*)"'),
    "custom_kind": re.compile(r'"kind"\s*:\s*"([^"]*)"'),
    "window": re.compile(r"\bwindow=\{([^}]*)\}"),
    "dim_labels": re.compile(r"\bdim_labels=(\S+?)(?:,|$)"),
    "op_name": re.compile(r'\bop_name="([^"]*)"'),
}
_ARRAY_RE = re.compile(r"\b([a-z]+\d*)\[([\d,]*)\]")
_DTYPE_BYTES = {
    "pred": 1, "s4": 1, "u4": 1, "s8": 1, "u8": 1, "f8e4m3fn": 1, "f8e5m2": 1,
    "s16": 2, "u16": 2, "f16": 2, "bf16": 2,
    "s32": 4, "u32": 4, "f32": 4,
    "s64": 8, "u64": 8, "f64": 8, "c64": 8,
    "c128": 16,
}  # fmt: skip
_TOTAL_BYTES_RE = re.compile(r"^Total bytes used:\s*(\d+)")
_TEMP_RE = re.compile(r"^allocation \d+: size (\d+), preallocated-temp")
_COMPILED_RE = re.compile(r"Compiled (\S+) (\d+) times, compile time: (\d+) us")
HEAVY_OPCODES = ("convolution", "dot")


def shape_bytes(shape: str) -> int:
    """Bytes of an HLO shape such as `f32[64,60,60,64]{3,2,1,0}` or a tuple of them."""
    total = 0
    for dtype, dims in _ARRAY_RE.findall(shape):
        size = _DTYPE_BYTES.get(dtype)
        if size is None:
            continue
        n = 1
        for d in dims.split(","):
            if d:
                n *= int(d)
        total += n * size
    return total


def short_shape(shape: str) -> str:
    """`f32[64,60,60,64]{3,2,1,0}` → `f32[64,60,60,64]` (the layout is noise to a reader)."""
    return re.sub(r"\{[\d,]*\}", "", shape).strip()


@dataclass
class Instruction:
    name: str
    shape: str
    opcode: str
    operands: list[str]
    attrs: str  # the text after the operands, where the few attributes above are looked up

    def attr(self, key: str) -> str:
        m = _ATTR_RES[key].search(self.attrs)
        return m.group(1) if m else ""


@dataclass
class Computation:
    name: str
    entry: bool
    instructions: list[Instruction] = field(default_factory=list)


def _split_shape(rest: str) -> tuple[str, str]:
    """(result shape, text after it) of the right-hand side of an instruction line."""
    rest = rest.lstrip()
    if rest.startswith("("):  # a tuple shape: up to its matching parenthesis
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[: i + 1], rest[i + 1 :]
        return rest, ""
    shape, _, after = rest.partition(" ")
    return shape, after


def _parse_instruction(line: str) -> Instruction | None:
    m = _INSTRUCTION_RE.match(line)
    if not m:
        return None
    shape, after = _split_shape(m.group(2))
    op = _OPCODE_RE.match(after)
    if not op:
        return None
    start = op.end()
    depth, end = 1, len(after)
    for i in range(start, len(after)):
        depth += after[i] == "("
        depth -= after[i] == ")"
        if depth == 0:
            end = i
            break
    operands = _OPERAND_RE.findall(after[start:end])
    return Instruction(m.group(1), shape, op.group(1), operands, after[end + 1 :])


def parse_computations(text: str) -> tuple[str, list[Computation]]:
    """(module name, computations) of an HLO module's text."""
    name = ""
    comps: list[Computation] = []
    current: Computation | None = None
    for line in text.splitlines():
        if not name:
            h = _HEADER_RE.match(line)
            if h:
                name = h.group(1)
                continue
        if current is None:
            c = _COMPUTATION_RE.match(line)
            if c:
                current = Computation(c.group(2), bool(c.group(1)))
                comps.append(current)
            continue
        if line.strip() == "}":
            current = None
            continue
        ins = _parse_instruction(line)
        if ins is not None:
            current.instructions.append(ins)
    return name, comps


def count_instructions(text: str) -> int:
    return sum(len(c.instructions) for c in parse_computations(text)[1])


@dataclass
class Fusion:
    name: str
    kind: str  # kLoop, kInput, kOutput, kCustom (…)
    shape: str
    output_bytes: int
    instructions: int  # in its fused computation, parameters left out
    ops: dict[str, int]  # opcode → how many, inside
    op_name: str = ""  # the TensorFlow op it came from (metadata), when given


@dataclass
class HeavyOp:
    """A convolution or a matrix product (dot), or a library call that does one."""

    name: str
    opcode: str
    shape: str
    operand_shapes: list[str]
    detail: str = ""  # window and dimension labels of a convolution, a custom call's target
    fused: bool = False  # inside a fusion rather than in the entry computation
    op_name: str = ""


@dataclass
class ModuleReport:
    module_id: str  # "0112": XLA's number of the module in the dump
    name: str
    file: str  # the optimized HLO text, relative to the dump folder
    instructions_after: int
    instructions_before: int | None = None  # None: the dump has no before_optimizations file
    fusions_by_kind: dict[str, int] = field(default_factory=dict)
    fusions: int = 0
    heavy_ops: list[HeavyOp] = field(default_factory=list)
    top_fusions: list[Fusion] = field(default_factory=list)
    buffer_bytes: int | None = None  # "Total bytes used" of the buffer assignment
    temp_bytes: int | None = None  # of which the preallocated temporary buffer
    compile_seconds: float | None = None  # from the worker's log

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModuleReport:
        m = cls(
            module_id=str(d.get("module_id", "")),
            name=str(d.get("name", "")),
            file=str(d.get("file", "")),
            instructions_after=int(d.get("instructions_after", 0)),
            instructions_before=d.get("instructions_before"),
            fusions_by_kind={str(k): int(v) for k, v in d.get("fusions_by_kind", {}).items()},
            fusions=int(d.get("fusions", 0)),
            buffer_bytes=d.get("buffer_bytes"),
            temp_bytes=d.get("temp_bytes"),
            compile_seconds=d.get("compile_seconds"),
        )
        m.heavy_ops = [HeavyOp(**h) for h in d.get("heavy_ops", [])]
        m.top_fusions = [Fusion(**f) for f in d.get("top_fusions", [])]
        return m


@dataclass
class XlaReport:
    """What XLA did in one run: one `ModuleReport` per compiled module, in XLA's order."""

    dump_dir: str = ""
    modules: list[ModuleReport] = field(default_factory=list)

    @property
    def fusions(self) -> int:
        return sum(m.fusions for m in self.modules)

    def fusions_by_kind(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for m in self.modules:
            out.update(m.fusions_by_kind)
        return dict(out.most_common())

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> XlaReport | None:
        """A report from a run's summary; None for summaries written before there was one."""
        if not isinstance(d, dict):
            return None
        return cls(
            dump_dir=str(d.get("dump_dir", "")),
            modules=[ModuleReport.from_dict(m) for m in d.get("modules", [])],
        )

    def module_path(self, module: ModuleReport) -> Path:
        return Path(self.dump_dir) / module.file


def _fusion_kind(ins: Instruction) -> str:
    kind = ins.attr("kind") or "k?"
    if kind == "kCustom":
        custom = ins.attr("custom_kind")
        return f"kCustom ({custom.strip('_')})" if custom else kind
    return kind


def _fusion(ins: Instruction, kind: str, by_name: dict[str, Computation]) -> Fusion:
    """A top-level fusion, with the ops of the computation it calls."""
    inner = by_name.get(ins.attr("calls"))
    inside = inner.instructions if inner else []
    ops = Counter(i.opcode for i in inside if i.opcode != "parameter")
    return Fusion(
        name=ins.name,
        kind=kind,
        shape=short_shape(ins.shape),
        output_bytes=shape_bytes(ins.shape),
        instructions=sum(ops.values()),
        ops=dict(ops.most_common()),
        op_name=ins.attr("op_name"),
    )


def _heavy_op(ins: Instruction, shapes: dict[str, str], fused: bool) -> HeavyOp | None:
    """A heavy instruction (a convolution, a dot, a library call...), or None for another."""
    target = ins.attr("target") if ins.opcode == "custom-call" else ""
    if ins.opcode not in HEAVY_OPCODES and not target:
        return None
    detail = target
    if ins.opcode == "convolution":
        window, labels = ins.attr("window"), ins.attr("dim_labels")
        detail = ", ".join(x for x in (window, labels) if x)
    return HeavyOp(
        name=ins.name,
        opcode=ins.opcode,
        shape=short_shape(ins.shape),
        operand_shapes=[short_shape(shapes.get(o, "?")) for o in ins.operands],
        detail=detail,
        fused=fused,
        op_name=ins.attr("op_name"),
    )


def analyse_module(text: str, *, module_id: str = "", file: str = "") -> ModuleReport:
    """The `ModuleReport` of one optimized module's text (before-count, buffers and compile time
    are filled in by `read_dump`)."""
    name, comps = parse_computations(text)
    by_name = {c.name: c for c in comps}
    called = {ins.attr("calls") for comp in comps for ins in comp.instructions
              if ins.opcode == "fusion"}
    fusions: list[Fusion] = []
    kinds: Counter[str] = Counter()
    heavy: list[HeavyOp] = []
    for comp in comps:
        shapes = {i.name: i.shape for i in comp.instructions}
        fused = comp.name in called
        for ins in comp.instructions:
            if ins.opcode == "fusion" and not fused:
                kind = _fusion_kind(ins)
                kinds[kind] += 1
                fusions.append(_fusion(ins, kind, by_name))
            op = _heavy_op(ins, shapes, fused)
            if op is not None:
                heavy.append(op)
    # "Largest" by what a fusion writes: the bytes it moves matter more on a CPU than its op count.
    fusions.sort(key=lambda f: (-f.output_bytes, -f.instructions, f.name))
    return ModuleReport(
        module_id=module_id,
        name=name,
        file=file,
        instructions_after=sum(len(c.instructions) for c in comps),
        fusions_by_kind=dict(kinds.most_common()),
        fusions=sum(kinds.values()),
        heavy_ops=heavy,
        top_fusions=fusions[:TOP_FUSIONS],
    )


def read_buffer_assignment(path: Path) -> tuple[int | None, int | None]:
    """(total bytes used, preallocated temporary bytes) of a buffer-assignment file."""
    total: int | None = None
    temp = 0
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if total is None and (m := _TOTAL_BYTES_RE.match(line)):
                    total = int(m.group(1))
                elif m := _TEMP_RE.match(line):
                    temp += int(m.group(1))
    except OSError:
        return None, None
    return total, (temp if total is not None else None)


def _base_name(name: str) -> str:
    """The compiled function's name as both the log and the dump spell it:
    `__inference_f_11` and `a_inference_f_11__.35` are both `inference_f_11`."""
    name = re.sub(r"\.\d+$", "", name)
    name = re.sub(r"^a_(?=_?inference|_)", "", name)
    return name.strip("_")


# JAX's line for each compile, with `jax_log_compiles` on (`worker.backends`): "Finished XLA
# compilation of jit(train_step) in 1.398219585 sec"; its module is dumped as `jit_train_step`.
_JAX_COMPILED_RE = re.compile(r"Finished XLA compilation of jit\((\w+)\) in ([0-9.eE+-]+) sec")


def compile_times(log_path: Path) -> list[tuple[str, float]]:
    """(function name, seconds) of every XLA compilation the worker's log records, in order
    (TensorFlow's or JAX's lines)."""
    out: list[tuple[str, float]] = []
    try:
        with log_path.open(encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = _COMPILED_RE.search(line)
                if m:
                    out.append((m.group(1), int(m.group(3)) / 1e6))
                    continue
                j = _JAX_COMPILED_RE.search(line)
                if j:
                    out.append((f"jit_{j.group(1)}", float(j.group(2))))
    except OSError:
        pass
    return out


def _match_compile_times(modules: list[ModuleReport], times: list[tuple[str, float]]) -> None:
    """The k-th compilation of a function goes to the k-th module of that name (a function
    compiled for two batch shapes is two modules, compiled twice)."""
    queues: dict[str, list[float]] = {}
    for fn, secs in times:
        queues.setdefault(_base_name(fn), []).append(secs)
    for m in modules:
        base = _base_name(m.name)
        for key, q in queues.items():
            if q and (base == key or (base.startswith(key) and not base[len(key)].isalnum())):
                m.compile_seconds = q.pop(0)
                break


def read_dump(dump_dir: Path, log_path: Path | None = None,
              modules: Container[str] | None = None) -> XlaReport:
    """The `XlaReport` of a run's dump folder (empty when XLA compiled nothing); `modules`:
    only the modules of these names (a JAX worker's step functions)."""
    report = XlaReport(dump_dir=str(dump_dir))
    if not dump_dir.is_dir():
        return report
    for path in sorted(dump_dir.iterdir()):
        m = _FILE_RE.match(path.name)
        if not m or (modules is not None and m.group(2) not in modules):
            continue
        module = analyse_module(
            path.read_text(encoding="utf-8", errors="replace"),
            module_id=m.group(1),
            file=path.name,
        )
        prefix = f"module_{m.group(1)}.{m.group(2)}."
        before = dump_dir / f"{prefix}before_optimizations.txt"
        if before.is_file():
            module.instructions_before = count_instructions(
                before.read_text(encoding="utf-8", errors="replace")
            )
        buffers = path.with_name(path.name[: -len(".txt")] + "-buffer-assignment.txt")
        if buffers.is_file():
            module.buffer_bytes, module.temp_bytes = read_buffer_assignment(buffers)
        report.modules.append(module)
    if log_path is not None:
        _match_compile_times(report.modules, compile_times(log_path))
    return report


@dataclass(frozen=True)
class DiffRow:
    what: str
    a: float | None
    b: float | None
    unit: str = ""  # "", "bytes" or "s"

    @property
    def change(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return self.b - self.a


def totals(report: XlaReport) -> list[tuple[str, float | None, str]]:
    """The figures two reports are compared on: (what, value, unit)."""
    mods = report.modules

    def total(values: list[Any]) -> float | None:
        known = [v for v in values if v is not None]
        return float(sum(known)) if known and len(known) == len(values) else None

    rows: list[tuple[str, float | None, str]] = [
        ("modules", float(len(mods)), ""),
        ("instructions before", total([m.instructions_before for m in mods]), ""),
        ("instructions after", float(sum(m.instructions_after for m in mods)), ""),
        ("fusions", float(report.fusions), ""),
    ]
    for kind, n in sorted(report.fusions_by_kind().items()):
        rows.append((f"fusions {kind}", float(n), ""))
    ops = Counter(h.opcode if not h.detail or h.opcode != "custom-call" else h.detail
                  for m in mods for h in m.heavy_ops)  # fmt: skip
    for op, n in sorted(ops.items()):
        rows.append((f"{op} ops", float(n), ""))
    rows.append(("buffer memory", total([m.buffer_bytes for m in mods]), "bytes"))
    rows.append(("compile time", total([m.compile_seconds for m in mods]), "s"))
    return rows


def diff(a: XlaReport, b: XlaReport) -> list[DiffRow]:
    """Every figure of `totals` side by side (a figure one report lacks is None there)."""
    ta = {what: (v, unit) for what, v, unit in totals(a)}
    tb = {what: (v, unit) for what, v, unit in totals(b)}
    order = list(ta) + [w for w in tb if w not in ta]
    rows = []
    for what in order:
        unit = (ta.get(what) or tb[what])[1]
        # A kind of fusion or op one run lacks is none of them, not unknown.
        zero: float | None = 0.0 if what.startswith("fusions ") or what.endswith(" ops") else None
        va = ta[what][0] if what in ta else zero
        vb = tb[what][0] if what in tb else zero
        rows.append(DiffRow(what, va, vb, unit))
    return rows
