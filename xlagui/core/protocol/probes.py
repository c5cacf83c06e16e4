"""What the short children answer besides runs, as typed records their events carry: a device
TensorFlow sees (`DeviceInfo`, in `DevicesEvent` and a host's preflight) and the model's largest
layers timed alone (`LayerCeiling`, in `LimitsEvent` and the machine-limits cache).

Here, below `core/machine/`, because the protocol carries them; `core/machine/` builds on them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeviceInfo:
    """A device TensorFlow sees (`id` as `--device` takes it: cpu, gpu:0, all)."""

    id: str
    name: str
    kind: str  # "CPU" or "GPU"
    memory_bytes: int | None = None  # a GPU's total memory, where nvidia-smi says

    def choice(self) -> dict[str, str]:
        """The device as the settings' device list takes it."""
        return {"id": self.id, "name": self.name, "kind": self.kind}


@dataclass(frozen=True)
class LayerCeiling:
    """The model's largest layers alone, at one image size and batch."""

    layers: list[str]
    image_size: int
    batch_size: int
    flops: float  # per step, the layers together
    seconds: float  # best step time, the layers together
    flops_per_second: float
