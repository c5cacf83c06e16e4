"""Where each step's time goes, in words and rows (issue 29): the top differences against the
baseline as sentences with their figures, the coverage per arm, the `not traced` row, and the
attribution table (every row's thread-time per step, per arm, sorted by its difference from the
baseline). One wording for the window's "Why" tab, the PNG, the Markdown and `xlagui inspect`.

The figures come from `why_data.Explain` (the saved `explain`); the kinds are the JSON's
strings (`pass`, `op_kind`), worded here and nowhere else.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xlagui.core.protocol.arms import parse_arm
from xlagui.core.protocol.identity import Role
from xlagui.present.levers import arm_label
from xlagui.present.units import DASH
from xlagui.present.why_data import BASELINE, NOT_TRACED, ArmProfile, Difference, Explain

COVERAGE_GOAL = 0.80  # the goal for every arm

PASS_WORDS = {
    "forward": ("forward pass", "forward passes"),
    "input_gradient": ("input gradient", "input gradients"),
    "weight_gradient": ("weight gradient", "weight gradients"),
    "optimizer": ("optimizer update", "optimizer updates"),
    "other": ("other work", "other work"),
}
OP_KIND_WORDS = {
    "convolution": ("convolution", "convolutions"),
    "depthwise_convolution": ("depthwise convolution", "depthwise convolutions"),
    "matmul": ("matrix multiply", "matrix multiplies"),
    "pooling": ("pooling", "poolings"),
    "normalization": ("normalization", "normalizations"),
    "elementwise": ("element-wise fusion", "element-wise fusions"),
    "reduction": ("reduction", "reductions"),
    "data_movement": ("data movement (copy, transpose, concatenate)",
                      "copies, transposes and concatenations"),
    "scatter_gather": ("scatter/gather", "scatters and gathers"),
    "other": ("other op", "other ops"),
}
# Layers that are not Keras layers: what they are called in a sentence.
SPECIAL_LAYERS = {"optimizer": "the optimizer", "loss": "the loss", "framework": "the framework"}

THREADS_NOTE = (
    "Thread-times add up across cores: several kernels run at once on a multi-core machine, so "
    "an arm's rows can add up to more than its step's wall time."
)
NOT_TRACED_NOTE = (
    "“not traced” is the share of the step in which no traced kernel ran: it is shown as its "
    "own row, never spread over the others."
)


def _word(table: dict[str, tuple[str, str]], key: str, plural: bool = False) -> str:
    words = table.get(key)
    if words is None:
        return key.replace("_", " ")
    return words[1] if plural else words[0]


def pass_words(value: str, plural: bool = False) -> str:
    return _word(PASS_WORDS, value, plural)


def op_kind_words(value: str, plural: bool = False) -> str:
    return _word(OP_KIND_WORDS, value, plural)


XLA_SIDE = str(Role.XLA)


def arm_words(arm: str) -> str:
    """"the baseline", "XLA jit_compile", or the arm's name when it is not one xlagui knows."""
    if arm == BASELINE:
        return "the baseline"
    if arm == XLA_SIDE:  # the comparison's XLA side, in whichever mode it was asked
        return "XLA"
    try:
        return arm_label(parse_arm(arm))
    except ValueError:
        return arm


def arm_short(arm: str) -> str:
    """A column heading: "baseline", "XLA jit_compile"."""
    return "baseline" if arm == BASELINE else arm_words(arm)


def sentence_start(words: str) -> str:
    """Words that open a sentence: "The baseline"; an arm's label as it is (it may be code)."""
    return "The baseline" if words == "the baseline" else words


def step_time(seconds: float | None) -> str:
    """A time per step, to a precision a person reads: 2.50 s, 0.04 s, 3.2 ms, 40 µs."""
    if seconds is None:
        return DASH
    v = abs(seconds)
    if v == 0:
        return "0 s"
    if v >= 0.0095:
        return f"{seconds:.2f} s"
    if v >= 0.00095:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} µs"


def row_words(layer: str, pass_: str, op_kind: str) -> str:
    """"the input gradient of block_1_depthwise's depthwise convolution"; "the optimizer's
    element-wise fusions"; "time no traced kernel covers"."""
    if layer == NOT_TRACED:
        return "time no traced kernel covers (not traced)"
    if layer in SPECIAL_LAYERS:
        return f"{SPECIAL_LAYERS[layer]}'s {op_kind_words(op_kind, plural=True)}"
    op = op_kind_words(op_kind)
    if pass_ == "other":
        return f"{layer}'s {op} (other work)"
    return f"the {pass_words(pass_)} of {layer}'s {op}"


