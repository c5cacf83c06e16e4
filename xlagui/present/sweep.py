"""A sweep in words: the plan before it starts, each cell's row, a failed cell's reason, the
progress and ETA, where each arm wins, loses or ties along each axis, and `sweep.md`.

The CLI, the window's Sweep tab and `sweep.md` all take their words from here; the verdicts
themselves are data (`xlagui.core.sweep.flips`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xlagui.core.measure.transports import MachineError
from xlagui.core.protocol.settings import SETTING
from xlagui.core.sweep.cell import CellFailure, CellResult, CellStatus, CellWords
from xlagui.core.sweep.flips import UNCLAIMED, Line, Verdict, lines, single
from xlagui.core.sweep.plan import (
    ARMS,
    HOST,
    LEVER_PREFIX,
    MODEL,
    SETTING_AXES,
    Cell,
    SweepPlan,
)
from xlagui.core.sweep.result import SweepResult
from xlagui.present.csv_notes import note_words
from xlagui.present.hosts import error_message as machine_error_message
from xlagui.present.machine_load import BUSY_MARK
from xlagui.present.model_files import error_text, refusal_text
from xlagui.present.scan_problems import problems_text
from xlagui.present.units import DASH, duration, speed_range, speed_words


def cell_refusal(exc: BaseException) -> str:
    """Why a cell could not run, in one line: a machine's failure as `present.hosts` says it,
    a model file's as `present.model_files` does, any other refusal as it says it."""
    if isinstance(exc, MachineError):
        return machine_error_message(exc)
    return refusal_text(exc)


# Every front end's words for what a cell's core returns as data (`CellJob.words`).
CELL_WORDS = CellWords(problems=problems_text, refusal=cell_refusal, error=error_text,
                       csv_notes=note_words)

VERDICT_WORDS = {Verdict.FASTER: "faster", Verdict.SLOWER: "slower", Verdict.TIES: "ties",
                 Verdict.UNKNOWN: "not measured", Verdict.BUSY: "measured on a busy machine"}
# Each axis's noun: a setting's words from its entry ("batch size").
AXIS_NOUNS = {**{name: SETTING[name].words for name in SETTING_AXES}, MODEL: "model",
              ARMS: "arms", HOST: "host"}
STATUS_WORDS = {CellStatus.DONE: "done", CellStatus.FAILED: "failed",
                CellStatus.INTERRUPTED: "stopped (runs again on resume)"}
FAILURE_WORDS = {
    CellFailure.SETTINGS: "cannot run with these settings",
    CellFailure.MACHINE: "the host could not take it",
    CellFailure.WORKER: "a worker failed",
    CellFailure.NO_RATIO: "no ratio was measured",
    CellFailure.CRASH: "it crashed",
    CellFailure.NODE_LOST: "its node was lost every time it ran",
    CellFailure.NO_NODE: "the host could not take it: no node of the cluster has CPUs",
    CellFailure.NODE_OUT_OF_MEMORY: "a worker failed: Ray's memory monitor ended the cell's "
    "task: its node ran out of memory",
}


def axis_noun(axis: str) -> str:
    if axis.startswith(LEVER_PREFIX):
        return f"{axis[len(LEVER_PREFIX):]} setting"
    return AXIS_NOUNS.get(axis, axis)


def value_words(axis: str, value: str) -> str:
    """One value of an axis as a sentence says it: "batch 128", "64 px", "threads 2"."""
    if axis in SETTING_AXES:  # as its entry says a value (`Setting.cell`)
        return (SETTING[axis].cell or f"{axis} {{}}").format(value)
    if axis == HOST:
        return f"on {value}"
    if axis == ARMS:
        return f"arms {value}"
    if axis.startswith(LEVER_PREFIX):
        return f"{axis[len(LEVER_PREFIX):]} {value}"
    return value


def plan_words(plan: SweepPlan, kept: Sequence[CellResult] = ()) -> str:
    """The plan, said before it starts: "4 cells (2 finished already), 50 s of measuring
    each, about 6:00 for the 2 to run (budget 6:00)"."""
    total = len(plan.cells)
    missing = total - len(kept)
    per_cell = plan.expected_seconds / total if total else 0.0
    text = f"{total} cell{'s' if total != 1 else ''}"
    if kept and missing == 0:
        return text + ", all finished already: nothing to run"
    if kept:
        text += f" ({len(kept)} finished already)"
    text += (f", {plan.cell_budget_seconds} s of measuring each, about "
             f"{duration(per_cell * missing)} for the {missing} to run"
             f" (budget {duration(plan.total_budget_seconds)})")
    return text


