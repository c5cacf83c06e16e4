"""Why a run or a comparison cannot be taken at its word, as data: a `Problem` is a kind with
its figures, and `xlagui.present.problems` alone says it.

The checks that find them: whether XLA engaged as asked (`xla_problem`: one check, made for the
comparison's two sides in `xlagui.core.analysis.stats` and for every arm in
`xlagui.core.analysis.ranking`) and whether the dtype policy did (`policy_problems`, from what a
worker read back after compiling).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum
from xlagui.core.protocol.jsoncodec import decode
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision


class ProblemKind(StrEnum):
    """What is wrong (the figures each kind fills are said beside it)."""

    # XLA asked for (`asked`: the mode) but the run's evidence shows nothing compiled.
    XLA_COMPILED_NOTHING = "xla_compiled_nothing"
    # XLA compiled in a run that has it off (the baseline, or an arm without XLA).
    XLA_WHEN_OFF = "xla_when_off"
    NO_POLICY = "no_policy"  # the worker did not report its dtype policy
    # `asked` (the policy) was not in effect: `found` was.
    WRONG_POLICY = "wrong_policy"
    # The policy `found` computed in `dtype`, not in what the policy `asked` computes in.
    WRONG_COMPUTE_DTYPE = "wrong_compute_dtype"
    NO_LOSS_SCALING = "no_loss_scaling"  # mixed_float16 without loss scaling
    # The comparison lacks a finished baseline or XLA run (and measured nothing interleaved).
    NO_RUNS_TO_COMPARE = "no_runs_to_compare"
    TOO_FEW_EPOCHS = "too_few_epochs"  # for a steady-state time
    # A comparison saved before problems were data holds them as sentences (`words`), and
    # there is nothing typed to say them again from: they are kept as they were said.
    IN_WORDS = "in_words"


@dataclass(frozen=True)
class Problem:
    """One problem: its kind and the figures it needs (`run_id`: the run it is about)."""

    kind: ProblemKind
    run_id: str = ""
    asked: str = ""  # what was asked for: the XLA mode, the dtype policy
    found: str = ""  # the dtype policy in effect
    dtype: str = ""  # the compute dtype in effect
    words: str = ""  # IN_WORDS only

    @property
    def code(self) -> str:
        """The problem in one data cell (the CSV's notes): its kind and figures, or the words
        of an older file's."""
        if self.kind is ProblemKind.IN_WORDS:
            return self.words
        figures = (("run", self.run_id), ("asked", self.asked), ("found", self.found),
                   ("dtype", self.dtype))
        return " ".join([self.kind.value, *(f"{k}={v}" for k, v in figures if v)])

    @classmethod
    def from_saved(cls, data: object) -> Problem:
        """A saved problem: its record, or the sentence an older comparison kept."""
        if isinstance(data, str):
            return cls(ProblemKind.IN_WORDS, words=data)
        return decode(cls, data, "problem")


def xla_problem(run_id: str, asked: XlaMode, compiled: bool, *, by: str = "") -> Problem | None:
    """Whether XLA engaged as asked in a run: it must compile when asked for and must not when
    off (None: it did as asked). `by`: an arm whose step XLA compiles whatever its mode (its
    backend: "jax"), which must compile."""
    if by and not compiled:
        return Problem(ProblemKind.XLA_COMPILED_NOTHING, run_id, asked=by)
    if by:
        return None
    if asked is not XlaMode.OFF and not compiled:
        return Problem(ProblemKind.XLA_COMPILED_NOTHING, run_id, asked=asked.value)
    if asked is XlaMode.OFF and compiled:
        return Problem(ProblemKind.XLA_WHEN_OFF, run_id)
    return None


def policy_problems(
    precision: Precision,
    read_back: Mapping[str, object],
    *,
    run_id: str = "",
    measured: bool = True,
) -> list[Problem]:
    """Why the read-back (`policy`, `compute_dtype`, `loss_scale`) shows the dtype policy
    `precision` did not engage as asked (empty: it did)."""
    problems = []
    policy = str(read_back.get("policy") or "")
    compute = str(read_back.get("compute_dtype") or "")
    if not policy:
        return [Problem(ProblemKind.NO_POLICY, run_id)] if measured else []
    if policy != precision.value:
        problems.append(
            Problem(ProblemKind.WRONG_POLICY, run_id, asked=precision.value, found=policy)
        )
    elif compute and compute != precision.compute_dtype:
        problems.append(Problem(ProblemKind.WRONG_COMPUTE_DTYPE, run_id, asked=precision.value,
                                found=policy, dtype=compute))
    if precision is Precision.FP16 and not read_back.get("loss_scale"):
        problems.append(Problem(ProblemKind.NO_LOSS_SCALING, run_id))
    return problems
