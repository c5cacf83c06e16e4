"""The History list in words: each saved comparison's row (when, which arms on what, the
machine, what was run, the verdict in brief) and the longer text of each cell's tooltip. The
window's History tab and `bench/snapshot_words.py` show these rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.analysis.stats import NOT_COMPARED
from xlagui.core.protocol.identity import Role
from xlagui.present.format import DASH, created, runs_done
from xlagui.present.intervals import pairs_noun
from xlagui.present.machine_load import busy_mark, is_busy, load_lines
from xlagui.present.report import cpu_words as cpu_words  # re-exported: History's words
from xlagui.present.report import history_title
from xlagui.present.verdicts import history_verdict, recommendation_sentence

if TYPE_CHECKING:
    from xlagui.core.analysis.pairs import ArmResult
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.results.history import HistoryItem

HISTORY_COLUMNS = ("When", "Comparison", "Machine", "Runs", "Verdict")

def machine(item: HistoryItem) -> str:
    """The machine a comparison was measured on, by what tells it apart to a person: its CPU
    and core count ("Intel Xeon Platinum 8480+, 16 cores"); its name only where the record
    says nothing of its CPU (comparisons from before this was recorded, on a GPU)."""
    cpu = cpu_words(item.cpu)
    cores = f"{item.cpu_count} core{'s' if item.cpu_count != 1 else ''}" if item.cpu_count else ""
    if cpu:
        return f"{cpu}, {cores}" if cores else cpu
    name = item.hostname or item.machine
    return f"{name} ({cores})" if cores else name


def machine_tip(item: HistoryItem) -> str:
    """The machine in full: the row's words, then the CPU as recorded, the computer's name,
    the SSH host it was reached by, the device it trained on."""
    lines = [machine(item)]
    lines += [f"CPU: {item.cpu}" + (f", {item.cpu_count} logical CPUs" if item.cpu_count else "")
             ] if item.cpu else []
    if item.hostname:
        lines.append(f"Computer's name: {item.hostname}")
    if item.machine and item.machine != item.hostname:
        lines.append(f"Reached as: {item.machine}")
    if item.device:
        lines.append(f"Device: {item.device}")
    return "\n".join(lines)


def runs(item: HistoryItem) -> str:
    """What was run: "speed only, 8 pairs" for a speed-only comparison (no training runs are
    its plan), else its training runs ("2", "1 + 1 interrupted")."""
    pairs = f"{item.pairs} {pairs_noun(item.pairs)}" if item.pairs else ""
    if item.quick:
        return f"speed only, {pairs}" if pairs else "speed only"
    if not (item.runs_finished or item.runs_interrupted):
        return f"no training run, {pairs}" if pairs else "none"
    return runs_done(item.runs_finished, item.runs_interrupted)


def runs_tip(item: HistoryItem) -> str:
    pairs = f"{item.pairs} interleaved {pairs_noun(item.pairs)} of timed blocks"
    if item.quick:
        return f"A speed-only comparison: {pairs}, no training runs."
    return f"Training runs: {runs(item)}, after {pairs}." if item.pairs else ""


def _arm_brief(a: ArmResult) -> str:
    """One arm in a few words: "XLA 2.00× faster", "bf16 no clear difference"."""
    name = "XLA" if a.variant == Role.XLA else a.arm
    if not a.valid:
        return f"{name} not valid"
    if not a.ratio:
        return f"{name} {DASH}"
    speedup = 1 / a.ratio
    if a.low and a.high and a.low <= 1 <= a.high:
        return f"{name} no clear difference"
    return f"{name} {speedup:.2f}× faster" if speedup >= 1 else f"{name} {a.ratio:.2f}× slower"


def _brief(c: Comparison) -> str:
    if c.verdict_kind == NOT_COMPARED:
        return "not compared"
    if c.speedup is None:
        return "too few measurements for a speed"
    if not c.valid:
        return "NOT A VALID COMPARISON"
    arms = c.interleaved.arms if c.interleaved is not None else []
    if arms:
        star = {c.recommended_arm} if len(arms) > 1 else set()
        return "; ".join(_arm_brief(a) + (" ★" if a.arm in star else "") for a in arms)
    s = c.speedup
    if s.low is not None and s.high is not None and s.low <= 1 <= s.high:
        return "XLA no clear difference"
    return f"XLA {s.value:.2f}× faster" if s.value >= 1 else f"XLA {1 / s.value:.2f}× slower"


def verdict(item: HistoryItem) -> str:
    """The verdict in brief, each arm's speed per step against the baseline ("XLA 2.00×
    faster; bf16 no clear difference ★"); the whole sentence is `verdict_tip`'s. A comparison
    saved in words keeps its first sentence."""
    if item.comparison is not None:
        brief = _brief(item.comparison)
        i = item.comparison.interleaved
        mark = busy_mark(i.machine if i is not None else None)
        return f"{brief} ({mark})" if mark else brief
    words = item.saved_verdict
    return words.split(". ", 1)[0].rstrip(".") if words else "not compared"


def verdict_tip(item: HistoryItem) -> str:
    """The verdict in full, with the recommendation among the arms when there is one."""
    text = history_verdict(item)
    c = item.comparison
    if is_busy(c):
        text = "\n\n".join([text, *load_lines(c)])
    recommendation = recommendation_sentence(c.recommendation) if c is not None else ""
    return f"{text}\n\n{recommendation}" if text and recommendation else text or recommendation


def row(item: HistoryItem) -> tuple[str, ...]:
    """The row of `HISTORY_COLUMNS`."""
    return (created(item.created), history_title(item), machine(item), runs(item), verdict(item))


def row_tips(item: HistoryItem) -> tuple[str, ...]:
    """Each cell's tooltip, in `HISTORY_COLUMNS`' order: where the cell is elided, all of it."""
    return (item.created, f"{history_title(item)}\n{item.folder}", machine_tip(item),
            runs_tip(item), verdict_tip(item))