def _lowered(text: str) -> str:
    return f" (lowered to {text})" if text else ""


def difference_sentence(d: Difference, explain: Explain) -> str:
    """"XLA jit_compile spends 0.88 s of its 2.50 s step in the input gradient of
    block_1_depthwise's depthwise convolution (lowered to base-dilated convolutions), where the
    baseline spends 0.04 s: 0.84 s more per step." """
    profile = explain.arms.get(d.arm)
    step = profile.step_seconds if profile is not None else None
    of_step = f" of its {step_time(step)} step" if step is not None else " per step"
    lowered = d.lowered_to or _lowered_from_rows(d, profile)
    more = "more" if d.change >= 0 else "less"
    return (
        f"{sentence_start(arm_words(d.arm))} spends {step_time(d.arm_seconds)}{of_step} in "
        f"{row_words(d.layer, d.pass_, d.op_kind)}{_lowered(lowered)}, where the baseline "
        f"spends {step_time(d.baseline_seconds)}: {step_time(abs(d.change))} {more} per step."
    )


def _lowered_from_rows(d: Difference, profile: ArmProfile | None) -> str:
    if profile is None:
        return ""
    key = (d.layer, d.pass_, d.op_kind)
    return next((r.lowered_to for r in profile.rows if r.key == key and r.lowered_to), "")


def differences(explain: Explain, n: int = 3) -> list[Difference]:
    """The top differences the file names; where it names none, the `n` rows of the arms
    farthest from the baseline's (the same rule: |arm − baseline|)."""
    if explain.top_differences:
        return list(explain.top_differences[:n])
    base = explain.baseline
    found: list[Difference] = []
    for profile in explain.others():
        for key in {r.key for r in profile.rows} | {r.key for r in (base.rows if base else ())}:
            if key[0] == NOT_TRACED:
                continue
            b = base.seconds(key) if base else 0.0
            found.append(Difference(profile.arm, *key, baseline_seconds=b,
                                    arm_seconds=profile.seconds(key)))
    found.sort(key=lambda d: -abs(d.change))
    return found[:n]


def top_sentences(explain: Explain, n: int = 3) -> list[str]:
    return [difference_sentence(d, explain) for d in differences(explain, n)]


@dataclass(frozen=True)
class GroupDifference:
    """A pass and op kind summed over every layer, for one arm against the baseline."""

    arm: str
    pass_: str
    op_kind: str
    baseline_seconds: float
    arm_seconds: float


def largest_group(explain: Explain, arm: str) -> GroupDifference | None:
    """The pass and op kind (summed over layers) where `arm` differs most from the baseline."""
    profile, base = explain.arms.get(arm), explain.baseline
    if profile is None or base is None:
        return None
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    for i, p in enumerate((base, profile)):
        for r in p.rows:
            if r.layer != NOT_TRACED:
                sums[(r.pass_, r.op_kind)][i] += r.seconds_per_step
    if not sums:
        return None
    (pass_, kind), (b, a) = max(sums.items(), key=lambda kv: abs(kv[1][1] - kv[1][0]))
    return GroupDifference(arm, pass_, kind, b, a)


def group_sentence(g: GroupDifference) -> str:
    """"Summed over layers, XLA jit_compile differs most in the depthwise convolutions' input
    gradients: 2.65 s per step against 0.12 s for the baseline." """
    what = (f"the {op_kind_words(g.op_kind, plural=True)}' {pass_words(g.pass_, plural=True)}"
            if g.pass_ != "other" else f"other work on {op_kind_words(g.op_kind, plural=True)}")
    return (f"Summed over layers, {arm_words(g.arm)} differs most in {what}: "
            f"{step_time(g.arm_seconds)} per step against {step_time(g.baseline_seconds)} for "
            "the baseline.")


TF_XLA = "TF+XLA"  # the XLA side beside an arm on another backend

# How much of TF+XLA's difference from the baseline an arm on another backend must share for the
# cost to be XLA's own (at least this share), or TensorFlow's path into XLA (at most 1 minus it).
SHARED_COST = 0.75


def _groups(profile: ArmProfile) -> dict[tuple[str, str], float]:
    """Thread-time per step by (pass, op kind), summed over layers (not traced left out)."""
    sums: dict[tuple[str, str], float] = defaultdict(float)
    for r in profile.rows:
        if r.layer != NOT_TRACED:
            sums[(r.pass_, r.op_kind)] += r.seconds_per_step
    return sums