def cell_title(cell: Cell) -> str:
    """A cell's settings in a line: "batch 16, 64 px, jit"."""
    return ", ".join(value_words(n, v) for n, v in cell.settings) or "the one cell"


def arm_figure(result: CellResult, arm: str) -> str:
    """An arm's speed per step in the cell (baseline ÷ arm step time) in words, with its 95%
    interval: "1.25× faster (1.20–1.31× faster)", "1.52× slower (1.47–1.56× slower)"; — when
    it has none."""
    found = result.arm(arm)
    if found is None or not found.ratio:
        return DASH
    text = speed_words(1 / found.ratio)
    if found.low and found.high:
        text += f" ({speed_range(1 / found.high, 1 / found.low)})"
    if not found.valid:
        text += " not valid"
    if found.busy:
        text += f" ({BUSY_MARK})"
    return text


def reason_words(result: CellResult) -> str:
    """Why a cell failed, with its facts: "cannot run with these settings: batch size 500 is
    larger than…"; "" when it did not."""
    if result.status != CellStatus.FAILED:
        return ""
    try:
        words = FAILURE_WORDS[CellFailure(result.failure)]
    except ValueError:
        words = "failed"
    return f"{words}: {result.reason}" if result.reason else words


def status_words(result: CellResult) -> str:
    text = STATUS_WORDS.get(result.status, str(result.status))
    if result.attempts > 1:
        lost = ", ".join(result.lost_nodes) or "a lost node"
        text += f" (attempt {result.attempts}: {lost} lost)"
    return text


def arms_of(results: Sequence[CellResult]) -> list[str]:
    seen: list[str] = []
    for r in results:
        seen += [a.arm for a in r.arms if a.arm not in seen]
    return seen


def table(plan: SweepPlan, results: Sequence[CellResult]) -> tuple[list[str], list[list[str]]]:
    """The header and one row per cell (in the plan's order, cells not run yet too): each
    axis's value, each arm's speed-up with its interval, the status and the reason."""
    by_key = {r.key: r for r in results}
    arms = arms_of(results)
    header = [axis_noun(a.name) for a in plan.axes] + [f"{a} speed-up" for a in arms] + [
        "status", "reason"]
    rows = []
    for cell in plan.cells:
        values = [v for _, v in cell.settings]
        result = by_key.get(cell.key)
        if result is None:
            rows.append([*values, *(DASH for _ in arms), "to run", ""])
            continue
        rows.append([*values, *(arm_figure(result, a) for a in arms), status_words(result),
                     reason_words(result)])
    return header, rows


def line_sentence(line: Line) -> str:
    """"jit faster from batch 128 up at 64 px; slower below", "bf16 ties at every batch size",
    "jit slower at batch 16–32, ties at batch 64, faster at batch 128", "jit slower for cnn,
    faster for mixer at batch 16, 64 px"."""
    where = _where(line.context)
    among = "".join(f" (arms {v})" for n, v in line.context if n == ARMS)
    host = f"On {line.host}: " if line.host else ""
    s = line.stretches
    if len(s) == 1:
        return f"{host}{line.arm} {VERDICT_WORDS[s[0].verdict]} at every " \
               f"{axis_noun(line.axis)}{where}{among}"
    numeric = all(v.isdigit() for st in s for v in st.values)
    if len(s) == 2 and numeric and not UNCLAIMED & {s[0].verdict, s[1].verdict}:
        return (f"{host}{line.arm} {VERDICT_WORDS[s[1].verdict]} from "
                f"{value_words(line.axis, s[1].values[0])} up{where}; "
                f"{VERDICT_WORDS[s[0].verdict]} below{among}")
    parts = [f"{VERDICT_WORDS[st.verdict]} {_preposition(line.axis)} "
             f"{_values(line.axis, st.values, numeric)}" for st in s]
    return f"{host}{line.arm} {', '.join(parts)}{where}{among}"


def _preposition(axis: str) -> str:
    return "for" if axis == MODEL else "at"


def _where(context: Sequence[tuple[str, str]]) -> str:
    """" at batch 16, 64 px for cnn": the settings a line holds (arm lists are said apart)."""
    held = [(n, v) for n, v in context if n not in (ARMS, MODEL)]
    model = next((v for n, v in context if n == MODEL), None)
    text = f" at {', '.join(value_words(n, v) for n, v in held)}" if held else ""
    return f"{text} for {model}" if model else text


