"""What a run could not do without failing: an optional export or figure left out (`Omission`),
kept in the run's summary (`RunSummary.omissions`) and repeated by its comparison as a note
(`xlagui.core.analysis.notes`). The kind says what was left out, `said` the error's own words;
`xlagui.present.notes` says it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum


class OmissionKind(StrEnum):
    """What a run left out."""

    TENSORBOARD = "tensorboard_not_written"  # its TensorBoard scalars
    VAL_CORRECT = "val_correct_not_kept"  # which validation images it got right (`val_correct`)
    PARITY = "parity_not_run"  # its parity steps or their rounding references (`worker/explain`)
    PROFILE = "profile_not_taken"  # where its step's time goes (`worker/explain`)


@dataclass(frozen=True)
class Omission:
    """One thing a run left out, and why in the error's own words."""

    kind: OmissionKind
    said: str = ""
