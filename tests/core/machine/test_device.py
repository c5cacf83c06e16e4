"""The typed device: parsed once, said back as `--device` takes it, and what a process on it
may see."""

from __future__ import annotations

import pytest

from xlagui.core.machine.device import CPU, Device, DeviceKind


@pytest.mark.parametrize(
    ("text", "kind", "index", "back"),
    [
        ("cpu", DeviceKind.CPU, 0, "cpu"),
        (" CPU ", DeviceKind.CPU, 0, "cpu"),
        ("gpu", DeviceKind.GPU, 0, "gpu:0"),
        ("gpu:3", DeviceKind.GPU, 3, "gpu:3"),
        ("all", DeviceKind.ALL, 0, "all"),
    ],
)
def test_a_device_is_parsed_once_and_said_back(
    text: str, kind: DeviceKind, index: int, back: str
) -> None:
    device = Device.parse(text)
    assert (device.kind, device.index, str(device)) == (kind, index, back)
    assert Device.parse(str(device)) == device


@pytest.mark.parametrize("text", ["", "gpu:", "gpu:x", "tpu", "gpu:-1", "cpu:0"])
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a device"):
        Device.parse(text)


def test_what_a_process_on_the_device_sees() -> None:
    assert CPU.visible_gpus == "" and not CPU.is_gpu and CPU.kind_word == "CPU"
    one = Device.parse("gpu:2")
    assert one.visible_gpus == "2" and one.is_gpu and one.gpu_index == 2
    every = Device.parse("all")
    assert every.visible_gpus is None and every.is_gpu and every.gpu_index == 0
    assert every.kind_word == "GPU"