def backend_arm(explain: Explain) -> ArmProfile | None:
    """The profile of the first arm on another Keras backend than TensorFlow (JAX's)."""
    for p in explain.others():
        try:
            if parse_arm(p.arm).backend != "tf":
                return p
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class BackendAgreement:
    """Where TF+XLA and an arm on another backend (Keras on JAX: XLA too, without TensorFlow)
    stand on the work where TF+XLA differs most from the baseline (`pass_`, `op_kind`, summed
    over layers), and where the two differ most from each other (`apart_*`)."""

    arm: str
    pass_: str
    op_kind: str
    xla_change: float  # TF+XLA − baseline, seconds per step
    arm_change: float  # the other backend's arm − baseline
    apart_pass: str
    apart_op_kind: str
    apart_xla: float  # TF+XLA's seconds per step there
    apart_arm: float  # the other arm's

    @property
    def share(self) -> float:
        """The share of TF+XLA's difference the other backend has too (1: all of it)."""
        return self.arm_change / self.xla_change if self.xla_change else 0.0


def backend_agreement(explain: Explain) -> BackendAgreement | None:
    """TF+XLA against the arm on another backend, on the work where TF+XLA differs most from
    the baseline; None without the three profiles."""
    base, xla, other = explain.baseline, explain.arms.get(XLA_SIDE), backend_arm(explain)
    if base is None or xla is None or other is None:
        return None
    b, x, o = _groups(base), _groups(xla), _groups(other)
    keys = set(b) | set(x) | set(o)
    if not keys:
        return None
    top = max(keys, key=lambda k: (abs(x.get(k, 0.0) - b.get(k, 0.0)), k))
    apart = max(keys, key=lambda k: (abs(o.get(k, 0.0) - x.get(k, 0.0)), k))
    return BackendAgreement(
        other.arm, *top, x.get(top, 0.0) - b.get(top, 0.0), o.get(top, 0.0) - b.get(top, 0.0),
        *apart, x.get(apart, 0.0), o.get(apart, 0.0))


def _group_words(pass_: str, op_kind: str) -> str:
    return (f"the {op_kind_words(op_kind, plural=True)}' {pass_words(pass_, plural=True)}"
            if pass_ != "other" else f"other work on {op_kind_words(op_kind, plural=True)}")


def agreement_sentence(a: BackendAgreement) -> str:
    """"Where TF+XLA differs most from the baseline, the depthwise convolutions' input gradients
    (+2.10 s a step), Keras on JAX differs by +1.95 s (93% of it): that cost is XLA's own, not
    TensorFlow's path into XLA; the two differ most in …" """
    other = arm_words(a.arm)
    where = _group_words(a.pass_, a.op_kind)
    # TF+XLA may differ by taking less time than the baseline: a saving, not a cost; and the
    # other backend may differ the other way, which no share of it says.
    noun = "cost" if a.xla_change >= 0 else "saving"
    # TensorFlow carries its own copy of XLA, of another version than jaxlib's: what only TF+XLA
    # has may be its path into XLA or that copy (docs/guide.md, "Keras on JAX is an arm too").
    if a.share >= SHARED_COST:
        verdict = f"that {noun} is XLA's own, not TensorFlow's path into XLA"
    elif a.share <= 1 - SHARED_COST:
        verdict = f"that {noun} is TensorFlow's: its path into XLA, or its own copy of XLA"
    else:
        verdict = (f"that {noun} is partly XLA's and partly TensorFlow's (its path into XLA, or "
                   "its own copy of XLA)")
    share = f"{a.share:.0%} of it" if a.share >= 0 else "the other way"
    sentence = (f"Where {TF_XLA} differs most from the baseline, {where} ({_signed(a.xla_change)} "
                f"a step), {other} differs by {_signed(a.arm_change)} ({share}): {verdict}")
    if (a.apart_pass, a.apart_op_kind) != (a.pass_, a.op_kind):
        sentence += (f"; TF+XLA and {other} differ most in "
                     f"{_group_words(a.apart_pass, a.apart_op_kind)}: "
                     f"{step_time(a.apart_xla)} against {step_time(a.apart_arm)} a step")
    return sentence + "."


