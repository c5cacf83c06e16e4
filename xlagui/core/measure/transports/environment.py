"""The one environment recipe of every child: what it needs set before it imports TensorFlow
(`child_settings`), added to this process's environment for a child here (`local_env`) or to
the host's own for one there (the SSH transport's command line).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

from xlagui.core.files import paths
from xlagui.core.machine.device import Device
from xlagui.core.measure.jobs import ChildSettings
from xlagui.core.protocol import levers
from xlagui.core.protocol.arms import Arm
from xlagui.core.protocol.config import XlaMode
from xlagui.core.protocol.identity import DumpChoice

# What an XLA worker dumps to run_dir/xla, the material of "what XLA did" (`core/xla/hlo.py`).
# XLA's CPU backend in TF 2.21 writes its LLVM IR, MLIR and object files whenever dumping is on,
# whatever the format flags (`--xla_dump_emitter_re` and `--xla_dump_hlo_module_re` do not
# remove them; there is no `--xla_dump_ir`), so a dump is never only the HLO text. Without
# metadata the HLO text is half the size (186 → 93 KB at 64 px), but the whole dump only 6%
# smaller and its compile no faster within the noise, and the op names it drops are what label
# the fusions: `text` it is. bench/bench_evidence.py measured what a dump costs (BENCHMARKS.md,
# "Evidence collection"); `compare.spec_for` keeps it out of the measuring workers.
XLA_DUMPS: dict[DumpChoice, str] = {
    DumpChoice.TEXT: "--xla_dump_hlo_as_text",
    DumpChoice.NOMETA: "--xla_dump_hlo_as_text --xla_dump_disable_metadata",
    DumpChoice.NONE: "",
}

# Variables a child's environment must not inherit: the recipe sets them or leaves them out
# (with every variable a lever sets: `owned`).
WORKER_OWNED = ("TF_XLA_FLAGS", "XLA_FLAGS", "CUDA_VISIBLE_DEVICES", "TF_CPP_VMODULE")


def owned() -> tuple[str, ...]:
    """Every variable a child's environment must not inherit: the recipe's own and the levers'
    (`levers.variables`), so that a lever's baseline value is TensorFlow's default, not the
    shell's."""
    return tuple(dict.fromkeys((*WORKER_OWNED, *levers.variables())))


def xla_flags(run_dir: PurePath, dump: DumpChoice) -> str:
    """XLA_FLAGS for a worker that dumps `dump` (a key of `XLA_DUMPS`) into run_dir/xla."""
    if dump not in XLA_DUMPS:
        raise ValueError(f"unknown XLA dump setting {dump!r}; one of {', '.join(XLA_DUMPS)}")
    flags = XLA_DUMPS[DumpChoice(dump)]
    return f"--xla_dump_to={run_dir / 'xla'} {flags}" if flags else ""


def child_settings(settings: ChildSettings, folder: PurePath, keras_home: PurePath
                   ) -> dict[str, str]:
    """The variables a child in `folder` (its folder where it runs) needs set before it imports
    TensorFlow, and only those."""
    env: dict[str, str] = {}
    if settings.device is not None:
        visible = Device.parse(settings.device).visible_gpus
        if visible is not None:  # "" hides every GPU (the CPU), "N" shows GPU N alone
            env["CUDA_VISIBLE_DEVICES"] = visible
    env.update(settings.env)  # the arm's levers' (TF_XLA_FLAGS for auto-clustering)
    if settings.xla_mode is not XlaMode.OFF or settings.compiles:
        # The compiled HLO modules are the evidence that XLA did compile (after any flags of
        # the arm's own); JAX's XLA reads XLA_FLAGS too.
        flags = xla_flags(folder, settings.dump)
        if flags:
            env["XLA_FLAGS"] = f"{env['XLA_FLAGS']} {flags}" if env.get("XLA_FLAGS") else flags
        # One log line per compiled cluster with its compile time ("Compiled NAME 1 times,
        # compile time: N us"): the per-module compile time of "what XLA did".
        env["TF_CPP_VMODULE"] = "device_compilation_profiler=1"
    # A run keeps "Compiled cluster using XLA" in its log; a probe keeps its log short.
    env["TF_CPP_MIN_LOG_LEVEL"] = "2" if settings.quiet else "0"
    # Keras writes ~/.keras/keras.json on import; keep it in our own cache folder instead.
    env["KERAS_HOME"] = str(keras_home)
    # TensorFlow's autograph leaves generated source files in the temporary folder; give the
    # child one of its own, which `ChildProcess.close` removes when the child has ended.
    for key in ("TMPDIR", "TEMP", "TMP"):
        env[key] = str(folder / "tmp")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def local_env(settings: ChildSettings, folder: Path) -> dict[str, str]:
    """The environment of a child on this computer: this process's, less what the recipe owns,
    plus the recipe."""
    skip = owned()
    env = {k: v for k, v in os.environ.items() if k not in skip}
    keras_home = Path(env.get("KERAS_HOME") or paths.cache_dir() / "keras")
    env.update(child_settings(settings, folder, keras_home))
    return env


def worker_env(xla_mode: XlaMode, device: str, run_dir: Path,
               dump: DumpChoice = DumpChoice.TEXT) -> dict[str, str]:
    """`local_env` of a training or measuring worker of the arm `xla_mode` on this computer."""
    env = tuple(Arm(xla_mode).environment().items())
    return local_env(ChildSettings(device, xla_mode, dump, quiet=False, env=env), run_dir)
