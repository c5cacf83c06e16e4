"""How a worker applies an arm's levers and proves they engaged.

Every lever's value declares what it sets, as data of a few generic kinds
(`xlagui.core.protocol.levers.LeverValue`): the environment (set by the parent before this
process loads TensorFlow), `tf.config` calls and the Keras dtype policy (`apply_before_build`,
before the model is built: both apply to what is built after them) and `model.compile`'s
keyword arguments (`Arm.compile_arguments`, passed by `setup`). A lever that needs more, a proof
that it engaged read back from the compiled model, has a check here under its name (`CHECKS`):
the facts it returns go into the `started` event.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from xlagui.core.protocol.arms import Arm
from xlagui.core.protocol.levers import TF_BACKEND, LeverValue
from xlagui.core.protocol.modes import XlaMode
from xlagui.core.protocol.precision import Precision
from xlagui.core.worker.backends import current_backend

# A lever's check: (tf, the compiled model, the arm's value of the lever) -> facts for the
# `started` event (its fields by name); raises to refuse a run that did not get its value.
Check = Callable[[Any, Any, LeverValue], dict[str, Any]]


def apply_before_build(tf: Any, keras: Any, arm: Arm) -> None:
    """Every lever's `tf.config` calls and dtype policy, in the registry's order (the baseline's
    values too: a baseline says each setting rather than trusting a default)."""
    for _lever, value in arm.every_value():
        for name, args in value.tf_config:
            tf_config_call(tf, name)(*args)
        if value.policy:
            # The value, not an enum: Keras reads a `.name` attribute as the dtype's name.
            keras.mixed_precision.set_global_policy(str(value.policy))


def tf_config_call(tf: Any, name: str) -> Callable[..., Any]:
    """`tf.config.<name>` ("optimizer.set_jit"); `AttributeError` names a call this TensorFlow
    does not have."""
    target = tf.config
    for part in name.split("."):
        target = getattr(target, part)
    if not callable(target):
        raise AttributeError(f"tf.config.{name} is not a call")
    return target  # type: ignore[no-any-return]  # TensorFlow is untyped


def check_levers(tf: Any, model: Any, arm: Arm) -> dict[str, Any]:
    """What the levers' checks (`CHECKS`) read back from the compiled model, for `started`."""
    facts: dict[str, Any] = {}
    for one, value in arm.every_value():
        check = CHECKS.get(one.name)
        if check is not None:
            facts.update(check(tf, model, value))
    return facts


def _xla_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """Whether XLA is on, read back from what Keras and TensorFlow say (for "auto": what
    Keras resolved it to). A baseline with XLA on is refused: it would be no baseline."""
    if current_backend() != TF_BACKEND:
        return {}  # the XLA modes are TensorFlow's; the backend's check reads JAX's
    mode = XlaMode(value.value)
    facts = mode.facts
    if facts.jit_compile:
        in_effect = bool(model.jit_compile)
    elif facts.autoclusters:
        in_effect = bool(tf.config.optimizer.get_jit())
    else:
        in_effect = bool(model.jit_compile) or bool(tf.config.optimizer.get_jit())
        if mode is XlaMode.OFF and in_effect:
            raise RuntimeError("the baseline has XLA switched on; refusing to call it a baseline")
    return {"xla_in_effect": in_effect}


def read_back_policy(model: Any) -> dict[str, Any]:
    """What the compiled model really computes in: its policy, the first convolution's compute
    and variable dtypes, the output layer's dtype, and whether the optimizer scales the loss."""
    import keras  # lazy: Keras is for the worker, after the parent's environment is in place

    first = next((layer for layer in model.layers if layer.weights), model.layers[0])
    return {
        "policy": str(model.dtype_policy.name),
        "compute_dtype": str(first.compute_dtype),
        "variable_dtype": str(first.variable_dtype),
        "output_dtype": str(model.layers[-1].compute_dtype),
        "loss_scale": isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer),
    }


def _policy_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """The policy read back; a float32 run under another policy is refused (no baseline)."""
    read_back = read_back_policy(model)
    if value.value == Precision.FLOAT32 and read_back["policy"] != Precision.FLOAT32:
        raise RuntimeError(
            f"the run asked for float32 but the {read_back['policy']} policy is in effect; "
            "refusing to call it a baseline"
        )
    return read_back


def _threads_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """A thread count asked for is the one TensorFlow says it uses (its default, 0, else)."""
    asked = int(value.value) if value.value.isdigit() else 0
    got = int(tf.config.threading.get_intra_op_parallelism_threads())
    if got != asked:
        raise RuntimeError(f"the run asked for {asked or 'the default'} intra-op threads but "
                           f"TensorFlow uses {got}; refusing to measure it")
    return {}


def _steps_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """The compiled model runs the steps per call asked for (the measuring worker counts its
    batches by it)."""
    if value.value == "1":
        return {}  # not asked: Keras' default, or what another lever's arguments set
    got = int(getattr(model, "steps_per_execution", 1) or 1)
    if got != int(value.value):
        raise RuntimeError(f"the run asked for steps_per_execution={value.value} but the "
                           f"model has {got}; refusing to measure it")
    return {}


def _environment_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """The variables a value sets (oneDNN's, the XLA flags) reached this process (the parent
    sets them; a transport that lost one would measure the wrong thing)."""
    for name, text in value.env:
        have = os.environ.get(name, "").split()
        if not all(word in have for word in text.split()):
            raise RuntimeError(f"the run asked for {name}={text} but this process has "
                               f"{name}={os.environ.get(name, '')!r}; refusing to measure it")
    return {}


def _backend_in_effect(tf: Any, model: Any, value: LeverValue) -> dict[str, Any]:
    """The worker runs on the backend asked for (the parent sets `KERAS_BACKEND`; Keras reads
    it once, at its first import), and an arm off TensorFlow compiles its step (on JAX,
    `jit_compile=False` would run it eagerly: not the arm anyone asked for)."""
    got = current_backend()
    if got != value.value:
        raise RuntimeError(f"the run asked for the {value.value} backend but Keras runs on "
                           f"{got}; refusing to measure it")
    if got == TF_BACKEND:
        return {}
    if not model.jit_compile:
        raise RuntimeError(f"the run asked for Keras on {got} with its compiled step, but "
                           "jit_compile is off; refusing to measure it")
    return {"xla_in_effect": True}


# The checks, by lever name: a lever whose data is enough has none.
CHECKS: dict[str, Check] = {
    "xla": _xla_in_effect,
    "precision": _policy_in_effect,
    "threads": _threads_in_effect,
    "spe": _steps_in_effect,
    "onednn": _environment_in_effect,
    "xla_flags": _environment_in_effect,
    "backend": _backend_in_effect,
}
