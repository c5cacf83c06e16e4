"""The "why" of a comparison in words (issue 29): read from its JSON (older files read empty,
bad entries are left out), the top differences with their figures, the coverage and the
`not traced` row, the compiles with the partial batch's fix, the parity kinds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.reports import comparison_report
from tests.helpers.why import EXPLAIN, comparison_dict, write_comparison
from xlagui.present import compiles, explain, parity
from xlagui.present.why_data import (
    CompileReason,
    Explain,
    RunCompilations,
    WhyData,
    read_folder,
    why_of,
)


def why() -> WhyData:
    return WhyData.from_dict(comparison_dict())


def test_an_older_comparison_has_no_why() -> None:
    old = comparison_report(training=True).to_dict()
    assert WhyData.from_dict(old) == WhyData() and WhyData.from_dict(old).empty
    assert why_of(comparison_report()).empty


def test_the_why_is_read_from_the_json() -> None:
    w = why()
    assert w.explain is not None
    assert list(w.explain.arms) == ["baseline", "jit"]
    jit = w.explain.arms["jit"]
    assert (jit.step_seconds, jit.coverage, len(jit.rows)) == (2.5, 0.71, 11)
    assert [d.arm_seconds for d in w.explain.top_differences] == [0.88, 0.60, 0.55]
    # The runs keep their arm: the XLA side's training run is jit's.
    assert [(r.run_id, r.arm, len(r.compilations)) for r in w.compilations] == [
        ("01-baseline-r1", "baseline", 2), ("02-xla-r1", "jit", 3)]
    assert w.compilations[1].compilations[2].reason == CompileReason(
        kind="new_shape", dimension=0, was=32, now=8, partial_batch=True)
    assert list(w.parity) == ["jit", "bf16"] and w.parity["jit"].kind == "same"
    assert len(w.parity["jit"].losses) == 20


def test_entries_of_the_wrong_shape_are_left_out() -> None:
    d = comparison_dict()
    d["explain"]["arms"]["jit"]["rows"].append({"layer": "x", "seconds_per_step": "slow"})
    d["explain"]["arms"]["broken"] = "not a profile"
    d["explain"]["top_differences"].append({"arm": "jit"})
    d["parity"]["autocluster"] = {"steps": 20}  # no kind
    d["runs"][0]["compilations"].append({"shapes": []})  # no function
    w = WhyData.from_dict(d)
    assert w.explain is not None and len(w.explain.arms["jit"].rows) == 11
    assert "broken" not in w.explain.arms and len(w.explain.top_differences) == 3
    assert "autocluster" not in w.parity
    assert len(w.compilations[0].compilations) == 2
    assert WhyData.from_dict({"explain": "nonsense", "parity": [], "runs": "x"}).empty


def test_a_saved_folder_is_read(tmp_path: Path) -> None:
    folder = write_comparison(tmp_path / "c")
    assert read_folder(folder) == why()
    # A report that does not carry its why yet (the core keeps it from issue 29 on): the
    # folder's file says it.
    assert why_of(comparison_report(training=True), folder) == why()
    (folder / "comparison.json").write_text("{not json", encoding="utf-8")
    assert read_folder(folder).empty and read_folder(tmp_path / "none").empty


def test_the_top_differences_in_words() -> None:
    w = why()
    assert w.explain is not None
    lines = explain.top_sentences(w.explain)
    assert lines[0] == (
        "XLA jit_compile spends 0.88 s of its 2.50 s step in the input gradient of "
        "block_1_depthwise's depthwise convolution (lowered to base-dilated convolutions), "
        "where the baseline spends 0.04 s: 0.84 s more per step.")
    assert "forward pass of block_1_depthwise's depthwise convolution, where" in lines[1]
    assert len(lines) == 3
    assert explain.group_sentence(explain.largest_group(w.explain, "jit")) == (  # type: ignore[arg-type]
        "Summed over layers, XLA jit_compile differs most in the depthwise convolutions' input "
        "gradients: 1.43 s per step against 0.07 s for the baseline.")


def test_without_top_differences_the_rows_farthest_from_the_baseline_are_named() -> None:
    arms = Explain.read({"arms": EXPLAIN["arms"]})
    assert arms is not None and not arms.top_differences
    found = explain.differences(arms, 2)
    assert [(d.layer, d.pass_, round(d.change, 2)) for d in found] == [
        ("block_1_depthwise", "input_gradient", 0.84), ("block_1_depthwise", "forward", 0.57)]


def test_coverage_and_the_not_traced_row() -> None:
    w = why()
    assert w.explain is not None
    base, jit = explain.coverage_lines(w.explain)
    assert base.startswith("The baseline: a 0.42 s step; traced kernels ran during 97% of it")
    assert "below the 80% goal" not in base
    assert jit == ("XLA jit_compile: a 2.50 s step; traced kernels ran during 71% of it, 29% "
                   "(0.73 s) is not traced (below the 80% goal); 3.27 s of thread-time in all.")
    assert explain.THREADS_NOTE in explain.explain_lines(w.explain)
    table = explain.attribution_table(w.explain)
    assert table.columns == ("layer", "pass", "op kind", "baseline", "XLA jit_compile",
                             "XLA jit_compile − baseline")
    assert table.rows[0][:3] == ("block_1_depthwise", "input gradient", "depthwise convolution")
    assert table.rows[0][3:] == ("0.04 s", "0.88 s", "+0.84 s")
    # Sorted by the largest difference, the `not traced` row last, never spread.
    assert table.rows[-1][:3] == ("not traced", "—", "—")
    assert table.rows[-1][4] == "0.72 s"
    changes = [abs(d) for d in table.differences[:-1]]
    assert changes == sorted(changes, reverse=True)
    short = explain.attribution_table(w.explain, limit=3)
    assert [r[0] for r in short.rows] == ["block_1_depthwise", "block_1_depthwise",
                                          "block_2_depthwise", "not traced"]
    assert table.numbers[0][4] == 0.88


def test_words_for_every_kind() -> None:
    assert explain.row_words("optimizer", "optimizer", "elementwise") == (
        "the optimizer's element-wise fusions")
    assert explain.row_words("conv2d", "weight_gradient", "convolution") == (
        "the weight gradient of conv2d's convolution")
    assert explain.row_words("conv2d", "other", "some_new_kind") == (
        "conv2d's some new kind (other work)")
    assert [explain.step_time(s) for s in (2.5, 0.04, 0.0032, 0.00004, 0, None)] == [
        "2.50 s", "0.04 s", "3.2 ms", "40 µs", "0 s", "—"]
    assert explain.arm_words("no-such-arm") == "no-such-arm"


def test_compiles_in_words_with_the_partial_batch_fix() -> None:
    runs = why().compilations
    assert compiles.run_summary(runs[1]) == (
        "02-xla-r1 (XLA jit_compile): 3 compilations, 7.40 s: training step ×1 (the first "
        "call), evaluation step ×2 (the first call; the last partial batch of 8).")
    advice = compiles.partial_batch_advice(runs)
    assert advice is not None and advice.startswith(
        "The last partial batch of 8 recompiled the evaluation step once (1.10 s in all).")
    assert "drop_remainder=True" in advice and "pad it to the batch size" in advice
    assert compiles.partial_batch_advice(runs[:1]) is None
    assert compiles.compile_rows(runs)[-1] == (
        "02-xla-r1", "eval", "float32[8,64,64,3], int32[8]", "1.10 s",
        "the last partial batch of 8")
    assert compiles.run_summary(RunCompilations("r", "baseline", ())) == (
        "r (the baseline): no compilation recorded.")


def test_every_compile_reason_in_words() -> None:
    words = compiles.reason_words
    assert words(CompileReason("first_call")) == "the first call"
    assert words(CompileReason("new_shape", 1, 64, 48)) == (
        "a new shape (dimension 1 was 64, now 48)")
    assert words(CompileReason("new_shape")) == "a new shape (a dimension changed)"
    assert words(CompileReason("new_shape", 0, 32, None, True)) == "the last partial batch"
    assert words(CompileReason("new_dtype")) == "a new dtype"
    assert words(CompileReason("what")) == "another reason (not a new shape or dtype)"


def test_parity_in_words() -> None:
    p = why().parity
    assert parity.parity_sentence(p["jit"]) == (
        "XLA jit_compile is the same within float32 rounding over 20 steps (largest relative "
        "loss difference 2.1e-06, outputs 3.4e-06).")
    assert parity.parity_sentence(p["bf16"]) == (
        "mixed_bfloat16 drifts as its lower precision would over 20 steps (largest relative "
        "loss difference 1.20%, outputs 3.10%).")
    assert parity.kind_words("diverges") == "diverges from the baseline: worth reporting"
    assert [r[1] for r in parity.parity_rows(p)] == [
        "the same within float32 rounding", "drifts as its lower precision would"]
    assert parity.relative(0.5) == "50%" and parity.relative(None) == "—"


def test_the_fixture_is_json() -> None:
    assert json.loads(json.dumps(comparison_dict()))["explain"]["arms"]["jit"]["coverage"] == 0.71


def test_several_arms_each_get_their_columns_and_sentences() -> None:
    d = comparison_dict()
    d["explain"]["arms"]["autocluster"] = {
        "step_seconds": 0.5, "coverage": 0.9,
        "rows": [{"layer": "block_1_depthwise", "pass": "input_gradient",
                  "op_kind": "depthwise_convolution", "seconds_per_step": 0.30}]}
    ex = WhyData.from_dict(d).explain
    assert ex is not None
    table = explain.attribution_table(ex)
    assert table.columns[3:] == ("baseline", "XLA jit_compile", "XLA auto-clustering",
                                 "XLA jit_compile − baseline", "XLA auto-clustering − baseline")
    first = table.rows[0]
    assert first[:3] == ("block_1_depthwise", "input gradient", "depthwise convolution")
    assert first[3:] == ("0.04 s", "0.88 s", "0.30 s", "+0.84 s", "+0.26 s")
    # A row an arm does not have is 0 s there, not left out.
    conv = next(r for r in table.rows if r[:2] == ("Conv1", "forward pass"))
    assert conv[5] == "0 s"
    groups = [explain.largest_group(ex, arm) for arm in ("jit", "autocluster")]
    assert [(g.pass_, g.op_kind) for g in groups if g is not None] == [
        ("input_gradient", "depthwise_convolution"), ("input_gradient", "depthwise_convolution")]
    assert len(explain.coverage_lines(ex)) == 3


def test_the_xla_side_is_called_xla_in_the_sentences() -> None:
    """A comparison's XLA side is keyed `xla` in its JSON (not an arm name `parse_arm` reads):
    its words say XLA, and a combined arm its label."""
    from xlagui.present.explain import arm_words

    assert arm_words("xla") == "XLA"
    assert arm_words("baseline") == "the baseline"
    assert arm_words("jit+bf16") not in ("jit+bf16", "XLA")
