"""Where the app's children run: the registry of transports.

A transport (`base.Transport`) starts every child of a comparison on its machine: the
training and measuring workers, the model check, the device and peak probes, the TensorBoard
text (`core/measure/jobs.py`). `local` runs them on this computer; `ssh` on a host over the
system's OpenSSH client. The layers above name only what is here: a `Target` (what the user
typed), `connect` (a transport for it, logged in and preflighted), `check` (the preflight
alone), `suggested_hosts` (a picker's list), a `HostInfo` and a `MachineError`
(`xlagui.present.hosts` words it).

A new transport is one module with `connect(target, *, info, state)` and `check(target, state)`
(and, if it offers hosts to pick, `hosts(options)`, each named as a user types it:
`NAME://…`; if a user gives it settings of its own, `OPTIONS`, each a `TransportOption`, which
become flags of the command line and reach it in `Target.options`), and one line in
`TRANSPORTS` below. A host typed as `NAME://…` (`--host`, the
window's Machine group) is reached through the transport NAME (`Target.transport`). Its module
is imported only when a target asks for it, so the command line starts without it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from xlagui.core.machine.host import DEFAULT_PYTHON as DEFAULT_PYTHON
from xlagui.core.machine.host import HostInfo as HostInfo
from xlagui.core.measure.transports.base import MachineError as MachineError
from xlagui.core.measure.transports.base import MachineFailure as MachineFailure
from xlagui.core.measure.transports.base import PlacedDataset as PlacedDataset
from xlagui.core.measure.transports.base import Target as Target
from xlagui.core.measure.transports.base import Transport as Transport
from xlagui.core.measure.transports.base import TransportOption as TransportOption
from xlagui.core.measure.transports.base import TransportOptions as TransportOptions
from xlagui.core.protocol.config import ConfigError
from xlagui.core.protocol.task import TaskState

if TYPE_CHECKING:
    from xlagui.core.measure.transports.local import LOCAL as LOCAL

# The registry: a transport's name (`Target.transport`) → its module.
TRANSPORTS: dict[str, str] = {
    "local": "xlagui.core.measure.transports.local",
    "ssh": "xlagui.core.measure.transports.ssh.transport",
}


def module_of(target: Target) -> ModuleType:
    """The module of the transport that reaches `target`; `ConfigError` (a `ValueError`) for a
    name no transport is registered under (a typing mistake in `--host`, or the host field)."""
    try:
        name = TRANSPORTS[target.transport]
    except KeyError:
        raise ConfigError(
            f"no transport called {target.transport!r}; one of {', '.join(TRANSPORTS)}"
        ) from None
    return importlib.import_module(name)


def connect(target: Target | None, *, info: HostInfo | None = None,
            state: TaskState | None = None) -> Transport:
    """The transport of `target` (None: this computer), ready to start children: logged in and
    preflighted (not again when `info` is what its preflight answered moments ago). Raises the
    `MachineError` that says why not. `close` it when the comparison is over."""
    if target is None:
        from xlagui.core.measure.transports.local import LOCAL

        return LOCAL
    transport: Transport = module_of(target).connect(target, info=info, state=state)
    return transport


def check(target: Target, state: TaskState | None = None) -> HostInfo:
    """What the machine of `target` has (its preflight alone: `xlagui hosts`, the window's
    Machine group); raises the `MachineError` that says why it cannot measure, `Cancelled`
    when `state` asks to stop first."""
    info: HostInfo = module_of(target).check(target, state)
    return info


def suggested_hosts(options: Mapping[str, str] | None = None) -> list[str]:
    """The hosts every transport offers to pick (the ssh configuration's aliases), given the
    transports' own settings (`options`: `Target.options` as a mapping)."""
    found: list[str] = []
    for name in TRANSPORTS:
        hosts = getattr(importlib.import_module(TRANSPORTS[name]), "hosts", None)
        if hosts is not None:
            found += [h for h in hosts(dict(options or {})) if h not in found]
    return found


def options() -> tuple[TransportOption, ...]:
    """Every registered transport's own settings (`OPTIONS`), in the registry's order: the
    command line offers each as a flag."""
    found: list[TransportOption] = []
    for name in TRANSPORTS:
        found += getattr(importlib.import_module(TRANSPORTS[name]), "OPTIONS", ())
    return tuple(found)


def __getattr__(name: str) -> object:
    """`LOCAL`, imported when first asked for: this computer's transport brings the workers'
    jobs (the model check, the probes) that a window or a command does not need to start."""
    if name == "LOCAL":
        from xlagui.core.measure.transports.local import LOCAL

        return LOCAL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
