"""Machines in words: what the preflight found on a host (`xlagui hosts`, the window's Machine
group), the copy of the dataset, why a machine cannot measure (a `MachineError`'s kind and
facts), and the machines side by side (History)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from xlagui.core.machine.device import Device, DeviceKind
from xlagui.core.measure.transports.base import MachineFailure as F
from xlagui.present.units import DASH, created, size_bytes

if TYPE_CHECKING:  # the window imports this at start-up: the records only where used
    from xlagui.core.machine.host import HostInfo
    from xlagui.core.measure.transports.base import MachineError, PlacedDataset
    from xlagui.core.protocol.events import Fact
    from xlagui.core.results.history import HistoryItem

Facts = Mapping[str, "Fact"]


def device_words(info: HostInfo) -> list[str]:
    """One entry per device: "gpu:0 NVIDIA H200, 139.8 GiB"."""
    out = []
    for d in info.devices:
        words = f"{d.id} {d.name}"
        if d.memory_bytes:
            words += f", {size_bytes(d.memory_bytes)}"
        out.append(words)
    return out


def host_rows(info: HostInfo) -> list[tuple[str, str]]:
    """(what, value) rows of a host's preflight."""
    name = info.host if info.hostname in ("", info.host) else f"{info.host} ({info.hostname})"
    return [
        ("Host", name),
        ("xlagui", f"{info.xlagui}, protocol {info.protocol}"),
        ("Python", f"{info.python} ({info.python_command})"),
        ("TensorFlow", info.tensorflow),
        ("CPU", f"{info.cpu}, {info.cpu_count} cores" if info.cpu_count else info.cpu),
        ("Devices", "; ".join(device_words(info)) or "none"),
        ("Free disk", f"{size_bytes(info.free_disk_bytes)} in {info.cache}"),
        ("Preflight", f"{info.seconds:.1f} s"),
    ]


def host_line(info: HostInfo) -> str:
    """The line a comparison on a host starts with."""
    gpus = [w for d, w in zip(info.devices, device_words(info), strict=True) if _one_gpu(d.id)]
    return (
        f"Measuring on {info.host} over SSH: {info.cpu or 'CPU'} ({info.cpu_count} cores)"
        + (f", {'; '.join(gpus)}" if gpus else ", no GPU")
        + f", TensorFlow {info.tensorflow}"
    )


def _one_gpu(device_id: str) -> bool:
    try:
        return Device.parse(device_id).kind is DeviceKind.GPU
    except ValueError:
        return False


def dataset_line(dataset: PlacedDataset, host: str) -> str:
    if dataset.cached:
        return f"The dataset is already on {host} ({dataset.root}): nothing copied"
    if dataset.copied_bytes == 0:
        return f"Using the dataset folder {dataset.root} on {host} ({dataset.files} files)"
    return (
        f"Copied the dataset to {host}: {dataset.files} files, "
        f"{size_bytes(dataset.copied_bytes)} in {dataset.seconds:.1f} s"
    )


def install_command(python: object, version: object) -> str:
    """What installs this app's version for the host's Python."""
    return f"{python} -m pip install 'xlagui=={version}'"


# A failed step on the host (`MachineError.facts["step"]`), in words.
STEPS: dict[str, Callable[[Facts], str]] = {
    "model_copy": lambda f: f"copying the model file {f.get('file')}",
    "remote_data_check": lambda _: "checking the dataset folder",
    "run_folder": lambda _: "making the comparison's folder",
}


def _said(f: Facts) -> str:
    return str(f.get("said") or "")


def _remote_data_differs(f: Facts) -> str:
    return (
        f"{f.get('count')} of the dataset's {f.get('files')} files are missing from "
        f"{f.get('root')} on {f.get('host')}, or differ in size (e.g. {f.get('examples')})"
    )


def _command_failed(f: Facts) -> str:
    step = STEPS.get(str(f.get("step") or ""))
    return (
        f"{step(f) if step else 'a command'} failed on {f.get('host')} (exit status "
        f"{f.get('status')}): {_said(f)}"
    )


def _version_mismatch(f: Facts) -> str:
    return (
        f"{f.get('host')} has xlagui {f.get('theirs') or '?'} (protocol "
        f"{f.get('their_protocol')}), this app is {f.get('version')} (protocol "
        f"{f.get('protocol')}): both sides must be the same version"
    )


# How to get a transport's client program (`MachineFailure.NO_CLIENT`), by its name.
INSTALL_CLIENT: dict[str, str] = {
    "ssh": "Install the OpenSSH client (Debian/Ubuntu: apt install openssh-client; Windows: "
    "the optional feature 'OpenSSH Client').",
}

