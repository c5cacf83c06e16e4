"""A real, small, local Ray head for tests: `ray start --head --block` in a temporary folder of its
own, on free ports, stopped after (even when the test failed) by ending exactly the processes it
started (its own process group), never by `ray stop`, which would end every Ray on the machine.

The head is started without this checkout on its PYTHONPATH, as an unchanged cluster would be:
xlagui reaches its workers only through the sweep's `runtime_env` (`py_modules`).
It fails, never skips, when Ray cannot start: a test that needs a head must not pass without one.

Every Ray process here carries the test run's own Ray state, never the machine's:
- it listens and advertises on `LOOPBACK` (127.0.0.2), not the machine's network address. Ray
  rewrites 127.0.0.1 and localhost to that address, which a test must not use (and which some
  machines refuse); the driver joins at the same address (`executor._loopback_node`);
- its token authentication uses `TOKEN`, this test process's own (`RAY_AUTH_TOKEN` outranks
  `~/.ray/auth_token`, which an earlier Ray on the machine may have left with another token).
  The driver is the test process itself, and Ray reads its authentication settings once, at its
  first use in a process: tests/conftest.py puts `driver_env()` into the environment at import,
  before any test can import Ray.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LOOPBACK = "127.0.0.2"
TOKEN = secrets.token_hex(16)
START_SECONDS = 120.0
_BLOCKS = itertools.count()
_STOP_SECONDS = 30.0


@dataclass(frozen=True)
class RayHead:
    """A running head: its address (`HOST:PORT`, for `ray.init`) and its temporary folder."""

    address: str
    temp_dir: Path
    log: Path


def ray_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a head or node this fixture starts: this process's, less what points
    Ray elsewhere, with the test run's own token."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "RAY_ADDRESS") and not k.startswith("RAY_AUTH_")}
    env.update(extra or {}, RAY_USAGE_STATS_ENABLED="0", **driver_env())
    return env


def driver_env() -> dict[str, str]:
    """What this process (the driver) and every Ray process of the test run need in their
    environment to authenticate to each other."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}


def free_ports(count: int) -> list[int]:
    """`count` different free ports: every socket is held open until all are chosen (one port
    at a time, the system once handed the same number to two of a head's components)."""
    with contextlib.ExitStack() as held:
        ports = []
        for _ in range(count):
            s = held.enter_context(socket.socket())
            s.bind(("127.0.0.1", 0))
            ports.append(int(s.getsockname()[1]))
        return ports


@contextlib.contextmanager
def ray_head(num_cpus: int = 2, object_store_bytes: int = 100 * 1024 * 1024) -> Iterator[RayHead]:
    """Start a head, yield it, stop it."""
    # Short: Ray's Unix sockets live under the temporary folder (a socket path has ~107 bytes).
    temp_dir = Path(tempfile.mkdtemp(prefix="xr", dir="/tmp"))
    log = temp_dir / "head.log"
    port, client, agent, metrics, runtime_env, node_manager, object_manager = free_ports(7)
    command = [
        sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--block",
        f"--temp-dir={temp_dir}", f"--port={port}", f"--num-cpus={num_cpus}", "--num-gpus=0",
        f"--object-store-memory={object_store_bytes}", "--include-dashboard=false",
        "--disable-usage-stats", f"--node-ip-address={LOOPBACK}",
        f"--ray-client-server-port={client}", f"--dashboard-agent-listen-port={agent}",
        f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}",
        f"--node-manager-port={node_manager}", f"--object-manager-port={object_manager}",
        *_worker_ports(),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=ray_env(),
                                   start_new_session=True, cwd=temp_dir)
    try:
        _wait_started(process, temp_dir, log)
        yield RayHead(address=f"{LOOPBACK}:{port}", temp_dir=temp_dir, log=log)
    finally:
        _stop(process)
        shutil.rmtree(temp_dir, ignore_errors=True)


@dataclass
class RayNode:
    """A worker node joined to a head: `kill` ends it at once, as a machine that dies does."""

    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(10)


@contextlib.contextmanager
def ray_node(head: RayHead, num_cpus: int, env: dict[str, str] | None = None
             ) -> Iterator[RayNode]:
    """A second node on this machine, joined to `head` (its own temporary folder and process
    group), with `env` added to its processes' environment; stopped after, as the head is."""
    temp_dir = Path(tempfile.mkdtemp(prefix="xn", dir="/tmp"))
    log = temp_dir / "node.log"
    agent, metrics, runtime_env, node_manager, object_manager = free_ports(5)
    command = [
        sys.executable, "-m", "ray.scripts.scripts", "start", f"--address={head.address}",
        "--block", f"--temp-dir={temp_dir}", f"--num-cpus={num_cpus}", "--num-gpus=0",
        "--object-store-memory=80000000", "--disable-usage-stats",
        f"--node-ip-address={LOOPBACK}", f"--dashboard-agent-listen-port={agent}",
        f"--metrics-export-port={metrics}", f"--runtime-env-agent-port={runtime_env}",
        f"--node-manager-port={node_manager}", f"--object-manager-port={object_manager}",
        *_worker_ports(),
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                   env=ray_env(env),
                                   start_new_session=True, cwd=temp_dir)
    node = RayNode(process=process, log=log)
    try:
        _wait_joined(process, log)
        yield node
    finally:
        _stop(process)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _wait_joined(process: subprocess.Popen[bytes], log: Path) -> None:
    """`ray start` prints that the node started once it has joined the cluster."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if "Ray runtime started" in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"the Ray node did not join:\n{log.read_text(errors='replace')[-4000:]}")


def _worker_ports() -> list[str]:
    """A block of worker ports of its own for each node this process starts (Ray's default
    range is shared by every Ray on the machine), below the system's ephemeral ports, where
    `free_ports` finds the nodes' other ports: Ray refuses a node whose worker range holds one
    of them ("worker_ports is trying to use a port number 35727 that is used by other
    components", seen once in CI when the blocks reached into the ephemeral range)."""
    low = 10000
    slots = max(1, (_ephemeral_low() - low) // 400)
    first = low + (os.getpid() % slots) * 400 + next(_BLOCKS) % 8 * 50
    return [f"--min-worker-port={first}", f"--max-worker-port={first + 49}"]


def _ephemeral_low() -> int:
    """The first port of the system's ephemeral range (Linux: 32768 unless changed)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _wait_started(process: subprocess.Popen[bytes], temp_dir: Path, log: Path) -> None:
    """`ray start` writes the cluster's address into its temporary folder once the head is up."""
    deadline = time.monotonic() + START_SECONDS
    marker = temp_dir / "ray_current_cluster"
    while time.monotonic() < deadline:
        if marker.exists():
            return
        if process.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"the Ray head did not start:\n{log.read_text(errors='replace')[-4000:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to `ray start --block` stops the processes it started; then whatever is left
    of its process group (which holds only what this fixture started) is killed."""
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(5)
