"""Machines in words: what the preflight found on a host (`xlagui hosts`, the window's Machine
group), the copy of the dataset, and the machines side by side (History)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xlagui.present.format import DASH, created, interval_words, seconds, size_bytes

if TYPE_CHECKING:  # the window imports this at start-up: the records only where used
    from xlagui.core.measure.remote.dataset import HostDataset
    from xlagui.core.measure.remote.preflight import HostInfo
    from xlagui.core.measure.remote.ssh import RemoteError
    from xlagui.core.results.history import HistoryItem


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


def side_by_side_rows(items: list[HistoryItem]) -> list[tuple[str, ...]]:
    """(machine, device, XLA's speed-up there with its interval, baseline step, XLA step,
    when) for each machine: every figure is that machine's own."""
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
