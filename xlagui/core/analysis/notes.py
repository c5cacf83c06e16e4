"""A comparison's notes (`Comparison.notes`): what its runs could not do without failing (each
run's `Omission`s), said once with the runs each concerns. `xlagui.present.notes` words them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from xlagui.core.protocol.events import RunSummary


@dataclass(frozen=True)
class RunNote:
    """One note: the kind of what was left out (an `OmissionKind`), the error's own words and
    the runs it concerns. `kind` "" is a note in words: a run's, from a stream written before
    omissions (`RunSummary.notes`), or a whole note of a comparison saved before them, its runs
    already in its words."""

    kind: str = ""
    said: str = ""
    runs: tuple[str, ...] = ()


def run_notes(runs: Sequence[tuple[str, RunSummary]]) -> list[RunNote]:
    """The notes of the runs (run id, summary), each once, with every run it concerns."""
    concerns: dict[tuple[str, str], list[str]] = {}
    for run_id, summary in runs:
        left_out = [(str(o.kind), o.said) for o in summary.omissions]
        for key in [*left_out, *(("", words) for words in summary.notes)]:
            concerns.setdefault(key, []).append(run_id)
    return [RunNote(kind, said, tuple(ids)) for (kind, said), ids in concerns.items()]


def saved_notes(items: Sequence[Any]) -> list[RunNote]:
    """The notes of a saved comparison: objects since omissions, sentences before."""
    return [
        RunNote(said=item) if isinstance(item, str)
        else RunNote(str(item.get("kind", "")), str(item.get("said", "")),
                     tuple(str(r) for r in item.get("runs") or ()))
        for item in items
    ]
