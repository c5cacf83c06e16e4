"""XLA's instruction names → the TensorFlow op each came from, read from the optimized HLO that
xlagui dumps (`XLA_FLAGS=--xla_dump_to`, `core/xla/hlo.py`).

A profiled thunk is named by its instruction (`convolution-base-dilated.3`, `wrapped_scatter.2`);
the instruction's `metadata={op_name=…}` is the path of the TensorFlow op it came from. A fusion
made by XLA (`wrapped_iota`, `concatenate_bitcast_fusion.2`) often carries none itself: its op
is found inside the computation it calls (the root's, else the first instruction's that has one,
following nested calls). Some instructions XLA made have no op anywhere (the iotas, the
index-tracking `reduce-window` and the `concatenate` that XLA:CPU builds for a `MaxPoolGrad`):
they take the op of the nearest instruction that uses their result (breadth-first, a few steps),
else of the nearest operand: the op they were made for; ops every layer shares (`zeros_like`,
`XLA_Args`) are passed over. A convolution or dot XLA rewrote without its metadata (XLA:CPU
rewrites a depthwise filter gradient into a dense `convolution` of C × C filters, and
dilated ones into `convolution-window-dilated`) is matched instead with the module before
optimization (`before_text`): the same window and the same dimensions (1s aside), in order.
Neighbours are asked only for an op of the same family (a convolution's, a matmul's).
"""

from __future__ import annotations

import re
from pathlib import Path

from xlagui.core.explain.ops import JAX_GROUPED, JAX_WEIGHTS, is_jax_op
from xlagui.core.xla.hlo import Computation, Instruction, parse_computations

_AFTER_RE = re.compile(r"^module_\d+\.(.+?)\.(?:cpu_|gpu_)?after_optimizations\.txt$")


def _called_op(ins: Instruction, by_name: dict[str, Computation], depth: int = 0) -> str:
    called = by_name.get(ins.attr("calls"))
    if called is None or depth > 8:
        return ""
    roots = [i for i in called.instructions if i.name == (called.instructions[-1].name)]
    # On JAX, XLA fuses a weight gradient's convolution or dot into the optimizer's update of
    # that weight (the fusion's root is Adam's): the heavy instruction is what it computes.
    heavy = [i.attr("op_name") for i in called.instructions if i.opcode in HEAVY]
    jax_heavy = next((op for op in heavy if is_jax_op(op)), "")
    if jax_heavy:
        return jax_heavy
    for candidate in roots + called.instructions:
        op = candidate.attr("op_name") or _called_op(candidate, by_name, depth + 1)
        if op:
            return op
    return ""


NEIGHBOUR_STEPS = 6
HEAVY = ("convolution", "dot")
_SHARED_OPS = ("zeros_like", "ones_like", "XLA_Args", "XLA_Retvals", "Const")
_HEAVY_OPS = ("Conv", "conv", "depthwise", "MatMul", "Einsum", "einsum", "BatchMatMul")
_DIMS_RE = re.compile(r"\[([\d,]*)\]")


def _shared(op: str) -> bool:
    return any(part.startswith(_SHARED_OPS) for part in op.split("/"))


def _signature(ins: Instruction) -> tuple[str, frozenset[int]]:
    m = _DIMS_RE.search(ins.shape)
    dims = frozenset(int(d) for d in m.group(1).split(",") if d) if m else frozenset()
    return ins.attr("window"), dims - {1}


def _heavy_ops_before(before_text: str) -> dict[tuple[str, frozenset[int]], list[str]]:
    out: dict[tuple[str, frozenset[int]], list[str]] = {}
    for comp in parse_computations(before_text)[1]:
        for ins in comp.instructions:
            op = ins.attr("op_name")
            if ins.opcode in HEAVY and op:
                out.setdefault(_signature(ins), []).append(op)
    return out


def _nearest(start: str, links: dict[str, list[str]], own: dict[str, str],
             heavy: bool = False) -> str:
    """The op of the nearest instruction reached through `links` from `start`."""
    seen, frontier = {start}, [start]
    for _ in range(NEIGHBOUR_STEPS):
        nxt = []
        for name in frontier:
            for other in links.get(name, ()):
                if other in seen:
                    continue
                op = own.get(other, "")
                if op and not _shared(op) and (not heavy or any(h in op for h in _HEAVY_OPS)):
                    return op
                seen.add(other)
                nxt.append(other)
        frontier = nxt
    return ""


def _computation_ops(comp: Computation, by_name: dict[str, Computation],
                     before: dict[tuple[str, frozenset[int]], list[str]]) -> dict[str, str]:
    own = {i.name: i.attr("op_name") or _called_op(i, by_name) for i in comp.instructions}
    heavy = {i.name for i in comp.instructions if i.opcode in HEAVY}
    for i in comp.instructions:
        if i.name in heavy and not own[i.name]:
            ops = before.get(_signature(i))
            if ops:
                own[i.name] = ops.pop(0)
    users: dict[str, list[str]] = {}
    operands = {i.name: i.operands for i in comp.instructions}
    for i in comp.instructions:
        for o in i.operands:
            users.setdefault(o, []).append(i.name)
    out = {}
    for name, op in own.items():
        h = name in heavy
        if not op or _shared(op):  # a shared op says nothing of the layer: a neighbour may
            op = _nearest(name, users, own, h) or _nearest(name, operands, own, h) or op
        if op:
            out[name] = op
    return out


