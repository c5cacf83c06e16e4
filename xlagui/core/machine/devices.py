"""The devices TensorFlow sees on this machine (`probe_devices`), asked in a child process (the
app never imports TensorFlow): the device probe `python -m xlagui.core.worker.child --probe`
and a host's preflight both call it.
"""

from __future__ import annotations

import platform
import shutil
import subprocess

from xlagui.core.machine.device import Device, DeviceKind
from xlagui.core.protocol.probes import DeviceInfo


def probe_devices() -> list[DeviceInfo]:
    """The devices TensorFlow can see here: the CPU, each GPU, and `all` for more than one."""
    import tensorflow as tf  # lazy: only in a child process, see the module's docstring

    out = [DeviceInfo(id="cpu", name=platform.processor() or "CPU", kind="CPU")]
    gpus = tf.config.list_physical_devices("GPU")
    for i, gpu in enumerate(gpus):
        details = tf.config.experimental.get_device_details(gpu)
        name = str(details.get("device_name", gpu.name))
        out.append(DeviceInfo(id=str(Device(DeviceKind.GPU, i)), name=name, kind="GPU"))
    if len(gpus) > 1:
        out.append(DeviceInfo(id=str(Device(DeviceKind.ALL)),
                              name=f"all {len(gpus)} GPUs (MirroredStrategy)", kind="GPU"))
    return out


def gpu_memory() -> dict[int, int]:
    """Total memory of each GPU by index, from `nvidia-smi` ({} where there is none). Runs in
    the child that describes a machine, never in the app's process."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {}
    try:
        out = subprocess.run(
            [smi, "--query-gpu=index,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    memory = {}
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            memory[int(parts[0])] = int(parts[1]) * 1024 * 1024  # MiB
    return memory


def with_memory(devices: list[DeviceInfo], memory: dict[int, int], cpu: str) -> list[DeviceInfo]:
    """`devices` with each GPU's total memory and the CPU named `cpu` (a host's preflight)."""
    found = []
    for d in devices:
        try:
            device = Device.parse(d.id)
        except ValueError:
            found.append(d)
            continue
        if device.kind is DeviceKind.GPU:
            d = DeviceInfo(d.id, d.name, d.kind, memory.get(device.index))
        elif device.kind is DeviceKind.CPU:
            d = DeviceInfo(d.id, cpu or d.name, d.kind, d.memory_bytes)
        found.append(d)
    return found
