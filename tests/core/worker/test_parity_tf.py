"""Parity with real workers, one process per arm (XLA's settings are process-global), at 48 px
on a small demo set: the baseline repeats itself bit for bit (the model is put back after its
steps), jit is "same" on the article's CNN and on the Mixer, the perturbing test lever
(tests/helpers/levers.py) "diverges", and the knob (two steps a call) computes exactly the
baseline's numbers. The traces come from the test-only parity worker
(tests/helpers/parity_worker.py) through the app's `WorkerProcess`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.levers import register_knob, register_perturb
from tests.helpers.parity_runs import arm_traces, references
from xlagui.core.analysis.parity import ParityKind, judge
from xlagui.core.data.demo import generate_demo_dataset
from xlagui.core.data.scan import DatasetScan, scan_dataset
from xlagui.core.protocol.config import ModelChoice, RunConfig

pytestmark = pytest.mark.tf

STEPS = 12


@pytest.fixture(scope="module")
def scan(tmp_path_factory: pytest.TempPathFactory) -> DatasetScan:
    root = tmp_path_factory.mktemp("parity") / "demo"
    return scan_dataset(generate_demo_dataset(root, train_per_class=24, test_per_class=4,
                                              image_size=56))


def config(model: str, *arms: str) -> RunConfig:
    return RunConfig(batch_size=8, image_size=48, seed=5, model=ModelChoice(name=model),
                     arms=arms)


def test_jit_is_the_same_on_the_cnn_and_the_perturbed_arm_diverges(
    scan: DatasetScan, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register_perturb(monkeypatch)
    register_knob(monkeypatch)
    traces = arm_traces(scan, config("cnn", "jit", "perturbed", "knob2"), tmp_path, STEPS)
    baseline = traces["baseline"]
    plain, reference = baseline["plain"], references(traces)
    assert plain == baseline["again"]  # put back after its steps and after the nudged ones
    assert len(reference) == 3 and len(set(reference)) == 3  # nudged two ways, permuted
    assert all(r.nudged and r != plain for r in reference)
    assert len(plain.losses) == STEPS and len(plain.outputs) == 8  # one sigmoid per image
    jit = judge(plain, traces["xla"]["plain"], reference)
    assert jit.kind is ParityKind.SAME, jit
    perturbed = judge(plain, traces["perturbed"]["plain"], reference)
    assert perturbed.kind is ParityKind.DIVERGES, perturbed
    assert perturbed.max_rel_loss_diff > 5e-4  # the lever's 2^-10 from the first step
    # Two steps a call and two inter-op threads change no number: still one loss per step.
    knob = judge(plain, traces["knob2"]["plain"], reference)
    assert (knob.kind, knob.max_rel_loss_diff, knob.max_rel_output_diff) == (
        ParityKind.SAME, 0.0, 0.0)


def test_jit_is_the_same_on_the_mixer(scan: DatasetScan, tmp_path: Path) -> None:
    traces = arm_traces(scan, config("mixer", "jit"), tmp_path, STEPS)
    baseline = traces["baseline"]
    jit = judge(baseline["plain"], traces["xla"]["plain"], references(traces))
    assert jit.kind is ParityKind.SAME, jit
