"""Whether the installed XLA takes an arm's XLA flags, asked before the worker loads TensorFlow.

XLA reads `XLA_FLAGS` (and TensorFlow `TF_XLA_FLAGS`) at its first compile and aborts the
whole process on a flag it does not know (`parse_flags_from_env.cc`: "Unknown flags in
XLA_FLAGS: --xla_bogus=1"), long after the worker said it had started: the parent would see a
worker die with nothing but a log. No Python reader of XLA's flag table ships with TensorFlow
(no `xla_pb2`), so the worker asks XLA itself: a throwaway child with the worker's own
environment compiles one scalar with XLA, and the worker reads XLA's own refusal from its log
(`refused`). That costs one framework import (2 to 3 s here), paid only by a worker whose arm
gives flags of its own; the refusal is an `UnknownXlaFlag`, which becomes the run's `error`
event (`Failure.UNKNOWN_XLA_FLAG`, the flag named).

The XLA asked is the one that will compile the arm's step: TensorFlow's own copy for an arm on
TensorFlow (`PROBE`), jaxlib's for an arm on JAX (`JAX_PROBE`). The two are built from
different XLA versions and their flag tables differ: jaxlib 0.10.2 takes `--xla_cpu_ftz=true`,
which TensorFlow 2.21's XLA refuses. A JAX worker's TensorFlow, there for tf.data, never
compiles with XLA, so it never reads the flags.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping

from xlagui.core.protocol.arms import Arm
from xlagui.core.protocol.levers import JAX_BACKEND, XLA_FLAGS

# Compiles one scalar with XLA: enough for XLA (and TensorFlow's XLA bridge) to read its flags.
PROBE = (
    "import tensorflow as tf; "
    "tf.function(jit_compile=True)(lambda: tf.constant(0.0) + 1.0)()"
)
# The same with jaxlib's XLA, for an arm on JAX.
JAX_PROBE = (
    "import jax, jax.numpy as jnp; "
    "jax.jit(lambda x: x + 1.0)(jnp.float32(0.0)).block_until_ready()"
)
PROBE_TIMEOUT_SECONDS = 300
# XLA's words when it refuses a flag (its flags' parser, shared by XLA_FLAGS and TF_XLA_FLAGS).
_REFUSED = re.compile(r"Unknown flags? in (TF_XLA_FLAGS|XLA_FLAGS): (.+)$", re.MULTILINE)


class UnknownXlaFlag(RuntimeError):
    """The installed XLA does not know `flag` (given in the variable `variable`)."""

    def __init__(self, flags: tuple[str, ...], variable: str) -> None:
        self.flags = flags
        self.variable = variable
        self.flag = flags[0]
        super().__init__(f"the installed XLA does not know the flag {' '.join(flags)} "
                         f"(in {variable})")


def refused(log: str) -> UnknownXlaFlag | None:
    """XLA's refusal in a process's `log`, as the exception the worker raises (None: none)."""
    found = _REFUSED.search(log)
    if found is None:
        return None
    return UnknownXlaFlag(tuple(found[2].split()), found[1])


def check_flags(arm: Arm, env: Mapping[str, str] | None = None) -> None:
    """Raise `UnknownXlaFlag` when the installed XLA that compiles `arm`'s step (TensorFlow's,
    or jaxlib's for an arm on JAX) refuses a flag of `arm`'s (the arm as the worker applies
    it); an arm without flags of its own is not asked. `env`: the probe's environment (this
    process's, which the parent set for the worker)."""
    if not arm.value(XLA_FLAGS).value:
        return
    probe_env = dict(os.environ if env is None else env)
    probe_env["TF_CPP_MIN_LOG_LEVEL"] = "2"  # XLA's fatal line stays; the chatter goes
    probe = JAX_PROBE if arm.backend == JAX_BACKEND else PROBE
    done = subprocess.run(
        [sys.executable, "-c", probe], env=probe_env, capture_output=True, text=True,
        timeout=PROBE_TIMEOUT_SECONDS, check=False, stdin=subprocess.DEVNULL,
    )
    if done.returncode != 0:
        refusal = refused(done.stderr)
        if refusal is not None:
            raise refusal
        # Any other failure of the probe is the worker's own to meet, with its own words.
