"""A machine that runs comparisons, described: `HostInfo`, what a host's preflight found (or what
this computer has), whatever the transport that reached it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlagui.core.machine.device import Device, DeviceKind
from xlagui.core.protocol.probes import DeviceInfo

DEFAULT_PYTHON = "python3"


@dataclass(frozen=True)
class HostInfo:
    """What the preflight found on a host; `environment()` is a comparison's environment block
    for it (`environment.host` is the name it was reached by)."""

    host: str  # as the user named it: the alias or user@host
    hostname: str  # the host's own name for itself
    xlagui: str
    protocol: int
    python: str
    platform: str
    cpu: str
    cpu_count: int
    cache: str  # where the host keeps datasets and run folders for other machines
    free_disk_bytes: int
    tensorflow: str
    devices: tuple[DeviceInfo, ...] = ()
    python_command: str = DEFAULT_PYTHON  # the host's Python, as given
    seconds: float = 0.0  # how long the preflight took

    def has_device(self, device: str) -> bool:
        """Whether `device` (as `--device` takes it: cpu, gpu:N, all) is there."""
        try:
            wanted = Device.parse(device)
        except ValueError:
            return False
        if wanted.kind is DeviceKind.ALL:
            return any(d.kind == "GPU" for d in self.devices)
        return not wanted.is_gpu or str(wanted) in {d.id for d in self.devices}

    @property
    def machine_id(self) -> str:
        """The host in the words `core/machine/peak.py` keys its cache by: name, CPU, CPUs."""
        return machine_id(self.hostname, self.cpu, self.cpu_count)

    def environment(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "hostname": self.hostname,
            "platform": self.platform,
            "python": self.python,
            "cpu": self.cpu,
            "cpu_count": self.cpu_count,
            "xlagui": self.xlagui,
            "tensorflow": self.tensorflow,
            "remote_python": self.python_command,
        }


def machine_id(hostname: str, cpu: str, cpu_count: int | None) -> str:
    """A machine in words: host, CPU model, logical CPUs."""
    return f"{hostname} · {cpu} · {cpu_count} CPUs"
