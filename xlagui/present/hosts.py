"""Machines in words: what the preflight found on a host (`xlagui hosts`, the window's Machine
group), the copy of the dataset, and which machine a comparison was measured on (History)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xlagui.core.remote.dataset import HostDataset
from xlagui.core.remote.preflight import HostInfo
from xlagui.core.remote.ssh import RemoteError
from xlagui.present.format import size_bytes

THIS_COMPUTER = "this computer"


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
    gpus = [w for w in device_words(info) if w.startswith("gpu:")]
    return (
        f"Measuring on {info.host} over SSH: {info.cpu or 'CPU'} ({info.cpu_count} cores)"
        + (f", {'; '.join(gpus)}" if gpus else ", no GPU")
        + f", TensorFlow {info.tensorflow}"
    )


def dataset_line(dataset: HostDataset, host: str) -> str:
    if dataset.cached:
        return f"The dataset is already on {host} ({dataset.root}): nothing copied"
    if dataset.copied_bytes == 0:
        return f"Using the dataset folder {dataset.root} on {host} ({dataset.files} files)"
    return (
        f"Copied the dataset to {host}: {dataset.files} files, "
        f"{size_bytes(dataset.copied_bytes)} in {dataset.seconds:.1f} s"
    )


def error_text(exc: RemoteError) -> str:
    """The error and what to do, for a person."""
    message = exc.message.rstrip(".")
    return f"{message}. {exc.hint}" if exc.hint else message


def machine_of(environment: Mapping[str, Any]) -> str:
    """Which machine a saved comparison was measured on: the SSH host it was reached by, else
    the computer's own name (comparisons saved before SSH hosts have only that)."""
    host = environment.get("host")
    if host:
        return str(host)
    return str(environment.get("hostname") or "unknown machine")
