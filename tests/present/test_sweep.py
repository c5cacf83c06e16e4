"""A sweep in words (`xlagui.present.sweep`) and its verdicts as data
(`xlagui.core.sweep.flips`): where each arm wins, loses or ties along each axis, host by host;
the rows; a failed cell's reason; the plan; sweep.md."""

from __future__ import annotations

from xlagui.core.protocol.config import RunConfig
from xlagui.core.sweep.cell import ArmRatio, CellFailure, CellResult, CellStatus
from xlagui.core.sweep.flips import Verdict, lines
from xlagui.core.sweep.plan import CELL_OVERHEAD_SECONDS, Axis, SweepPlan, plan_sweep
from xlagui.core.sweep.result import SweepResult
from xlagui.present.sweep import (
    arm_figure,
    eta_words,
    plan_words,
    reason_words,
    sentences,
    sweep_markdown,
    table,
)

FASTER, SLOWER, TIES = (0.8, 0.75, 0.85), (1.2, 1.15, 1.25), (1.0, 0.95, 1.05)


def done(key: str, **arms: tuple[float, float, float]) -> CellResult:
    return CellResult(key=key, status=CellStatus.DONE, arms=[
        ArmRatio(arm, r, lo, hi, 20) for arm, (r, lo, hi) in arms.items()])


def grid() -> SweepPlan:
    return plan_sweep(RunConfig(), [Axis("batch_size", ("16", "32", "128")),
                                    Axis("image_size", ("64", "150"))], None)


def test_where_an_arm_flips_along_an_axis_is_said_at_each_other_setting() -> None:
    plan = grid()
    results = [done("b16-px64", jit=SLOWER), done("b32-px64", jit=SLOWER),
               done("b128-px64", jit=FASTER), done("b16-px150", jit=FASTER),
               done("b32-px150", jit=FASTER), done("b128-px150", jit=FASTER)]
    said = sentences(plan, results)
    assert "jit faster from batch 128 up at 64 px; slower below" in said
    assert "jit faster from 150 px up at batch 16; slower below" in said
    # The lines that keep one verdict are said once, after the flips.
    assert said[-1] == "jit faster everywhere else" and len(said) == 4
    assert sentences(plan, [done(r.key, jit=FASTER) for r in results]) == [
        "jit faster in every cell"]
    # A model is not a point on a line: each model's sentences run along the numeric axes,
    # and say "for" it.
    models = plan_sweep(RunConfig(), [Axis("model", ("cnn", "mixer")),
                                      Axis("image_size", ("64", "150"))], None)
    keys = [c.key for c in models.cells]
    mixed = [done(keys[0], jit=SLOWER), done(keys[1], jit=SLOWER), done(keys[2], jit=FASTER),
             done(keys[3], jit=FASTER)]
    assert sentences(models, mixed) == ["jit slower at every image size for cnn",
                                        "jit faster at every image size for mixer"]
    # With two numeric axes too, an arm steady for one model is one sentence for it.
    grid3 = plan_sweep(RunConfig(), [Axis("batch_size", ("16", "64")),
                                     Axis("image_size", ("64", "150")),
                                     Axis("model", ("cnn", "mixer"))], None)
    verdicts = {c.key: (SLOWER if c.setting("model") == "cnn" else
                        FASTER if c.setting("batch_size") == "64" else SLOWER)
                for c in grid3.cells}
    said3 = sentences(grid3, [done(k, jit=v) for k, v in verdicts.items()])
    assert said3[0] == "jit slower in every cell for cnn"
    assert "jit faster from batch 64 up at 64 px for mixer; slower below" in said3
    flipping = [line for line in lines(plan, results) if line.flips]
    assert {(line.axis, line.context) for line in flipping} == {
        ("batch_size", (("image_size", "64"),)), ("image_size", (("batch_size", "16"),)),
        ("image_size", (("batch_size", "32"),))}


