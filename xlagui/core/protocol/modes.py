"""The XLA modes: how (and whether) XLA is switched on for a run, and what the worker sets for
each, in one table keyed by the mode. The XLA lever (`xlagui.core.protocol.levers`) is built on
it; what the app says of each mode is `xlagui.present.levers`'.

Below `levers`, `config` and `arms`, which all need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xlagui.core.protocol.identity import StrEnum


class XlaMode(StrEnum):
    """How (and whether) XLA is switched on for a run.

    What a worker sets per mode is in `_XLA_MODE_FACTS` below (the XLA lever's values in
    `xlagui.core.protocol.levers` declare it: the environment, `set_jit`, `jit_compile`); how
    the worker proves a mode engaged is the XLA lever's check in `xlagui.core.worker.levers`
    (`CHECKS`); what is said of it, `xlagui.present.levers.VALUE_WORDS`. A new mode is a member
    here, its facts, its value in the lever's table and its words.
    """

    OFF = "off"  # jit_compile=False explicitly, no auto-clustering: the baseline
    JIT = "jit"  # model.compile(jit_compile=True): the recommended way
    AUTOCLUSTER = "autocluster"  # the article's tf.config.optimizer.set_jit(True)
    AUTO = "auto"  # model.compile(jit_compile="auto"): what Keras 3 does when not told

    @property
    def asks_for_xla(self) -> bool:
        return self is not XlaMode.OFF

    @property
    def facts(self) -> ModeFacts:
        """What a worker sets for this mode: `tf_xla_flags` (before TensorFlow loads, "" for
        none), `jit_compile` (for `model.compile`) and `autoclusters` (`set_jit`)."""
        return _XLA_MODE_FACTS[self]


@dataclass(frozen=True)
class ModeFacts:
    tf_xla_flags: str = ""
    # How a worker switches the mode on: what `model.compile` gets for `jit_compile`, and
    # whether TensorFlow's auto-clustering (`tf.config.optimizer.set_jit`) is on.
    jit_compile: bool | Literal["auto"] = False
    autoclusters: bool = False


_XLA_MODE_FACTS = {
    XlaMode.OFF: ModeFacts(),
    XlaMode.JIT: ModeFacts(jit_compile=True),
    XlaMode.AUTOCLUSTER: ModeFacts(
        # set_jit(True) alone compiles nothing on CPU; these flags make auto-clustering engage.
        tf_xla_flags="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
        autoclusters=True,
    ),
    XlaMode.AUTO: ModeFacts(jit_compile="auto"),
}
