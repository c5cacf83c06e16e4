"""The preflight: one command on the host, before anything runs there, that says whether it can
take this app's workers and what it has (`HostInfo`).

The host runs `PYTHON -c PREFLIGHT_SCRIPT VERSION PROTOCOL`. The script needs nothing but a
Python, so each way of failing is told apart: no Python (exit status 127), no xlagui (its first
line says the import failed), another version (its first line has the host's version and
protocol, and nothing heavier runs), no TensorFlow. Only a host of this very version then
describes itself (`hostside.describe`: TensorFlow's devices, the CPU, the free disk).
"""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from xlagui import __version__
from xlagui.core.machine.device import Device, DeviceKind
from xlagui.core.measure.remote.ssh import (
    PythonMissing,
    RemoteCommandFailed,
    RemoteError,
    Ssh,
    SshTarget,
    TensorFlowMissing,
    VersionMismatch,
    XlaguiMissing,
    connection_error,
    last_lines,
    quote,
)
from xlagui.core.protocol.events import PROTOCOL_VERSION, ProtocolError
from xlagui.core.protocol.jsoncodec import decode
from xlagui.core.protocol.probes import DeviceInfo
from xlagui.core.protocol.task import TaskState

# Importing TensorFlow and listing GPUs takes seconds, a first CUDA initialisation longer.
PREFLIGHT_TIMEOUT_SECONDS = 180.0

PREFLIGHT_SCRIPT = r"""
import json, sys
want_version, want_protocol = sys.argv[1], int(sys.argv[2])
out = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import xlagui
except ImportError as exc:
    out["missing"] = str(exc)
    print(json.dumps(out))
    sys.exit(0)
out["xlagui"] = str(getattr(xlagui, "__version__", ""))
try:
    from xlagui.core.protocol.events import PROTOCOL_VERSION
    out["protocol"] = PROTOCOL_VERSION
except Exception:
    out["protocol"] = None
print(json.dumps(out), flush=True)
if out["xlagui"] == want_version and out["protocol"] == want_protocol:
    from xlagui.core.measure.remote.hostside import main
    main()
"""


@dataclass(frozen=True)
class HostInfo:
    """What the preflight found on the host; `environment()` is a comparison's environment
    block for it (`environment.host` is the name it was reached by)."""

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
    python_command: str = "python3"  # the host's Python, as given
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


def install_command(target: SshTarget) -> str:
    return f"{target.python} -m pip install 'xlagui=={__version__}'"


def preflight(
    ssh: Ssh, timeout: float = PREFLIGHT_TIMEOUT_SECONDS, state: TaskState | None = None
) -> HostInfo:
    """Ask the host what it has; raise the `RemoteError` that stops a comparison there
    (`Cancelled` when `state` asks to stop first)."""
    target = ssh.target
    t0 = time.perf_counter()
    command = (
        f"env TF_CPP_MIN_LOG_LEVEL=2 {target.python} -c {quote(PREFLIGHT_SCRIPT)} "
        f"{quote(__version__)} {PROTOCOL_VERSION}"
    )
    try:
        proc = ssh.run(command, timeout=timeout, state=state)
    except subprocess.TimeoutExpired:
        raise RemoteCommandFailed(
            f"the preflight on {target.host} did not answer within {timeout:.0f} s",
            hint="Importing TensorFlow on the host took too long, or the host is overloaded.",
        ) from None
    stderr = proc.stderr.decode("utf-8", errors="replace")
    lost = connection_error(target, proc.returncode, stderr)
    if lost is not None:
        raise lost
    if proc.returncode in (126, 127):
        raise PythonMissing(
            f"{target.host} has no Python called {target.python!r}: {last_lines(stderr)}",
            hint="Name the host's Python (--remote-python, or the Machine settings): the one "
            "with TensorFlow and xlagui, e.g. ~/venv/bin/python.",
            details=stderr,
        )
    lines = [ln for ln in proc.stdout.decode("utf-8", errors="replace").splitlines() if ln]
    first = _json_line(lines[0]) if lines else None
    if first is None:
        raise RemoteCommandFailed(
            f"the preflight on {target.host} failed (exit status {proc.returncode}): "
            f"{last_lines(stderr, 3) or 'it printed nothing'}",
            details=stderr,
        )
    if "missing" in first:
        raise XlaguiMissing(
            f"xlagui is not installed for {target.python} on {target.host} "
            f"({first['missing']})",
            hint=f"Install this app's version there: `{install_command(target)}`.",
            details=stderr,
        )
    theirs = (str(first.get("xlagui", "")), first.get("protocol"))
    if theirs != (__version__, PROTOCOL_VERSION):
        raise VersionMismatch(
            f"{target.host} has xlagui {theirs[0] or '?'} (protocol {theirs[1]}), this app is "
            f"{__version__} (protocol {PROTOCOL_VERSION}): both sides must be the same version",
            hint=f"Install the matching version on the host: `{install_command(target)}`.",
            details=stderr,
        )
    described = _json_line(lines[1]) if len(lines) > 1 else None
    if described is None:
        raise RemoteCommandFailed(
            f"the preflight on {target.host} stopped before describing the host (exit status "
            f"{proc.returncode}): {last_lines(stderr, 3)}",
            details=stderr,
        )
    if described.get("error"):
        raise TensorFlowMissing(
            f"{target.host}: {described['error']}",
            hint=f"Install TensorFlow for that Python: `{target.python} -m pip install "
            "tensorflow`.",
            details=stderr,
        )
    data = {
        **described,
        "host": target.host,
        "python_command": target.python,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    try:
        return decode(HostInfo, data, "the host's preflight")
    except ProtocolError as exc:
        raise RemoteCommandFailed(f"{target.host}: {exc}") from None


def _json_line(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def check_host(target: SshTarget, state: TaskState | None = None) -> HostInfo:
    """The preflight alone (`xlagui hosts`, the window's Machine group): connect, ask, close.
    With `state`, a request to stop ends it (`Cancelled`)."""
    with Ssh(target) as ssh:
        ssh.open()
        return preflight(ssh, state=state)


__all__ = [
    "PREFLIGHT_SCRIPT",
    "DeviceInfo",
    "HostInfo",
    "RemoteError",
    "check_host",
    "install_command",
    "preflight",
]
