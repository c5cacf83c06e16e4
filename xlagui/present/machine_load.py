"""What else used the machine while a comparison measured, in words: the one place the CLI,
the window's banner, the Markdown and the PNG take them from (`load_lines`), and the short
mark a table cell or a History row shows (`busy_mark`).

From `MachineLoad` (`xlagui.core.analysis.busy`) and the training runs' disturbed epochs; the
core decides what was disturbed, this module only says it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xlagui.present.costs import DASH
from xlagui.present.intervals import speed_range

if TYPE_CHECKING:
    from xlagui.core.analysis.busy import MachineLoad
    from xlagui.core.analysis.stats import Comparison
    from xlagui.core.protocol.interference import Preflight, ProcessShare

BUSY = "measured on a busy machine"
BUSY_MARK = "busy"  # a table cell's or a History row's mark
CLOSE_THEM = "Close them and measure again."


def _share(x: float) -> str:
    return f"{x:.0%}" if x >= 0.01 or x == 0 else "under 1%"


def processes_words(busiest: Sequence[ProcessShare]) -> str:
    """"python3 (pid 4242) 33%, Xorg (pid 812) 3%"."""
    return ", ".join(f"{p.name} (pid {p.pid}) {_share(p.share)}" for p in busiest)


def cores_words(cores: int) -> str:
    return f"the {cores} cores" if cores > 1 else "the core"


def is_busy(c: Comparison | None) -> bool:
    """The answer was measured on a busy machine (too few undisturbed rounds to count alone)."""
    m = c.interleaved.machine if c is not None and c.interleaved is not None else None
    return m is not None and m.busy


def busy_mark(load: MachineLoad | None) -> str:
    """A History row's mark: "busy" or ""."""
    return BUSY_MARK if load is not None and load.busy else ""


def load_lines(c: Comparison | None) -> list[str]:
    """What a reader must know of the machine while the comparison ran: whether the answer was
    measured on a busy machine (how busy, who, what to do), the rounds set aside, and the
    training epochs something else disturbed; [] when nothing was read (a comparison saved
    before) or there is nothing to say beyond a quiet share."""
    if c is None:
        return []
    lines: list[str] = []
    m = c.interleaved.machine if c.interleaved is not None else None
    if m is not None and m.other_share is not None:
        who = f" ({processes_words(m.busiest)})" if m.busiest else ""
        used = f"other programs used {_share(m.other_share)} of {cores_words(m.cores)}"
        if m.busy:
            lines.append(
                f"This answer was {BUSY}: {used} while it was timed{who}; "
                f"{m.disturbed_rounds} of {m.rounds} rounds were disturbed, too many to set "
                f"aside. {CLOSE_THEM}")
        elif m.disturbed_rounds:
            limit = f"{m.busy_percent:g}%" if m.busy_percent is not None else "the threshold"
            lines.append(
                f"{m.disturbed_rounds} of {m.rounds} rounds set aside: something else used more "
                f"than {limit} of {cores_words(m.cores)} during them{who}. The answer counts "
                f"the other {m.rounds - m.disturbed_rounds}.")
        else:
            lines.append(f"The machine was quiet while timing: {used}.")
    if between := processes_line(c):
        lines.append(between)
    for run, epochs in sorted(c.disturbed_epochs.items()):
        listed = ", ".join(str(e) for e in epochs)
        lines.append(f"Run {run}: epoch{'s' if len(epochs) > 1 else ''} {listed} disturbed by "
                     "other programs, not counted as steady.")
    return lines


def _p_value(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def processes_line(c: Comparison) -> str:
    """This answer against the earlier ones of its settings on this machine, each from fresh
    worker processes (`processes.spread`): that it agrees, or that they disagree beyond their
    intervals and the interval now includes that spread; "" when there was none."""
    i = c.interleaved
    p = i.processes if i is not None else None
    if i is None or p is None:
        return ""
    n = (f"{p.earlier} earlier measurement{'s' if p.earlier > 1 else ''} of these settings on "
         "this machine")
    if not p.widened:
        return (f"It agrees with {n}, each from fresh worker processes (Cochran's Q "
                f"{_p_value(p.p)}): their spread is within their intervals.")
    now = speed_range(1 / i.high, 1 / i.low) if i.low and i.high else DASH
    return (f"Fresh worker processes disagree on this machine: with {n}, the estimates spread "
            f"more than their intervals admit (Cochran's Q {_p_value(p.p)}), so the interval "
            f"includes that spread: {now}, against "
            f"{speed_range(1 / p.pair_high, 1 / p.pair_low)} within this pair of processes "
            "alone.")


def busy_question(p: Preflight) -> str:
    """The window's question before measuring on a busy machine (its buttons: measure anyway,
    wait for it to go quiet): what keeps it busy, and what measuring now means."""
    look = p.look
    who = f" ({processes_words(look.busiest)})" if look.busiest else ""
    return (f"The machine is busy before measuring: other programs use {_share(look.other_share)}"
            f" of {cores_words(look.cores)}{who}.\n\nMeasured now, rounds something else "
            "disturbs are set aside; with too few undisturbed rounds the answer is marked as "
            "measured on a busy machine.")


def preflight_words(p: Preflight, final: bool = True) -> str:
    """The preflight in a sentence: "The machine is busy before measuring: other programs use
    48% of the 2 cores (…). Measuring anyway: …" or that it is quiet."""
    look = p.look
    used = f"other programs use {_share(look.other_share)} of {cores_words(look.cores)}"
    who = f" ({processes_words(look.busiest)})" if look.busiest else ""
    if not look.disturbed:
        waited = f" after waiting {p.waited_seconds:.0f} s" if p.waited_seconds >= 1 else ""
        return f"The machine is quiet before measuring{waited}: {used}."
    if not final:
        return (f"The machine is busy: {used}{who}. Waiting for it to go quiet "
                f"({p.waited_seconds:.0f} of {p.wait_limit_seconds or 0:.0f} s).")
    if p.wait_limit_seconds:
        return (f"The machine is still busy after waiting {p.waited_seconds:.0f} s: {used}{who}. "
                "Measuring anyway; rounds something else disturbs are set aside, and the answer "
                f"says if it was {BUSY}.")
    return (f"The machine is busy before measuring: {used}{who}. Measuring anyway; rounds "
            f"something else disturbs are set aside, and the answer says if it was {BUSY}. "
            "To measure on a quiet machine, close them, or wait for one (--wait-quiet "
            "SECONDS).")
