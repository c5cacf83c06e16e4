"""Two wordings that left the core: the files a comparison leaves out, and what shows that
XLA compiled in a run."""

from __future__ import annotations

from xlagui.core.data.exclusions import KIND_WORDS
from xlagui.core.xla.evidence import XlaEvidence
from xlagui.present.evidence import evidence_words
from xlagui.present.exclusions import RULES, leave_out_rule, left_out


def test_the_files_left_out_in_words() -> None:
    assert left_out(1) == "1 file left out of this comparison"
    assert left_out(1234) == "1,234 files left out of this comparison"
    assert set(RULES) == set(KIND_WORDS.values())  # a rule for each kind that can be left out
    assert leave_out_rule("leakage") == "the test copies; the training copy stays"


def test_the_evidence_that_xla_compiled_in_words() -> None:
    assert evidence_words(None) == "none: XLA compiled nothing"
    assert evidence_words(XlaEvidence(hlo_modules=3, fusions=40, compiled_log_line=True)) == (
        "3 HLO modules, 40 fusions; log: “Compiled cluster using XLA”"
    )
    assert evidence_words(XlaEvidence(compilations=2)) == "2 XLA compilations logged"
