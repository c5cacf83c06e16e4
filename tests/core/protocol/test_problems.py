"""Problems are data: the engagement checks return kinds with their figures, and a saved
problem reads back, as a record or as an older file's sentence."""

from __future__ import annotations

import json
from dataclasses import asdict

from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision
from xlagui.core.protocol.problems import Problem, ProblemKind, policy_problems, xla_problem


def test_an_arm_whose_policy_did_not_engage_is_refused() -> None:
    fine = {"policy": "mixed_bfloat16", "compute_dtype": "bfloat16", "loss_scale": False}
    assert policy_problems(Precision.BF16, fine) == []
    assert policy_problems(Precision.BF16, {**fine, "policy": "float32"}, run_id="m3") == [
        Problem(ProblemKind.WRONG_POLICY, "m3", asked="mixed_bfloat16", found="float32")
    ]
    assert policy_problems(Precision.BF16, {**fine, "compute_dtype": "float32"}) == [
        Problem(ProblemKind.WRONG_COMPUTE_DTYPE, asked="mixed_bfloat16", found="mixed_bfloat16",
                dtype="float32")
    ]
    no_scaling = {"policy": "mixed_float16", "compute_dtype": "float16", "loss_scale": False}
    assert policy_problems(Precision.FP16, no_scaling) == [Problem(ProblemKind.NO_LOSS_SCALING)]
    assert policy_problems(Precision.FLOAT32, {"policy": "float32",
                                               "compute_dtype": "float32"}) == []
    assert policy_problems(Precision.BF16, {}) == [Problem(ProblemKind.NO_POLICY)]
    assert policy_problems(Precision.BF16, {}, measured=False) == []


def test_xla_must_compile_when_asked_and_only_then() -> None:
    assert xla_problem("m2", XlaMode.JIT, compiled=True) is None
    assert xla_problem("m1", XlaMode.OFF, compiled=False) is None
    assert xla_problem("m2", XlaMode.AUTOCLUSTER, compiled=False) == Problem(
        ProblemKind.XLA_COMPILED_NOTHING, "m2", asked="autocluster")
    assert xla_problem("m1", XlaMode.OFF, compiled=True) == Problem(ProblemKind.XLA_WHEN_OFF, "m1")


def test_a_saved_problem_reads_back_and_an_older_sentence_is_kept() -> None:
    p = Problem(ProblemKind.WRONG_POLICY, "m3", asked="mixed_bfloat16", found="float32")
    assert Problem.from_saved(json.loads(json.dumps(asdict(p)))) == p
    old = Problem.from_saved("run 02 asked for XLA (jit) but XLA compiled nothing")
    assert old.kind is ProblemKind.IN_WORDS and old.code == old.words
    assert p.code == "wrong_policy run=m3 asked=mixed_bfloat16 found=float32"
