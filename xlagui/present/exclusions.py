"""The files a comparison leaves out, in words: how many (`left_out`), and what leaves for
each kind of problem a comparison can leave out (`leave_out_rule`,
`xlagui.core.data.exclusions` decides which files)."""

from __future__ import annotations

# What leaves, in people's words, per kind ("Would leave out 2 files: <rule>").
RULES: dict[str, str] = {
    "label_conflict": "every copy, as nobody can tell which label is right",
    "leakage": "the test copies; the training copy stays",
    "duplicate_in_class": "all copies but the first",
}


def leave_out_rule(kind: str) -> str:
    """What leaves when the files of a problem of `kind` are left out."""
    return RULES[kind]


def left_out(count: int) -> str:
    """The number of files left out, in words: "3 files left out of this comparison"."""
    return f"{count:,} file{'s' if count != 1 else ''} left out of this comparison"
