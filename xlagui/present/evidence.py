"""What shows that XLA compiled in a run, in words, from the evidence its worker collected
(`xlagui.core.xla.evidence.XlaEvidence`)."""

from __future__ import annotations

from xlagui.core.xla.evidence import XlaEvidence


def evidence_words(ev: XlaEvidence | None) -> str:
    """What shows that XLA compiled (or did not) in one run, in words."""
    if ev is None or not ev.compiled:
        return "none: XLA compiled nothing"
    parts = []
    if ev.hlo_modules:
        parts.append(f"{ev.hlo_modules} HLO modules, {ev.fusions} fusions")
    elif ev.compilations:
        parts.append(f"{ev.compilations} XLA compilations logged")
    if ev.compiled_log_line:
        parts.append("log: “Compiled cluster using XLA”")
    return "; ".join(parts) or "compiled"