def test_an_interval_containing_one_ties_and_a_failed_cell_is_not_measured() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("128", "16", "32"))], None)
    results = [done("b16", jit=TIES, bf16=SLOWER), done("b128", jit=FASTER, bf16=SLOWER),
               CellResult(key="b32", status=CellStatus.FAILED, failure=CellFailure.WORKER,
                          reason="out of memory")]
    said = sentences(plan, results)
    # by number, not as typed; the failed cell is a stretch of its own
    assert said == ["jit ties at batch 16, not measured at batch 32, faster at batch 128",
                    "bf16 slower at batch 16, not measured at batch 32, slower at batch 128"]
    assert lines(plan, results)[0].stretches[0].verdict is Verdict.TIES


def test_each_host_has_its_own_sentences() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("16", "128")),
                                    Axis("host", ("local", "gpu-box"))], None)
    results = [done("b16-on-local", jit=SLOWER), done("b128-on-local", jit=FASTER),
               done("b16-on-gpu-box", jit=FASTER), done("b128-on-gpu-box", jit=FASTER)]
    assert sentences(plan, results) == [
        "jit faster from batch 128 up; slower below",
        "On gpu-box: jit faster at every batch size"]


def test_swept_arm_lists_hold_the_lines_other_settings() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("16", "128")),
                                    Axis("arms", ("jit", "jit,bf16"))], None)
    results = [done("b16-jit", jit=SLOWER), done("b16-jit_bf16", jit=SLOWER, bf16=TIES),
               done("b128-jit", jit=FASTER), done("b128-jit_bf16", jit=FASTER, bf16=FASTER)]
    assert sentences(plan, results) == [
        "jit faster from batch 128 up; slower below (arms jit)",
        "jit faster from batch 128 up; slower below (arms jit,bf16)",
        "bf16 faster from batch 128 up; ties below (arms jit,bf16)"]


def test_one_cell_says_each_arms_verdict() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("16",))], None)
    assert sentences(plan, [done("b16", jit=FASTER, bf16=TIES)]) == ["jit faster", "bf16 ties"]


def test_rows_reasons_plan_and_markdown() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("16", "500"))],
                      2 * (CELL_OVERHEAD_SECONDS + 50))
    failed = CellResult(key="b500", status=CellStatus.FAILED, failure=CellFailure.SETTINGS,
                        reason="batch size 500 is larger than the training set (40 images)")
    results = [done("b16", jit=FASTER), failed]
    header, rows = table(plan, results)
    assert header == ["batch size", "jit speed-up", "status", "reason"]
    assert rows[0] == ["16", "1.25× faster (1.18–1.33× faster)", "done", ""]
    # Slower and tied cells in words too, never a bare ratio below 1 with "×".
    assert arm_figure(done("b16", jit=SLOWER), "jit") == "1.20× slower (1.15–1.25× slower)"
    assert arm_figure(done("b16", jit=TIES), "jit") == "1.00× faster (1.05× slower to 1.05× faster)"
    assert rows[1] == ["500", "—", "failed", "cannot run with these settings: batch size 500 "
                       "is larger than the training set (40 images)"]
    assert reason_words(results[0]) == ""
    assert table(plan, [])[1][0] == ["16", "to run", ""]
    assert plan_words(plan) == "2 cells, 50 s of measuring each, about 3:00 for the 2 to run " \
                               "(budget 3:00)"
    assert plan_words(plan, [results[0]]).startswith("2 cells (1 finished already), 50 s")
    assert plan_words(plan, results) == "2 cells, all finished already: nothing to run"
    assert eta_words(1, 4, 125) == "1 of 4 cells, about 2:05 left"
    assert eta_words(4, 4, 0) == "4 of 4 cells"
    md = sweep_markdown(SweepResult(plan=plan, cells=results, ran=2))
    assert md.startswith("# Where the verdict flips\n")
    assert "- jit faster at batch 16, not measured at batch 500\n" in md
    assert "2 cells, 50 s of measuring each (budget 3:00). 1 of 2 cells measured, in 0 s" in md
    assert "| batch size | jit speed-up | status | reason |\n|---|---|---|---|\n" in md
