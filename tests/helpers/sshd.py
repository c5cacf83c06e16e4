"""A real OpenSSH server on localhost for the SSH tests: its own `sshd` on a free port, a
generated host key and user key, and an ssh configuration file with aliases for each case.

`start_sshd(folder)` raises `SshdError` with the reason when the server cannot start; the
`sshd` fixture (tests/conftest.py) turns that into a failed test, never a skipped one: a CI
without OpenSSH must say so (`.ci/run` installs it).

The "host" is this machine. Its Python (`SshServer.python`) is a small script that runs this
interpreter on this checkout's code with a cache of its own (`host_cache`), so the host's side
is the code under test and its datasets and run folders are kept apart from the local ones.
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parents[2]
ALIAS = "xlagui-test"
WRONG_KEY_ALIAS = "xlagui-wrong-key"  # a key the server does not know
CLOSED_PORT_ALIAS = "xlagui-closed"  # nothing listens on its port
NO_SUCH_HOST_ALIAS = "xlagui-nowhere"  # a name that does not resolve


class SshdError(RuntimeError):
    pass


@dataclass
class SshServer:
    folder: Path
    port: int
    config: Path  # the ssh configuration file (ssh -F) with the aliases
    python: Path  # the host's Python: this interpreter on this checkout's code
    host_cache: Path  # the host's cache (XLAGUI_CACHE_DIR of everything run there)
    process: subprocess.Popen[bytes]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    @property
    def options(self) -> tuple[tuple[str, str], ...]:
        """The ssh transport's own settings that reach this server (`Target.options`): its
        configuration file, through the transport's declared option."""
        from xlagui.core.measure.transports.ssh.client import CONFIG

        return ((CONFIG.name, str(self.config)),)

    def log(self) -> str:
        path = self.folder / "sshd.log"
        return path.read_text(errors="replace") if path.exists() else ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _keygen(path: Path) -> None:
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        raise SshdError("ssh-keygen is not installed (openssh-client)")
    subprocess.run(
        [keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True, capture_output=True, timeout=60,
    )


def host_python(folder: Path, cache: Path, extra_path: str = "") -> Path:
    """A script that is the host's Python: this interpreter, this checkout first on its path
    (`extra_path` before it), and the host's own cache."""
    script = folder / "host-python"
    pythonpath = os.pathsep.join(p for p in (extra_path, str(REPO)) if p)
    script.write_text(
        "#!/bin/sh\n"
        f"export PYTHONPATH='{pythonpath}'\n"
        f"export XLAGUI_CACHE_DIR='{cache}'\n"
        f"exec '{sys.executable}' \"$@\"\n"
    )
    script.chmod(0o755)
    return script


def start_sshd(folder: Path) -> SshServer:
    if not Path(SSHD).exists():
        raise SshdError(f"{SSHD} is not there: install openssh-server")
    if shutil.which("ssh") is None:
        raise SshdError("ssh is not installed: install openssh-client")
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("host_key", "user_key", "other_key"):
        _keygen(folder / name)
    shutil.copy(folder / "user_key.pub", folder / "authorized_keys")
    if os.geteuid() == 0:
        # sshd refuses to start as root without its privilege separation folder, which a
        # container that never ran the service lacks (Debian's init script makes it).
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    port = free_port()
    (folder / "sshd_config").write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "PermitRootLogin prohibit-password\n"
        "PubkeyAuthentication yes\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "StrictModes no\n"
        "UsePAM no\n"
        "MaxStartups 100\n"
        "LogLevel ERROR\n"
    )
    user = getpass.getuser()
    common = (
        f"  User {user}\n"
        "  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {folder / 'known_hosts'}\n"
        "  StrictHostKeyChecking no\n"
        "  LogLevel ERROR\n"
    )
    config = folder / "ssh_config"
    config.write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n"
        f"  IdentityFile {folder / 'user_key'}\n{common}"
        f"Host {WRONG_KEY_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n"
        f"  IdentityFile {folder / 'other_key'}\n{common}"
        f"Host {CLOSED_PORT_ALIAS}\n  HostName 127.0.0.1\n  Port {free_port()}\n"
        f"  IdentityFile {folder / 'user_key'}\n{common}"
        f"Host {NO_SUCH_HOST_ALIAS}\n  HostName no-such-host.invalid\n"
        f"  IdentityFile {folder / 'user_key'}\n{common}"
    )
    cache = folder / "host-cache"
    cache.mkdir(exist_ok=True)
    # Its messages go to sshd.log (-E; what it says before reading that option, to the same
    # file), which a failure to start quotes.
    with (folder / "sshd.log").open("wb") as log:
        process = subprocess.Popen(
            [SSHD, "-D", "-f", str(folder / "sshd_config"), "-E", str(folder / "sshd.log")],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    server = SshServer(folder, port, config, host_python(folder, cache), cache, process)
    deadline = time.monotonic() + 20
    while True:
        if process.poll() is not None:
            raise SshdError(f"sshd exited with status {process.returncode}: "
                            f"{server.log().strip()}")
        probe = subprocess.run(
            ["ssh", "-F", str(config), "-o", "BatchMode=yes", ALIAS, "--", "true"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=30,
        )
        if probe.returncode == 0:
            return server
        if time.monotonic() > deadline:
            server.stop()
            raise SshdError(
                "sshd started but no login worked within 20 s: "
                f"{probe.stderr.decode(errors='replace').strip()} {server.log().strip()}"
            )
        time.sleep(0.2)
