"""Problems in words: one check, said in the comparison's verdict and in an arm's row."""

from __future__ import annotations

from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.problems import Problem, ProblemKind, policy_problems
from xlagui.present.problems import arm_problem, arm_problems, comparison_problem, problem_words


def test_the_policy_problems_in_words() -> None:
    fine = {"policy": "mixed_bfloat16", "compute_dtype": "bfloat16", "loss_scale": False}
    assert [problem_words(p) for p in policy_problems(Precision.BF16, {**fine, "policy": "float32"})
            ] == ["asked for the mixed_bfloat16 policy but float32 was in effect"]
    said = problem_words(policy_problems(Precision.BF16, {**fine, "compute_dtype": "float32"})[0])
    assert said == "the mixed_bfloat16 policy computed in float32, not bfloat16"
    no_scaling = {"policy": "mixed_float16", "compute_dtype": "float16", "loss_scale": False}
    assert arm_problems(policy_problems(Precision.FP16, no_scaling, run_id="m4")) == [
        "m4: mixed_float16 ran without loss scaling"]
    assert arm_problem(Problem(ProblemKind.NO_POLICY, "m3")) == (
        "m3: the worker did not report its dtype policy")


def test_the_xla_check_is_said_for_an_arm_and_for_the_comparison() -> None:
    nothing = Problem(ProblemKind.XLA_COMPILED_NOTHING, "m2-xla", asked="jit")
    assert arm_problem(nothing) == "m2-xla: asked for XLA (jit) but XLA compiled nothing"
    assert comparison_problem(nothing) == (
        "run m2-xla asked for XLA (jit) but XLA compiled nothing: it is not an XLA run and is "
        "not compared as one")
    off = Problem(ProblemKind.XLA_WHEN_OFF, "01-baseline-r1")
    assert arm_problem(off) == "01-baseline-r1: XLA compiled although this arm has it off"
    assert comparison_problem(off) == (
        "baseline run 01-baseline-r1 shows XLA compiling: it is no baseline")
    assert comparison_problem(Problem(ProblemKind.NO_RUNS_TO_COMPARE)) == (
        "a comparison needs at least one finished baseline and one XLA run")
    assert comparison_problem(Problem(ProblemKind.TOO_FEW_EPOCHS)) == (
        "too few epochs for a steady-state time: run at least 2")
    old = Problem.from_saved("m3: asked for the mixed_bfloat16 policy but float32 was in effect")
    assert arm_problem(old) == comparison_problem(old) == old.words
