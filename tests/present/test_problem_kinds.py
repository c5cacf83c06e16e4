"""Dataset problem kinds in words: every kind the scan can report has its words, and the
Dataset tab's headings."""

from __future__ import annotations

from xlagui.core.data.scan import PROBLEM_KINDS
from xlagui.present.problem_kinds import (
    KIND_NOUNS,
    KIND_WORDS,
    kind_count,
    kind_words,
    problem_heading,
)


def test_every_kind_the_scan_reports_has_words() -> None:
    assert set(KIND_WORDS) == set(PROBLEM_KINDS)
    assert set(KIND_NOUNS) == set(PROBLEM_KINDS)


def test_headings() -> None:
    assert problem_heading("error", "not_an_image") == "Error: not images"
    assert problem_heading("warning", "leakage", 3) == "Warning: train/test leakage (3)"
    assert kind_words("some_new_kind") == "some new kind"


def test_counted() -> None:
    assert kind_count("leakage", 1) == "1 train/test leak"
    assert kind_count("label_conflict", 1_200) == "1,200 cross-class duplicates"