def _values(axis: str, values: tuple[str, ...], numeric: bool) -> str:
    if len(values) == 1:
        return value_words(axis, values[0])
    if numeric:
        return value_words(axis, f"{values[0]}–{values[-1]}")
    return ", ".join(value_words(axis, v) for v in values)


def sentences(plan: SweepPlan, results: Sequence[CellResult]) -> list[str]:
    """Where each arm wins, loses or ties along each swept axis, host by host, and for each
    value of a swept setting that is not a number (a model, oneDNN on or off) on its own: an
    arm with one verdict in every such cell in one sentence; else every line along which it
    flips, then the verdict it keeps everywhere else (or every line, when those differ or a
    cell was not measured). Lines run along the numeric axes when there are any (a model is
    not a point on a line). With nothing swept, each arm's verdict in the one cell."""
    found = lines(plan, results)
    if not found:
        return [f"{'On ' + host + ': ' if host else ''}{arm} {VERDICT_WORDS[verdict]}"
                for host, arm, verdict in single(plan, results)]
    numeric = {a.name for a in plan.axes if a.values and all(v.isdigit() for v in a.values)}
    along_numbers = [line for line in found if line.axis in numeric]
    if along_numbers:
        found = along_numbers
    groups: dict[tuple[str, str, tuple[tuple[str, str], ...]], list[Line]] = {}
    for line in found:
        held = tuple((n, v) for n, v in line.context if n not in numeric) if along_numbers \
            else ()
        groups.setdefault((line.host, line.arm, held), []).append(line)
    out: list[str] = []
    for (host, arm, held), mine in groups.items():
        out += _arm_sentences(host, arm, mine, held)
    return out


def _arm_sentences(host: str, arm: str, mine: list[Line],
                   held: tuple[tuple[str, str], ...] = ()) -> list[str]:
    """One arm's sentences on one host, at one value of each setting that is not a number
    (`held`): a line each while there are few or some cells were not measured; else one
    sentence for a verdict kept everywhere."""
    if len(mine) == 1:
        return [line_sentence(mine[0])]
    on = f"On {host}: " if host else ""
    where = _where(held)
    flipping = [line for line in mine if line.flips]
    steady = [line for line in mine if not line.flips]
    kept = {st.verdict for line in steady for st in line.stretches}
    if len(kept) != 1 or UNCLAIMED & kept:
        return [line_sentence(line) for line in flipping + steady]
    verdict = VERDICT_WORDS[kept.pop()]
    if not flipping:
        return [f"{on}{arm} {verdict} in every cell{where}"]
    return [*(line_sentence(line) for line in flipping),
            f"{on}{arm} {verdict} everywhere else{where}"]


def sweep_markdown(result: SweepResult) -> str:
    """`sweep.md`: the plan, where the verdict flips, and the table."""
    plan = result.plan
    header, rows = table(plan, result.cells)
    done = sum(1 for c in result.cells if c.status == CellStatus.DONE)
    cell_time = sum(c.wall_seconds for c in result.cells)
    out = ["# Where the verdict flips", "",
           f"{len(plan.cells)} cells, {plan.cell_budget_seconds} s of measuring each (budget "
           f"{duration(plan.total_budget_seconds)}). {done} of {len(plan.cells)} cells measured"
           f"{'; stopped before the end' if result.stopped else ''}, in "
           f"{duration(cell_time)} of cell time.", "",
           "A speed-up is the baseline's step time ÷ the arm's, with its 95% interval; "
           "\"ties\" when the interval contains 1. Cells from different hosts are never "
           "compared with each other.", ""]
    out += [f"- {s}" for s in sentences(plan, result.cells)] + [""]
    out.append("| " + " | ".join(header) + " |")
    out.append("|" + "---|" * len(header))
    out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def figure_title(result: SweepResult) -> str:
    """The title of `sweep.png`: "Where the verdict flips: 4 cells, 60 s of measuring each, 4
    measured"."""
    plan = result.plan
    measured = sum(1 for c in result.cells if c.status == CellStatus.DONE)
    cells = "cell" if len(plan.cells) == 1 else "cells"
    return (f"Where the verdict flips: {len(plan.cells)} {cells}, {plan.cell_budget_seconds} s "
            f"of measuring each, {measured} measured")


def eta_words(done: int, total: int, eta_seconds: float | None) -> str:
    """"3 of 8 cells, about 4:10 left"."""
    left = f", about {duration(eta_seconds)} left" if eta_seconds is not None and done < total \
        else ""
    return f"{done} of {total} cells{left}"
