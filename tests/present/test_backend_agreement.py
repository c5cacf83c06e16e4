"""TF+XLA beside Keras on JAX, per layer: the one sentence that says whether a cost is XLA's own
or TensorFlow's path into XLA (issue 39)."""

from __future__ import annotations

from xlagui.present.explain import (
    agreement_sentence,
    attribution_table,
    backend_agreement,
    explain_lines,
)
from xlagui.present.why_data import Explain


def _explain(xla: float, jax: float) -> Explain:
    """The depthwise convolutions' input gradients: 0.10 s a step on the baseline, `xla` and
    `jax` on the two XLA arms; the rest alike but a matmul where only JAX differs."""
    def arm(depthwise: float, matmul: float) -> dict[str, object]:
        return {"step_seconds": 1.0, "coverage": 0.9, "rows": [
            {"layer": "block_1_depthwise", "pass": "input_gradient",
             "op_kind": "depthwise_convolution", "seconds_per_step": depthwise},
            {"layer": "dense", "pass": "forward", "op_kind": "matmul",
             "seconds_per_step": matmul}]}
    found = Explain.read({"arms": {"baseline": arm(0.10, 0.05), "xla": arm(xla, 0.05),
                                   "jax": arm(jax, 0.30)}})
    assert found is not None
    return found


def test_a_cost_both_xla_arms_pay_is_xlas_own() -> None:
    a = backend_agreement(_explain(xla=2.10, jax=2.00))
    assert a is not None and a.arm == "jax" and round(a.share, 2) == 0.95
    assert agreement_sentence(a) == (
        "Where TF+XLA differs most from the baseline, the depthwise convolutions' input "
        "gradients (+2.00 s a step), Keras on JAX differs by +1.90 s (95% of it): that cost is "
        "XLA's own, not TensorFlow's path into XLA; TF+XLA and Keras on JAX differ most in the "
        "matrix multiplies' forward passes: 0.05 s against 0.30 s a step.")


def test_a_cost_only_tensorflows_xla_pays_is_its_path_into_xla() -> None:
    a = backend_agreement(_explain(xla=2.10, jax=0.15))
    assert a is not None
    # and where the two differ most is that same work: said once
    assert agreement_sentence(a).endswith(
        "Keras on JAX differs by +0.05 s (2% of it): that cost is TensorFlow's: its path into "
        "XLA, or its own copy of XLA.")


def test_in_between_is_said_as_partly_both() -> None:
    a = backend_agreement(_explain(xla=2.10, jax=1.10))
    assert a is not None and agreement_sentence(a).endswith(
        "that cost is partly XLA's and partly TensorFlow's (its path into XLA, or its own copy "
        "of XLA).")


def test_the_sentence_and_the_three_columns_are_in_the_why() -> None:
    explain = _explain(xla=2.10, jax=2.00)
    assert agreement_sentence(backend_agreement(explain)) in explain_lines(explain)  # type: ignore[arg-type]
    table = attribution_table(explain)
    assert table.columns[3:6] == ("baseline", "TF+XLA", "Keras on JAX")
    assert table.columns[6:] == ("TF+XLA − baseline", "Keras on JAX − baseline")


def test_without_a_jax_arm_nothing_is_said() -> None:
    only = Explain.read({"arms": {"baseline": {"rows": []}, "xla": {"rows": []}}})
    assert only is not None and backend_agreement(only) is None


def test_a_saving_only_tensorflows_xla_makes_is_said_as_a_saving_and_no_negative_share() -> None:
    a = backend_agreement(_explain(xla=0.0, jax=0.30))  # TF+XLA −0.10 s, JAX +0.20 s
    assert a is not None and a.share < 0
    assert agreement_sentence(a).startswith(
        "Where TF+XLA differs most from the baseline, the depthwise convolutions' input "
        "gradients (−0.10 s a step), Keras on JAX differs by +0.20 s (the other way): that "
        "saving is TensorFlow's: its path into XLA, or its own copy of XLA")
