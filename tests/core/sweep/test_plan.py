"""The sweep's grid planner (`xlagui.core.sweep.plan`): the Cartesian product of the axes, the
cells' keys and settings, a cell that cannot run planned with its reason, and the budgets."""

from __future__ import annotations

import json

import pytest

from xlagui.core.protocol.config import ConfigError, RunConfig, XlaMode
from xlagui.core.sweep.plan import (
    CELL_OVERHEAD_SECONDS,
    Axis,
    arms_config,
    cell_key,
    plan_from_dict,
    plan_sweep,
)


def test_the_grid_is_every_combination_of_the_axes_in_order() -> None:
    plan = plan_sweep(RunConfig(), [Axis("batch_size", ("16", "128")),
                                    Axis("image_size", ("48", "64", "150"))], None)
    assert [c.settings for c in plan.cells][:2] == [
        (("batch_size", "16"), ("image_size", "48")),
        (("batch_size", "16"), ("image_size", "64"))]
    assert len(plan.cells) == 6
    assert [(c.config.batch_size, c.config.image_size) for c in plan.cells] == [
        (16, 48), (16, 64), (16, 150), (128, 48), (128, 64), (128, 150)]
    assert [c.key for c in plan.cells][:2] == ["b16-px48", "b16-px64"]
    assert len({c.key for c in plan.cells}) == 6
    for cell in plan.cells:  # every cell is a quick comparison without the why
        assert cell.config.quick and not cell.config.explain and cell.problem == ""
        assert cell.host is None
    assert [a.name for a in plan.swept] == ["batch_size", "image_size"]


def test_arms_models_and_hosts_make_cells_of_their_own() -> None:
    plan = plan_sweep(RunConfig(image_size=64), [
        Axis("model", ("cnn", "mixer")), Axis("arms", ("JIT, bf16", "bf16")),
        Axis("host", ("local", "gpu-box"))], None)
    assert len(plan.cells) == 8
    first = plan.cells[0]
    assert first.settings == (("model", "cnn"), ("arms", "jit,bf16"), ("host", "local"))
    assert first.key == "cnn-jit_bf16-on-local" and first.host is None
    assert plan.cells[1].host == "gpu-box"
    assert first.config.xla is XlaMode.JIT and first.config.arms == ("jit", "bf16")
    mixer = next(c for c in plan.cells if c.setting("model") == "mixer")
    assert mixer.config.model.name == "mixer"
    # bf16 alone still has its XLA side (every comparison has one): jit, measured too
    assert arms_config("bf16") == (XlaMode.JIT, ("bf16",))
    assert arms_config("bf16,autocluster") == (XlaMode.AUTOCLUSTER, ("bf16", "autocluster"))


def test_a_cell_that_cannot_run_is_planned_with_its_reason() -> None:
    plan = plan_sweep(RunConfig(), [Axis("image_size", ("30", "48")),
                                    Axis("model", ("cnn", "no-such.keras"))], None)
    problems = {c.key: c.problem for c in plan.cells}
    assert "smallest image it accepts is 36x36" in problems["px30-cnn"]
    assert problems["px48-cnn"] == ""
    assert any("no-such.keras" in p for k, p in problems.items() if "no-such" in k)
    assert len(plan.cells) == 4  # planned all the same: each a row with its reason


def test_the_cell_budgets_come_from_the_sweeps() -> None:
    axes = [Axis("batch_size", ("16", "32", "64", "128"))]
    plan = plan_sweep(RunConfig(), axes, 4 * (CELL_OVERHEAD_SECONDS + 50))
    assert plan.cell_budget_seconds == 50
    assert all(c.config.budget_seconds == 50 for c in plan.cells)
    assert plan.expected_seconds == 4 * (CELL_OVERHEAD_SECONDS + 50)
    with pytest.raises(ConfigError, match=r"too small for 4 cells.*at least 200 s"):
        plan_sweep(RunConfig(), axes, 100)
    # without a budget, each cell the default budget of its arms (120 s, +60 per arm)
    plan = plan_sweep(RunConfig(), [Axis("arms", ("jit", "jit,bf16"))], None)
    assert plan.cell_budget_seconds == 180
    assert plan.total_budget_seconds == 2 * (180 + CELL_OVERHEAD_SECONDS)