# What went wrong, in one line: a kind's words from its facts.
MESSAGES: dict[F, Callable[[Facts], str]] = {
    F.NO_CLIENT: lambda f: f"no {f.get('client')} command on this computer",
    F.AUTH_FAILED: lambda f: f"{f.get('host')} refused the login: {_said(f)}",
    F.HOST_NOT_FOUND: lambda f: f"no host called {f.get('host')}: {_said(f)}",
    F.UNREACHABLE: lambda f: f"{f.get('host')} cannot be reached: {_said(f)}",
    F.CLIENT_FAILED: lambda f: f"{f.get('client')} could not run a command on {f.get('host')}"
    + (f": {_said(f)}" if _said(f) else ""),
    F.NO_ANSWER: lambda f: f"{f.get('host')} did not answer within "
    f"{float(f.get('seconds') or 0):.0f} s",
    F.NO_CONNECTION: lambda f: f"ssh could not connect to {f.get('host')}: {_said(f)}",
    F.COMMAND_FAILED: _command_failed,
    F.PREFLIGHT_TIMEOUT: lambda f: f"the preflight on {f.get('host')} did not answer within "
    f"{float(f.get('seconds') or 0):.0f} s",
    F.PYTHON_MISSING: lambda f: f"{f.get('host')} has no Python called {f.get('python')!r}: "
    f"{_said(f)}",
    F.PREFLIGHT_FAILED: lambda f: f"the preflight on {f.get('host')} failed (exit status "
    f"{f.get('status')}): {_said(f) or 'it printed nothing'}",
    F.XLAGUI_MISSING: lambda f: f"xlagui is not installed for {f.get('python')} on "
    f"{f.get('host')} ({f.get('missing')})",
    F.VERSION_MISMATCH: _version_mismatch,
    F.PREFLIGHT_STOPPED: lambda f: f"the preflight on {f.get('host')} stopped before "
    f"describing the host (exit status {f.get('status')}): {_said(f)}",
    F.TENSORFLOW_MISSING: lambda f: f"{f.get('host')}: TensorFlow cannot be imported: {_said(f)}",
    F.PREFLIGHT_GARBLED: lambda f: f"{f.get('host')}: {_said(f)}",
    F.COPY_FAILED: lambda f: f"copying the dataset to {f.get('host')} failed: {_said(f)}",
    F.REMOTE_DATA_UNCHECKED: lambda f: f"checking {f.get('root')} on {f.get('host')} gave no "
    "answer",
    F.REMOTE_DATA_MISSING: lambda f: f"there is no folder {f.get('root')} on {f.get('host')}",
    F.REMOTE_DATA_DIFFERS: _remote_data_differs,
}

# What to do about it ("" where the message says all there is).
HINTS: dict[F, Callable[[Facts], str]] = {
    F.NO_CLIENT: lambda f: INSTALL_CLIENT.get(str(f.get("client")), ""),
    F.AUTH_FAILED: lambda f: "xlagui logs in with keys only (BatchMode). Check that `ssh "
    f"{f.get('host')}` logs in without a password prompt (ssh-copy-id, ssh-add, IdentityFile "
    "in ~/.ssh/config); a changed host key must be accepted in a terminal first.",
    F.HOST_NOT_FOUND: lambda _: "Check the name, or the Host alias in your ssh configuration.",
    F.UNREACHABLE: lambda _: "Check that the host is up, the network or VPN is there, and the "
    "port is the one ssh uses.",
    F.CLIENT_FAILED: lambda f: f"Try `{f.get('client')} {f.get('host')} true` in a terminal.",
    F.NO_ANSWER: lambda _: "Check that the host is up and the network or VPN is there.",
    F.PREFLIGHT_TIMEOUT: lambda _: "Importing TensorFlow on the host took too long, or the "
    "host is overloaded.",
    F.PYTHON_MISSING: lambda _: "Name the host's Python (--remote-python, or the Machine "
    "settings): the one with TensorFlow and xlagui, e.g. ~/venv/bin/python.",
    F.XLAGUI_MISSING: lambda f: "Install this app's version there: "
    f"`{install_command(f.get('python'), f.get('version'))}`.",
    F.VERSION_MISMATCH: lambda f: "Install the matching version on the host: "
    f"`{install_command(f.get('python'), f.get('version'))}`.",
    F.TENSORFLOW_MISSING: lambda f: f"Install TensorFlow for that Python: `{f.get('python')} "
    "-m pip install tensorflow`.",
    F.COPY_FAILED: lambda _: "The host needs tar and room in its cache for the dataset.",
    F.REMOTE_DATA_MISSING: lambda _: "Give the dataset's folder as the host sees it, or leave "
    "it out to copy the dataset there.",
    F.REMOTE_DATA_DIFFERS: lambda _: "The folder on the host must hold the same files as the "
    "one scanned here, under the same relative paths.",
}


def error_message(exc: MachineError) -> str:
    """What went wrong on the machine, in one line."""
    words = MESSAGES.get(exc.kind)
    return words(exc.facts) if words is not None else str(exc)


def error_hint(exc: MachineError) -> str:
    """What to do about it ("" when the message says all there is)."""
    words = HINTS.get(exc.kind)
    return words(exc.facts) if words is not None else ""


def error_text(exc: MachineError) -> str:
    """The error and what to do, for a person."""
    message = error_message(exc).rstrip(".")
    hint = error_hint(exc)
    return f"{message}. {hint}" if hint else message


def side_by_side_rows(items: list[HistoryItem]) -> list[tuple[str, ...]]:
    """(machine, device, XLA's speed-up there with its interval, baseline step, XLA step,
    when) for each machine: every figure is that machine's own."""
    # The Machine group words hosts from the first screen; these figures only with a history.
    from xlagui.present.format import interval_words, seconds

    rows: list[tuple[str, ...]] = []
    for item in items:
        speed = (
            DASH if item.speedup is None
            else interval_words(item.speedup, item.speedup_low, item.speedup_high)
        )
        rows.append((
            item.machine,
            item.device or DASH,
            speed,
            seconds(item.baseline_step_seconds),
            seconds(item.xla_step_seconds),
            created(item.created),
        ))
    return rows


SIDE_BY_SIDE_COLUMNS = ("Machine", "Device", "XLA there", "Baseline step", "XLA step", "When")
