"""The CSV's notes: the core writes each as a code with its facts, the front end's words say
it; every code the core writes has its words, and the file without them keeps the codes."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from tests.helpers.reports import comparison_report
from xlagui.core.results.export import to_csv
from xlagui.present.csv_notes import NOTES, note_words

EXPORT = Path(__file__).resolve().parents[2] / "xlagui" / "core" / "results" / "export.py"


def _notes(text: str) -> dict[str, str]:
    return {r["metric"]: r["note"] for r in csv.DictReader(io.StringIO(text))
            if r["row"] == "summary"}


def test_every_note_the_core_writes_has_its_words() -> None:
    codes = set(re.findall(r'Said\(\s*"([a-z_.]+)"', EXPORT.read_text(encoding="utf-8")))
    codes |= {"compile.first_step", "not_measurable"}  # chosen by a conditional
    assert len(codes) > 15 and codes <= set(NOTES), sorted(codes - set(NOTES))


def test_the_notes_are_codes_in_the_core_and_words_from_the_front_end() -> None:
    report = comparison_report(jitter=0.05, others=[0.45] * 8)
    bare, worded = _notes(to_csv(report)), _notes(to_csv(report, note_words))
    assert bare["interleaved_ratio"] == "ratio.median"
    assert worded["interleaved_ratio"] == "XLA step time / baseline (median)"
    assert bare["other_programs_share"] == "other_share"
    assert worded["other_programs_share"] == "of 2 cores, over every timed block"
    assert worded["disturbed_rounds"].startswith("of 8 rounds")
    # A note that is data already (a kind, a basis) is the same either way.
    assert bare["interleaved_stopped_by"] == worded["interleaved_stopped_by"]


def test_a_code_without_words_is_kept_as_it_is() -> None:
    assert note_words("from.a.newer.version", {}) == "from.a.newer.version"
    assert note_words("rounds_budget", {}) == "rounds_budget"  # its facts lost
