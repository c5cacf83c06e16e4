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
from typing import Any

from xlagui import __version__
from xlagui.core.machine.host import HostInfo
from xlagui.core.measure.transports.base import MachineError, MachineFailure, Target
from xlagui.core.measure.transports.ssh.client import Ssh, connection_error, last_lines, quote
from xlagui.core.measure.transports.ssh.hostside import NO_TENSORFLOW
from xlagui.core.protocol.events import PROTOCOL_VERSION, ProtocolError
from xlagui.core.protocol.jsoncodec import decode
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
    from xlagui.core.measure.transports.ssh.hostside import main
    main()
"""


def preflight(
    ssh: Ssh, timeout: float = PREFLIGHT_TIMEOUT_SECONDS, state: TaskState | None = None
) -> HostInfo:
    """Ask the host what it has; raise the `MachineError` that stops a comparison there
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
        raise MachineError(MachineFailure.PREFLIGHT_TIMEOUT, host=target.host,
                           seconds=timeout) from None
    stderr = proc.stderr.decode("utf-8", errors="replace")
    lines = [ln for ln in proc.stdout.decode("utf-8", errors="replace").splitlines() if ln]
    described = _answers(target, proc.returncode, stderr, lines)
    data = {
        **described,
        "host": target.host,
        "python_command": target.python,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    try:
        return decode(HostInfo, data, "the host's preflight")
    except ProtocolError as exc:
        raise MachineError(MachineFailure.PREFLIGHT_GARBLED, host=target.host,
                           said=str(exc)) from None


def _answers(target: Target, returncode: int, stderr: str, lines: list[str]
             ) -> dict[str, Any]:
    """What the host has (the preflight's second line, once its first said who answers), or
    the `MachineError` that says why the host cannot take the workers."""
    lost = connection_error(target, returncode, stderr)
    if lost is not None:
        raise lost
    host, python = target.host, target.python
    if returncode in (126, 127):
        raise MachineError(MachineFailure.PYTHON_MISSING, stderr, host=host, python=python,
                           said=last_lines(stderr))
    first = _json_line(lines[0]) if lines else None
    if first is None:
        raise MachineError(MachineFailure.PREFLIGHT_FAILED, stderr, host=host, status=returncode,
                           said=last_lines(stderr, 3))
    if "missing" in first:
        raise MachineError(MachineFailure.XLAGUI_MISSING, stderr, host=host, python=python,
                           missing=str(first["missing"]), version=__version__)
    theirs = (str(first.get("xlagui", "")), first.get("protocol"))
    if theirs != (__version__, PROTOCOL_VERSION):
        their_protocol = theirs[1] if isinstance(theirs[1], (int, str)) else None
        raise MachineError(MachineFailure.VERSION_MISMATCH, stderr, host=host, python=python,
                           theirs=theirs[0], their_protocol=their_protocol,
                           version=__version__, protocol=PROTOCOL_VERSION)
    described = _json_line(lines[1]) if len(lines) > 1 else None
    if described is None:
        raise MachineError(MachineFailure.PREFLIGHT_STOPPED, stderr, host=host,
                           status=returncode, said=last_lines(stderr, 3))
    if NO_TENSORFLOW in described:
        raise MachineError(MachineFailure.TENSORFLOW_MISSING, stderr, host=host, python=python,
                           said=str(described[NO_TENSORFLOW]))
    return described


def _json_line(line: str) -> dict[str, Any] | None:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def check_host(target: Target, state: TaskState | None = None) -> HostInfo:
    """The preflight alone (`xlagui hosts`, the window's Machine group): connect, ask, close.
    With `state`, a request to stop ends it (`Cancelled`)."""
    with Ssh(target) as ssh:
        ssh.open()
        return preflight(ssh, state=state)
