"""A comparison's notes in words: what its runs could not do without failing, from the kinds
the core keeps (`xlagui.core.analysis.notes.RunNote`), with the runs each concerns. The CLI,
the window, the PNG and the Markdown all show `comparison_notes(c)`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.core.protocol.omissions import OmissionKind

if TYPE_CHECKING:
    from xlagui.core.analysis.notes import RunNote
    from xlagui.core.analysis.stats import Comparison

# What was left out, before the error's own words.
LEFT_OUT: dict[str, str] = {
    OmissionKind.TENSORBOARD: "TensorBoard files not written",
    OmissionKind.VAL_CORRECT: "per-image validation results not kept",
    OmissionKind.PARITY: "parity steps not run",
    OmissionKind.PROFILE: "where the step's time goes not profiled",
}


def note_words(note: RunNote) -> str:
    """"TensorBoard files not written: … (runs 01-baseline-r1, 02-xla-r1)"; a note kept in
    words (`kind` "") as it is, with its runs."""
    what = LEFT_OUT.get(note.kind)
    text = f"{what}: {note.said}" if what else note.said
    if note.runs:
        text += f" (run{'s' if len(note.runs) > 1 else ''} {', '.join(note.runs)})"
    return text


def comparison_notes(c: Comparison) -> list[str]:
    return [note_words(n) for n in c.notes]
