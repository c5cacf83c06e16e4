"""A made-up lever, registered only inside the tests that ask for it (`register_knob`): what a
new lever declares, and nothing the app ships.

`knob` has the baseline's value 1 (nothing set: TensorFlow's defaults) and 2 (arm `knob2`),
which sets an environment variable before TensorFlow loads, a `tf.config` call and a
`model.compile` keyword argument (`steps_per_execution`), and brings no words and no colour of
its own. `python -m tests.helpers.levers SPEC.json` is a real worker with the knob registered
and a check that refuses a run whose model, `tf.config` or environment did not get its value
(the `tf` test's proof that the declared data reached them).

`perturb` is the parity tests' arm that computes something else (`register_perturb`): its value
"on" (arm `perturbed`) weighs the loss by 1 + 2^-10 through `model.compile(loss_weights=...)`,
a difference a thousand times float32's rounding, as a miscompiled step would make.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from xlagui.core.protocol import levers
from xlagui.core.protocol.levers import Lever, LeverValue

VARIABLE = "XLAGUI_TEST_KNOB"
KNOB = Lever(
    name="knob",
    values=(
        LeverValue("1"),
        LeverValue(
            "2",
            part="knob2",
            offered=True,
            env=((VARIABLE, "2"),),
            tf_config=(("threading.set_inter_op_parallelism_threads", (2,)),),
            compile=(("steps_per_execution", 2),),
        ),
    ),
    plural="knob settings",
)


PERTURBATION = 1 + 2.0**-10
PERTURB = Lever(
    name="perturb",
    values=(
        LeverValue("off"),
        LeverValue("on", part="perturbed", offered=True,
                   compile=(("loss_weights", (PERTURBATION,)),)),
    ),
    plural="perturbations",
)


def register_perturb(monkeypatch: pytest.MonkeyPatch) -> Lever:
    """The perturbing lever, last in the registry until the test ends."""
    monkeypatch.setattr(levers, "LEVERS", (*levers.LEVERS, PERTURB))
    return PERTURB


def register_knob(monkeypatch: pytest.MonkeyPatch) -> Lever:
    """The knob, last in the registry until the test ends."""
    monkeypatch.setattr(levers, "LEVERS", (*levers.LEVERS, KNOB))
    return KNOB


def check_knob(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """What a worker of the knob's `value` must have: refused otherwise (no facts to report)."""
    asked = value.value == "2"
    got = (int(model.steps_per_execution), tf.config.threading.get_inter_op_parallelism_threads(),
           os.environ.get(VARIABLE, ""))
    want = (2, 2, "2") if asked else (1, 0, "")
    if got != want:
        raise RuntimeError(f"knob {value.value}: steps_per_execution, inter-op threads and "
                           f"{VARIABLE} are {got}, not {want}")
    return {}


def main() -> None:
    from xlagui.core.worker import child
    from xlagui.core.worker import levers as worker_levers

    levers.LEVERS = (*levers.LEVERS, KNOB)
    worker_levers.CHECKS["knob"] = check_knob
    child.entry()


if __name__ == "__main__":
    main()