# JAX names the entry's parameters by where they sit in the step's arguments: `state[0][k]` are
# the trainable weights (Keras' JAX state tuple: trainable, non-trainable, optimizer, metrics).
_TRAINABLE_PREFIX = "state[0]"
_BATCH_INPUT = "data[0]"  # the batch's images: its first dimension is the batch
_FIRST_DIM_RE = re.compile(r"\[(\d+)")
# A depthwise convolution: its forward pass and input gradient group the features, its filter
# gradient the batch.
_GROUPS_RE = re.compile(r"(?:feature|batch)_group_count=(\d+)")


def _dims(ins: Instruction) -> tuple[int, ...]:
    """Its result's dimensions in any order, 1s aside (XLA reshapes a depthwise filter's
    [3,3,C,1] gradient to [3,3,C] and lays out others transposed)."""
    m = _DIMS_RE.search(ins.shape)
    return tuple(sorted(int(d) for d in m.group(1).split(",") if d and d != "1")) if m else ()


def _grouped(ins: Instruction, by_name: dict[str, Computation], depth: int = 0) -> bool:
    """Whether `ins` is (or fuses) a convolution of more than one feature group."""
    m = _GROUPS_RE.search(ins.attrs) if ins.opcode == "convolution" else None
    if m and int(m.group(1)) > 1:
        return True
    called = by_name.get(ins.attr("calls"))
    return called is not None and depth < 8 and any(
        _grouped(i, by_name, depth + 1) for i in called.instructions)


def _contains(outer: tuple[int, ...], inner: tuple[int, ...]) -> bool:
    """Whether the multiset of dimensions `inner` is within `outer`."""
    rest = list(outer)
    for d in inner:
        if d not in rest:
            return False
        rest.remove(d)
    return True


def _jax_marked(ops: dict[str, str], comps: list[Computation],
                by_name: dict[str, Computation], before_text: str = "") -> dict[str, str]:
    """JAX's op names with what the primitive does not say (`ops.where_jax`): a grouped
    convolution (its own group count, or its op's before optimization: XLA:CPU rewrites a
    depthwise filter gradient into a dense C × C convolution), and a gradient that computes a
    trainable weight's gradient: its result has the weight's shape, or holds it without the
    batch (the rewritten depthwise filter gradient's [C,3,3,C] for a [3,3,C,1] filter)."""
    params = [i for c in comps if c.entry for i in c.instructions if i.opcode == "parameter"]
    weights = {_dims(i) for i in params if i.attr("op_name").startswith(_TRAINABLE_PREFIX)}
    batches = {int(m.group(1)) for i in params if i.attr("op_name") == _BATCH_INPUT
               and (m := _FIRST_DIM_RE.search(i.shape))}
    grouped = {i.attr("op_name") for c in parse_computations(before_text)[1]
               for i in c.instructions if i.opcode == "convolution"
               and (m := _GROUPS_RE.search(i.attrs)) and int(m.group(1)) > 1} \
        if before_text else set()
    every = {i.name: i for c in comps for i in c.instructions}
    ops = dict(ops)
    for one in every.values():
        # A fusion around a convolution or dot is that op's (XLA:CPU's YNNPACK fusions hold
        # a weight gradient's convolution, stripped of its metadata and matched above, whose
        # user is the optimizer's update).
        called = by_name.get(one.attr("calls"))
        heavy = [ops.get(i.name, "") for i in called.instructions
                 if i.opcode in HEAVY] if called is not None else []
        found = next((op for op in heavy if is_jax_op(op)), "")
        if found:
            ops[one.name] = found
    out = {}
    for name, op in ops.items():
        ins = every.get(name)
        if ins is not None and is_jax_op(op):
            if op in grouped or _grouped(ins, by_name):
                op += JAX_GROUPED
            dims = _dims(ins)
            if "transpose(" in op and (dims in weights or (
                    not batches & set(dims) and any(len(w) > 1 and _contains(dims, w)
                                                    for w in weights))):
                op += JAX_WEIGHTS
        out[name] = op
    return out


def op_names(text: str, before_text: str = "") -> dict[str, str]:
    """{instruction name: op_name} of an optimized HLO module's text (`before_text`: the same
    module before optimization, where a rewritten convolution's op is found); an instruction
    with no op (its own, its fused computation's, its match's or a neighbour's) is left out."""
    _, comps = parse_computations(text)
    by_name = {c.name: c for c in comps}
    before = _heavy_ops_before(before_text) if before_text else {}
    out: dict[str, str] = {}
    for comp in comps:
        out.update(_computation_ops(comp, by_name, before))
    return _jax_marked(out, comps, by_name, before_text)


def qualified(module: str, instruction: str) -> str:
    """The key of an instruction of one module: two modules may both have a `fusion.1`."""
    return f"{module}/{instruction}"


def dump_op_names(dump_dir: Path, modules: set[str] | None = None) -> dict[str, str]:
    """{instruction name: op_name} of every optimized module in a dump folder (only those named
    in `modules`, the `hlo_module` of a trace's thunks, when given); each instruction also
    under `qualified(module, name)`, which a thunk that names its module is looked up by."""
    out: dict[str, str] = {}
    if not dump_dir.is_dir():
        return out
    for path in sorted(dump_dir.iterdir()):
        m = _AFTER_RE.match(path.name)
        if not m or (modules is not None and m.group(1) not in modules):
            continue
        before = path.with_name(path.name.replace(
            "cpu_after_optimizations", "before_optimizations").replace(
            "gpu_after_optimizations", "before_optimizations"))
        found = op_names(
            path.read_text(encoding="utf-8", errors="replace"),
            before.read_text(encoding="utf-8", errors="replace") if before.is_file() else "")
        out.update(found)
        out.update({qualified(m.group(1), k): v for k, v in found.items()})
    return out
