"""Keras on JAX for real (issue 39): `xlagui compare --quick --arms jax` on a tiny set at 40 px,
with the why: JAX measured beside TF+XLA and the baseline, from the baseline's initial weights,
its compiles, parity and per-layer attribution, and the three-way table in the Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import assert_ran, cli
from tests.helpers.datasets import tiny_split_dataset

pytestmark = pytest.mark.tf


def test_jax_is_measured_beside_tf_xla_and_the_baseline_with_its_why(tmp_path: Path) -> None:
    data = tiny_split_dataset(tmp_path / "d")
    out = tmp_path / "out"
    result = cli("compare", str(data), "--quick", "--arms", "jax", "--batch", "8",
                 "--image-size", "40", "--budget", "30", "--out", str(out), timeout=900)
    assert_ran(result.returncode, out, result.stdout + result.stderr)
    report = json.loads((out / "comparison.json").read_text(encoding="utf-8"))

    arms = {a["arm"]: a for a in report["comparison"]["interleaved"]["arms"]}
    assert set(arms) == {"jit", "jax"}
    jax = arms["jax"]
    assert jax["ratio"] > 0 and jax["low"] <= jax["ratio"] <= jax["high"]
    assert jax["valid"] and jax["compile_seconds"] > 0

    runs = {r["run_id"]: r for r in report["inspect_runs"]}
    assert runs["i-jax"]["status"] == "finished"
    compiled = runs["i-jax"]["compilations"]
    assert compiled and compiled[0]["function"] == "train"
    assert compiled[0]["reason"]["kind"] == "first_call"
    started = next(e for e in runs["i-jax"]["events"] if e["type"] == "started")
    assert started["versions"]["backend"] == "jax" and started["versions"]["jax"]
    assert started["levers"] == {"backend": "jax"} and started["xla_in_effect"] is True

    # Parity is judged only from the baseline's own start: the weights were shared.
    assert (out / "initial.weights.h5").is_file()
    assert report["parity"]["jax"]["steps"] > 0
    profile = report["explain"]["arms"]["jax"]
    assert profile["coverage"] >= 0.8
    layers = {r["layer"] for r in profile["rows"]}
    assert {"conv2d", "conv2d_1"} <= layers  # JAX's paths map to the model's own layers

    # What XLA did on JAX: its step function's modules, not its eager ops'.
    did = next(e for e in runs["i-jax"]["events"] if e["type"] == "finished")["summary"]
    assert did["xla_in_effect"] and did["xla_evidence"]["compiled"]
    assert {m["name"] for m in did["xla_did"]["modules"]} <= {
        "jit_train_step", "jit_test_step", "jit_predict_step"}

    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    assert "| baseline | TF+XLA | Keras on JAX |" in markdown.replace("  ", " ")
    assert "Where TF+XLA differs most from the baseline" in markdown
