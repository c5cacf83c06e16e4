"""The XLA modes: how (and whether) XLA is switched on for a run, and everything the app says
or sets per mode, in one table keyed by the mode.

Below `config` and `arms`, which both need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from xlagui.core.protocol.identity import StrEnum


class XlaMode(StrEnum):
    """How (and whether) XLA is switched on for a run.

    Everything the app says or sets per mode is in `_XLA_MODE_FACTS` below; how a worker
    switches a mode on and proves it engaged is in `xlagui.core.worker.child._setup`. Those two
    places (and `OFFERED` in `xlagui.core.protocol.arms`, to offer it in the window) are all a new
    mode needs.
    """

    OFF = "off"  # jit_compile=False explicitly, no auto-clustering: the baseline
    JIT = "jit"  # model.compile(jit_compile=True): the recommended way
    AUTOCLUSTER = "autocluster"  # the article's tf.config.optimizer.set_jit(True)
    AUTO = "auto"  # model.compile(jit_compile="auto"): what Keras 3 does when not told

    @property
    def asks_for_xla(self) -> bool:
        return self is not XlaMode.OFF

    @property
    def label(self) -> str:
        """A run's heading: "XLA (jit_compile=True)"."""
        return _XLA_MODE_FACTS[self].label

    @property
    def facts(self) -> ModeFacts:
        """Everything said or set for this mode: `label`, `short` (inside an arm's name: "XLA
        jit_compile"), `words` (a column's subtitle: "jit_compile=True"), `how` (in code words)
        and `tf_xla_flags` (set before TensorFlow loads, "" for none)."""
        return _XLA_MODE_FACTS[self]


@dataclass(frozen=True)
class ModeFacts:
    label: str
    short: str
    words: str
    how: str
    tf_xla_flags: str = ""
    brief: str = ""  # in a row label of the limits table: "XLA jit, steady step"
    # How a worker switches the mode on: what `model.compile` gets for `jit_compile`, and
    # whether TensorFlow's auto-clustering (`tf.config.optimizer.set_jit`) is on.
    jit_compile: bool | Literal["auto"] = False
    autoclusters: bool = False


_XLA_MODE_FACTS = {
    XlaMode.OFF: ModeFacts(
        "Baseline (XLA off)",
        "XLA off",
        "XLA off (jit_compile=False)",
        "jit_compile=False, no auto-clustering",
        brief="XLA off",
    ),
    XlaMode.JIT: ModeFacts(
        "XLA (jit_compile=True)",
        "XLA jit_compile",
        "jit_compile=True",
        "model.compile(jit_compile=True)",
        jit_compile=True,
        brief="XLA jit",
    ),
    XlaMode.AUTOCLUSTER: ModeFacts(
        "XLA (auto-clustering, set_jit)",
        "XLA auto-clustering",
        "auto-clustering (set_jit, the article's way)",
        "tf.config.optimizer.set_jit with TF_XLA_FLAGS=--tf_xla_cpu_global_jit",
        # set_jit(True) alone compiles nothing on CPU; these flags make auto-clustering engage.
        tf_xla_flags="--tf_xla_auto_jit=2 --tf_xla_cpu_global_jit",
        autoclusters=True,
        brief="XLA auto-clustering",
    ),
    XlaMode.AUTO: ModeFacts(
        'XLA (Keras\' jit_compile="auto")',
        "Keras auto XLA",
        'jit_compile="auto" (Keras decides)',
        'model.compile(jit_compile="auto"), Keras 3\'s default: XLA on when a GPU is visible, '
        "off on a CPU-only machine (then the arm does not engage)",
        jit_compile="auto",
        brief="Keras auto XLA",
    ),
}
