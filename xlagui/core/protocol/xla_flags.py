"""XLA's flags as an arm's lever: how an arm's name writes them, their canonical text, and the
named flags the window offers.

An arm's name writes a flag as itself, without its dashes: `jit+xla_cpu_use_xnnpack=false`
(`--arms`, `--set`), and several flags as several parts (`jit+xla_a=1+xla_b=2`). That
spelling has no character a file name (Windows' `<>:"/\\|?*`), a CSV cell (`,` `"`) or an
unquoted shell word (`( ) ; & |` spaces) treats specially, so an arm's name stays its folder's
name and its cell's text. The price: a flag's value is lower-case letters, digits and `_ . -`
(what the speed flags take), and an arm's name is lower-cased.

A flag whose name starts `tf_xla_` is TensorFlow's (`TF_XLA_FLAGS`); any other `xla_` flag is
XLA's (`XLA_FLAGS`). The canonical text is `--name=value` flags sorted by name, space-joined:
the lever's stored value. A few flags that change speed have a short part of their own
(`NAMED`): the window offers those (`offered`), with one line each (`xlagui.present.levers`).
Whether the installed XLA knows a flag is the worker's question, before TensorFlow loads
(`xlagui.core.worker.flags`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlagui.core.protocol.settings import ConfigError

_FLAG = re.compile(r"^(?:--)?((?:tf_)?xla_[a-z0-9_]+)=([a-z0-9_.\-]+)$")
_FLAG_NAME = re.compile(r"^(?:--)?((?:tf_)?xla_[a-z0-9_]+)$")
TF_PREFIX = "tf_xla_"
XLA_VARIABLE = "XLA_FLAGS"
TF_VARIABLE = "TF_XLA_FLAGS"


@dataclass(frozen=True)
class NamedFlag:
    """A flag with a short part of its own in an arm's name (`xnnpack`), and whether the window
    offers it (measured to change speed here: docs/flags-findings.md)."""

    part: str
    flag: str  # its name, without dashes
    value: str
    offered: bool = False


# TF 2.21's XLA defaults (xla/debug_options_flags.cc): XNNPACK on, oneDNN off, YNNPACK for
# single dots ("individual_dot"), vectors of 256 bits, no fast math, Eigen multi-threaded.
# Each named flag moves one of them. Measured interleaved against jit once (docs/flags-findings.md,
# the CNN at 64 px on a shared 2-core Xeon): only `ynndot` changed speed (1.30x slower than
# jit, 95% CI 1.18-1.43); the others stayed within about +-9% of jit, the interval's width
# there. The window offers the flags that changed speed (`offered`).
NAMED: tuple[NamedFlag, ...] = (
    NamedFlag("noxnnpack", "xla_cpu_use_xnnpack", "false"),
    NamedFlag("xladnn", "xla_cpu_use_onednn", "true"),
    NamedFlag("dnncall", "xla_cpu_experimental_onednn_custom_call", "true"),
    NamedFlag("noynn", "xla_cpu_experimental_ynn_fusion_type", "-individual_dot"),
    NamedFlag("ynndot", "xla_cpu_experimental_ynn_fusion_type", "dot", offered=True),
    NamedFlag("fastmath", "xla_cpu_enable_fast_math", "true"),
    NamedFlag("noeigenmt", "xla_cpu_multi_thread_eigen", "false"),
    NamedFlag("vec512", "xla_cpu_prefer_vector_width", "512"),
    # Memory, not speed: XLA:CPU orders a program's instructions to run independent ones at
    # once by default, which keeps more buffers alive together; off, it orders them to hold
    # the least memory. On the article's CNN at 150 px, batch 64, the JAX worker's peak fell
    # from 6.5-6.8 GB to 4.8 GB (BENCHMARKS.md, "Keras on JAX beside TensorFlow (issue 39):
    # cnn, 150 px" and its `--arms jax+memsched` section); TF+XLA takes the flag too.
    NamedFlag("memsched", "xla_cpu_enable_concurrency_optimized_scheduler", "false"),
)


def flag_of_part(part: str) -> str | None:
    """The flag (`--name=value`) an arm's name writes as `part`: a named flag's part or the
    flag itself (None: not a flag; `ConfigError`: a flag without a value or with characters
    the spelling does not take)."""
    for named in NAMED:
        if named.part == part:
            return f"--{named.flag}={named.value}"
    found = _FLAG.match(part)
    if found:
        return f"--{found[1]}={found[2]}"
    if _FLAG_NAME.match(part):
        raise ConfigError(f"XLA flag {part!r} needs a value: write it as {part.lstrip('-')}=VALUE")
    if part.lstrip("-").startswith(("xla_", TF_PREFIX)):
        raise ConfigError(
            f"XLA flag {part!r}: write a flag as name=value, the value in lower-case letters, "
            "digits and _ . - (for example xla_cpu_use_xnnpack=false)"
        )
    return None


def canonical(text: str) -> tuple[tuple[str, str], ...]:
    """(name, value) of every flag in `text` (flags separated by spaces, each `--name=value`
    or an arm part), sorted by name; `ConfigError` for one that is not a flag or names a flag
    twice."""
    flags: dict[str, str] = {}
    for piece in str(text).split():
        flag = flag_of_part(piece.lower())
        if flag is None:
            raise ConfigError(f"{piece!r} is not an XLA flag: flags are written name=value, "
                              "named xla_... or tf_xla_...")
        name, _, value = flag[2:].partition("=")
        if name in flags:
            raise ConfigError(f"XLA flag {name} is given twice")
        flags[name] = value
    if not flags:
        raise ConfigError("no XLA flag given")
    return tuple(sorted(flags.items()))


def text(flags: tuple[tuple[str, str], ...]) -> str:
    """The canonical text of `flags`: `--name=value`, space-joined."""
    return " ".join(f"--{name}={value}" for name, value in flags)


def part(name: str, value: str) -> str:
    """How an arm's name writes one flag: its named part, else itself without dashes."""
    named = next((n for n in NAMED if (n.flag, n.value) == (name, value)), None)
    return named.part if named else f"{name}={value}"


def variables(flags: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The environment `flags` set: `XLA_FLAGS` for XLA's, `TF_XLA_FLAGS` for TensorFlow's."""
    env: dict[str, list[str]] = {}
    for name, value in flags:
        key = TF_VARIABLE if name.startswith(TF_PREFIX) else XLA_VARIABLE
        env.setdefault(key, []).append(f"--{name}={value}")
    return tuple((key, " ".join(items)) for key, items in env.items())
