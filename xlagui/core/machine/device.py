"""The device a run trains on, typed: `Device.parse("gpu:1")` instead of splitting the string by
hand wherever it is used.

A run's configuration keeps the device as text (`RunConfig.device`: `cpu`, `gpu:N` or `all`,
what `--device` takes and saved comparisons hold); the places that act on it (the child's
environment, its set-up, its memory figures, the peak probe, a host's device list) parse it
here once.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlagui.core.protocol.identity import StrEnum


class DeviceKind(StrEnum):
    """What a device is: the CPU, one GPU, or every GPU at once (MirroredStrategy)."""

    CPU = "cpu"
    GPU = "gpu"
    ALL = "all"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Device:
    """`cpu`, `gpu:N` or `all` (every GPU through MirroredStrategy); `str()` gives it back."""

    kind: DeviceKind = DeviceKind.CPU
    index: int = 0  # the GPU's index (`gpu:N`); 0 otherwise

    @classmethod
    def parse(cls, text: str) -> Device:
        """`cpu`, `gpu` (= gpu:0), `gpu:N` or `all`; ValueError for anything else."""
        v = str(text).strip().lower()
        if v == "cpu":
            return CPU
        if v == "all":
            return cls(DeviceKind.ALL)
        if v == "gpu":
            return cls(DeviceKind.GPU, 0)
        head, _, number = v.partition(":")
        if head == "gpu" and number.isdigit():
            return cls(DeviceKind.GPU, int(number))
        raise ValueError(f"not a device: {text!r} (cpu, gpu, gpu:N or all)")

    def __str__(self) -> str:
        if self.kind is DeviceKind.GPU:
            return f"gpu:{self.index}"
        return str(self.kind)

    @property
    def is_gpu(self) -> bool:
        """One GPU or all of them."""
        return self.kind is not DeviceKind.CPU

    @property
    def kind_word(self) -> str:
        """"CPU" or "GPU", as `StartedEvent.device_kind` and the device lists say it."""
        return "GPU" if self.is_gpu else "CPU"

    @property
    def gpu_index(self) -> int:
        """The GPU whose name and memory stand for the device (the first for `all`)."""
        return self.index if self.kind is DeviceKind.GPU else 0

    @property
    def visible_gpus(self) -> str | None:
        """CUDA_VISIBLE_DEVICES for a process on this device: "" hides every GPU (the CPU), "N"
        shows GPU N alone; None leaves every GPU visible (`all`)."""
        if self.kind is DeviceKind.CPU:
            return ""
        if self.kind is DeviceKind.GPU:
            return str(self.index)
        return None


CPU = Device()