def test_bad_axes_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown sweep axis 'colour'"):
        Axis("colour", ("red",))
    with pytest.raises(ConfigError, match="names a value twice"):
        Axis("batch_size", ("16", "16"))
    with pytest.raises(ConfigError, match="at least one value"):
        Axis("batch_size", ())
    with pytest.raises(ConfigError, match="named twice"):
        plan_sweep(RunConfig(), [Axis("batch_size", ("1",)), Axis("batch_size", ("2",))], None)
    cell = plan_sweep(RunConfig(), [Axis("batch_size", ("sixteen",))], None).cells[0]
    assert cell.problem == "batch_size takes whole numbers, got 'sixteen'"


def test_keys_are_file_safe_and_stable() -> None:
    settings = (("model", "/home/me/my net.keras"), ("batch_size", "16"))
    key = cell_key(settings)
    assert key == cell_key(settings)
    assert key.startswith("_home_me_my_net.keras-b16-") and len(key.split("-")[-1]) == 8
    assert all(ch.isalnum() or ch in "._+-" for ch in key)
    assert cell_key((("arms", "jit+bf16"),)) != cell_key((("arms", "jit,bf16"),))


def test_the_plans_identity_leaves_out_the_budget() -> None:
    axes = [Axis("batch_size", ("16", "32"))]
    a = plan_sweep(RunConfig(), axes, 400)
    b = plan_sweep(RunConfig(), axes, 800)
    assert a.identity() == b.identity() and a.cell_budget_seconds != b.cell_budget_seconds
    assert plan_sweep(RunConfig(seed=3), axes, 400).identity() != a.identity()


def test_runtime_settings_are_axes_every_worker_of_the_cell_takes() -> None:
    plan = plan_sweep(RunConfig(image_size=48, levers={"spe": "4"}),
                      [Axis("lever:threads", ("1", "t2")), Axis("lever:onednn", ("on", "off"))],
                      None)
    assert [a.values for a in plan.axes] == [("1", "2"), ("on", "off")]  # canonical
    assert [c.key for c in plan.cells] == ["threads-1-onednn-on", "threads-1-onednn-off",
                                           "threads-2-onednn-on", "threads-2-onednn-off"]
    assert plan.cells[1].config.levers == {"threads": "1", "onednn": "off", "spe": "4"}
    with pytest.raises(ConfigError, match="no lever called 'colour'"):
        plan_sweep(RunConfig(), [Axis("lever:colour", ("red",))], None)
    with pytest.raises(ConfigError, match="XLA's own"):
        plan_sweep(RunConfig(), [Axis("lever:xla_flags", ("--xla_cpu_use_xnnpack=true",))], None)
    with pytest.raises(ConfigError, match="threads must be a whole number"):
        plan_sweep(RunConfig(), [Axis("lever:threads", ("0",))], None)


def test_a_saved_plan_is_planned_again_the_same() -> None:
    for plan in (
        plan_sweep(RunConfig(image_size=48), [Axis("batch_size", ("16", "32")),
                                              Axis("lever:threads", ("1", "2"))], 1000),
        plan_sweep(RunConfig(), [Axis("arms", ("jit", "bf16,jit+bf16")),
                                 Axis("image_size", ("30", "64"))], None),
    ):
        assert plan_from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    with pytest.raises(ConfigError, match="could not be read"):
        plan_from_dict({"axes": []})


def test_the_backend_axis_measures_the_backends_arm_in_its_cells() -> None:
    plan = plan_sweep(RunConfig(image_size=48, arms=("bf16",)),
                      [Axis("lever:backend", ("tensorflow", "JAX"))], None)
    assert plan.axes[0].values == ("tf", "jax")  # canonical
    tf, jax = plan.cells
    assert (tf.key, tf.config.arms, tf.config.levers) == ("backend-tf", ("bf16",), {})
    # not every worker's: the baseline stays TensorFlow's; the cell adds the JAX arm
    assert (jax.key, jax.config.arms, jax.config.levers) == ("backend-jax", ("bf16", "jax"), {})
    with pytest.raises(ConfigError, match="backend takes tf, jax, got 'torch'"):
        plan_sweep(RunConfig(), [Axis("lever:backend", ("torch",))], None)
