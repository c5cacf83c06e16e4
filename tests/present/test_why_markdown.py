"""The Markdown's "Why" section: where the time goes, the compiles and the parity, as bullets
and tables; none for a comparison from before."""

from __future__ import annotations

from tests.helpers.reports import comparison_report
from tests.helpers.why import comparison_dict
from xlagui.present.markdown import ATTRIBUTION_ROWS, report_markdown, why_markdown
from xlagui.present.why_data import WhyData


def test_the_markdown_says_why() -> None:
    why = WhyData.from_dict(comparison_dict())
    text = report_markdown(comparison_report(training=True), why)
    assert text.index("## Why") < text.index("## Setup")
    section = text[text.index("## Why"):text.index("## Setup")]
    assert "### Where the time goes" in section
    assert ("- XLA jit_compile spends 0.88 s of its 2.50 s step in the input gradient of "
            "block_1_depthwise's depthwise convolution (lowered to base-dilated convolutions)"
            ) in section
    assert "| arm | step | coverage | thread-time |" in section
    assert "| XLA jit_compile | 2.50 s | 71% | 3.27 s |" in section
    assert ("| layer | pass | op kind | baseline | XLA jit_compile | XLA jit_compile − baseline |"
            ) in section
    assert "| block_1_depthwise | input gradient | depthwise convolution | 0.04 s | 0.88 s | "\
           "+0.84 s |" in section
    assert "| not traced | — | — | 0.01 s | 0.72 s | +0.71 s |" in section
    assert "### Compiles" in section
    assert "| 02-xla-r1 | eval | float32[8,64,64,3], int32[8] | 1.10 s | the last partial batch "\
           "of 8 |" in section
    assert "drop_remainder=True" in section
    assert "### Do the numbers stay the same?" in section
    assert "| XLA jit_compile | the same within float32 rounding | 20 | 2.1e-06 | 3.4e-06 |" in (
        section)


def test_no_why_no_section() -> None:
    report = comparison_report(training=True)
    assert "## Why" not in report_markdown(report)
    assert why_markdown(WhyData()) == []


def test_the_attribution_is_cut_to_the_rows_that_differ_most() -> None:
    d = comparison_dict()
    rows = d["explain"]["arms"]["jit"]["rows"]
    rows += [{"layer": f"extra_{i}", "pass": "forward", "op_kind": "elementwise",
              "seconds_per_step": 0.001} for i in range(20)]
    lines = why_markdown(WhyData.from_dict(d))
    table = [line for line in lines if line.startswith("| ") and "s |" in line
             and ("forward" in line or "gradient" in line or "not traced" in line
                  or "update" in line or "other work" in line)]
    assert len([t for t in table if "extra_" in t or "depthwise" in t or "Conv1" in t
                or "optimizer" in t or "framework" in t or "loss" in t or "bn_" in t
                or "not traced" in t]) == ATTRIBUTION_ROWS + 1
