"""Evidence that XLA compiled something: HLO modules dumped by XLA and TensorFlow's log line.

Asking for XLA is not proof of getting it (on CPU, `set_jit(True)` alone compiles nothing), so a
run reads back what happened instead of trusting the setting.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass
from pathlib import Path

from xlagui.core.xla.hlo import compile_times

# TensorFlow logs this once per process when XLA compiles its first cluster.
COMPILED_LINE = "Compiled cluster using XLA"
_MODULE_RE = re.compile(r"^module_(\d+)\.")
_FUSION_RE = re.compile(r"\bfusion\(.*\bkind=k\w+")


@dataclass(frozen=True)
class XlaEvidence:
    """What a run read back after training; `compiled` says XLA compiled something (any of the
    signs below, or a run that said so without counting them)."""

    hlo_modules: int = 0  # compiled HLO modules written to the dump folder
    fusions: int = 0  # fusion instructions in the optimised modules
    compiled_log_line: bool = False  # TensorFlow's "Compiled cluster using XLA!" was logged
    dump_dir: str = ""
    # XLA compilations TensorFlow logged with their time (`hlo.compile_times`): the evidence of
    # a worker that dumps nothing, such as a measuring one.
    compilations: int = 0
    compiled: bool = False

    def __post_init__(self) -> None:
        seen = self.hlo_modules > 0 or self.compiled_log_line or self.compilations > 0
        object.__setattr__(self, "compiled", self.compiled or seen)


def count_dump(dump_dir: Path, names: Container[str] | None = None) -> tuple[int, int]:
    """(number of compiled HLO modules, number of fusion instructions after optimisation);
    `names`: only the modules of these names."""
    if not dump_dir.is_dir():
        return 0, 0
    modules: set[str] = set()
    fusions = 0
    for f in dump_dir.iterdir():
        m = _MODULE_RE.match(f.name)
        # "module_N.<name>.after_optimizations.txt" on GPU builds of old, and
        # "module_N.<name>.cpu_after_optimizations.txt" on the CPU backend.
        if not m or not f.name.endswith("after_optimizations.txt"):
            continue
        if names is not None and f.name.split(".")[1] not in names:
            continue
        modules.add(m.group(1))
        with f.open(encoding="utf-8", errors="replace") as fh:
            fusions += sum(1 for line in fh if _FUSION_RE.search(line))
    return len(modules), fusions


def log_has_compiled_line(log_path: Path) -> bool:
    try:
        with log_path.open(encoding="utf-8", errors="replace") as fh:
            return any(COMPILED_LINE in line for line in fh)
    except OSError:
        return False


def collect(dump_dir: Path, log_path: Path, names: Container[str] | None = None
            ) -> XlaEvidence:
    """What a run's dump and log say XLA compiled (`names`: only the modules of these names,
    and their compile lines: a JAX worker's step functions)."""
    modules, fusions = count_dump(dump_dir, names)
    times = compile_times(log_path)
    return XlaEvidence(
        hlo_modules=modules,
        fusions=fusions,
        compiled_log_line=log_has_compiled_line(log_path),
        dump_dir=str(dump_dir),
        compilations=len([t for t in times if names is None or t[0] in names]),
    )