def coverage_sentence(profile: ArmProfile) -> str:
    """"XLA jit_compile: a 2.50 s step; traced kernels ran during 71% of it, 29% (0.72 s) is
    not traced (below the 80% goal); 4.10 s of thread-time in all." """
    head = f"{sentence_start(arm_words(profile.arm))}: a {step_time(profile.step_seconds)} step"
    cov = profile.coverage
    if cov is None:
        return f"{head}; its coverage was not measured."
    missing = (f", {1 - cov:.0%} ({step_time((1 - cov) * profile.step_seconds)})"
               if profile.step_seconds is not None else f", {1 - cov:.0%}")
    goal = " (below the 80% goal)" if cov < COVERAGE_GOAL else ""
    return (f"{head}; traced kernels ran during {cov:.0%} of it{missing} is not traced{goal}; "
            f"{step_time(profile.thread_seconds)} of thread-time in all.")


def coverage_rows(explain: Explain) -> list[tuple[str, str, str, str]]:
    """(arm, step, coverage, thread-time per step), the baseline first."""
    return [(arm_short(p.arm), step_time(p.step_seconds),
             DASH if p.coverage is None else f"{p.coverage:.0%}", step_time(p.thread_seconds))
            for p in _ordered(explain)]


COVERAGE_COLUMNS = ("arm", "step", "coverage", "thread-time")


def _ordered(explain: Explain) -> list[ArmProfile]:
    base = explain.baseline
    return ([base] if base is not None else []) + explain.others()


@dataclass(frozen=True)
class AttributionTable:
    """The attribution as a table: `columns`, `rows` of text, and per row the numbers its
    cells sort by (`numbers[i][column]`), sorted by the largest |arm − baseline| first, the
    `not traced` row last."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    numbers: tuple[dict[int, float], ...]
    differences: tuple[float, ...]  # per row: the largest arm − baseline (signed)


def attribution_table(explain: Explain, limit: int | None = None) -> AttributionTable:
    """Every (layer, pass, op kind) of any arm: its thread-time per step in each arm, and each
    arm's difference from the baseline; `limit` keeps the rows that differ most (and the
    `not traced` row)."""
    profiles = _ordered(explain)
    others = [p for p in profiles if p.arm != BASELINE]
    base = explain.baseline
    keys = list(dict.fromkeys(r.key for p in profiles for r in p.rows))
    # Beside an arm on another backend, the XLA side is TensorFlow's: "TF+XLA" (issue 39).
    short = {p.arm: TF_XLA if p.arm == XLA_SIDE and backend_arm(explain) is not None
             else arm_short(p.arm) for p in profiles}
    columns = ("layer", "pass", "op kind", *(short[p.arm] for p in profiles),
               *(f"{short[p.arm]} − baseline" for p in others if base is not None))
    scored: list[tuple[float, float, tuple[str, ...], dict[int, float]]] = []
    for key in keys:
        values = [p.seconds(key) for p in profiles]
        deltas = [p.seconds(key) - base.seconds(key) for p in others] if base else []
        largest = max(deltas, key=abs, default=0.0)
        traced = key[0] != NOT_TRACED
        cells = (key[0], pass_words(key[1]) if traced else DASH,
                 op_kind_words(key[2]) if traced else DASH,
                 *(step_time(v) for v in values), *(_signed(d) for d in deltas))
        numbers = {3 + i: v for i, v in enumerate([*values, *deltas])}
        order = -1.0 if key[0] == NOT_TRACED else abs(largest)  # not traced: last
        scored.append((order, largest, cells, numbers))
    scored.sort(key=lambda s: -s[0] if s[0] >= 0 else float("inf"))
    kept = [s for s in scored if s[0] < 0]
    ranked = [s for s in scored if s[0] >= 0]
    chosen = (ranked[:limit] if limit is not None else ranked) + kept
    return AttributionTable(columns, tuple(s[2] for s in chosen), tuple(s[3] for s in chosen),
                            tuple(s[1] for s in chosen))


def _signed(seconds: float) -> str:
    if seconds == 0:
        return "0 s"
    return ("+" if seconds > 0 else "−") + step_time(abs(seconds))


def difference_lines(explain: Explain, n: int = 3) -> list[str]:
    """The top differences, then the largest summed difference of each arm."""
    agreement = backend_agreement(explain)
    return [*top_sentences(explain, n),
            *(group_sentence(g) for p in explain.others()
              if (g := largest_group(explain, p.arm)) is not None),
            *([agreement_sentence(agreement)] if agreement is not None else [])]


def coverage_lines(explain: Explain) -> list[str]:
    return [coverage_sentence(p) for p in _ordered(explain)]


def explain_lines(explain: Explain, n: int = 3) -> list[str]:
    """Everything the "why" says of the time: the differences, the coverage, the notes."""
    return [*difference_lines(explain, n), *coverage_lines(explain), THREADS_NOTE,
            NOT_TRACED_NOTE]
