"""Problems in words: why a run or a comparison cannot be taken at its word
(`xlagui.core.protocol.problems.Problem`, a kind with its figures).

The same check is said two ways, after where it is read: in the comparison's verdict, about a
run of the XLA question's two sides (`comparison_problem`), and in an arm's row, about one of
its runs (`arm_problem`).
"""

from __future__ import annotations

from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.problems import Problem, ProblemKind


def problem_words(p: Problem) -> str:
    """What is wrong, without the run it is about."""
    if p.kind is ProblemKind.XLA_COMPILED_NOTHING:
        return f"asked for XLA ({p.asked}) but XLA compiled nothing"
    if p.kind is ProblemKind.XLA_WHEN_OFF:
        return "XLA compiled although this arm has it off"
    if p.kind is ProblemKind.NO_POLICY:
        return "the worker did not report its dtype policy"
    if p.kind is ProblemKind.WRONG_POLICY:
        return f"asked for the {p.asked} policy but {p.found} was in effect"
    if p.kind is ProblemKind.WRONG_COMPUTE_DTYPE:
        return f"the {p.found} policy computed in {p.dtype}, not {Precision(p.asked).compute_dtype}"
    if p.kind is ProblemKind.NO_LOSS_SCALING:
        return "mixed_float16 ran without loss scaling"
    if p.kind is ProblemKind.NO_RUNS_TO_COMPARE:
        return "a comparison needs at least one finished baseline and one XLA run"
    if p.kind is ProblemKind.TOO_FEW_EPOCHS:
        return "too few epochs for a steady-state time: run at least 2"
    return p.words


def arm_problem(p: Problem) -> str:
    """A problem of one of an arm's runs, in the arm's row: "m3-bf16: …"."""
    if p.kind is ProblemKind.IN_WORDS:
        return p.words
    return f"{p.run_id}: {problem_words(p)}" if p.run_id else problem_words(p)


def comparison_problem(p: Problem) -> str:
    """A problem of the comparison, in its verdict: about a run of the XLA question's two
    sides (an XLA run that compiled nothing is not compared as one), or the comparison's."""
    if p.kind is ProblemKind.XLA_COMPILED_NOTHING:
        return (
            f"run {p.run_id} asked for XLA ({p.asked}) but XLA compiled nothing: it is not an "
            "XLA run and is not compared as one"
        )
    if p.kind is ProblemKind.XLA_WHEN_OFF:
        return f"baseline run {p.run_id} shows XLA compiling: it is no baseline"
    if p.kind in (ProblemKind.NO_RUNS_TO_COMPARE, ProblemKind.TOO_FEW_EPOCHS, ProblemKind.IN_WORDS):
        return problem_words(p)
    return arm_problem(p)


def comparison_problems(problems: list[Problem]) -> list[str]:
    return [comparison_problem(p) for p in problems]


def arm_problems(problems: list[Problem] | tuple[Problem, ...]) -> list[str]:
    return [arm_problem(p) for p in problems]
