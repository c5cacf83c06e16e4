"""The system's OpenSSH client, as xlagui uses it: a target, its command lines, one shared
connection, and what each way of failing means in words.

xlagui has no SSH of its own and runs nothing on the host but `ssh HOST -- COMMAND`: the user's
`~/.ssh/config` (aliases, keys, agents, jump hosts) applies as it does in a terminal. Every call
runs with `BatchMode=yes`, so a missing key is an error here instead of a password prompt nobody
sees. One master connection (`ControlMaster`) is opened per host and the other calls ride on it,
so a worker starts without a handshake of its own.
"""

from __future__ import annotations

import contextlib
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from xlagui.core.protocol.task import Cancelled, TaskState

DEFAULT_PYTHON = "python3"
CONNECT_TIMEOUT_SECONDS = 15
# A connection that stops answering is given up after 3 × 15 s: a lost network becomes a
# failed run within a minute, not a hang.
SERVER_ALIVE = ("ServerAliveInterval=15", "ServerAliveCountMax=3")
# How long the master connection outlives its last user (a crashed app leaves none for long).
CONTROL_PERSIST_SECONDS = 120
POLL_SECONDS = 0.1  # how often a command that can be stopped checks whether it should


@dataclass(frozen=True)
class SshTarget:
    """Where workers run: an SSH host and how to use it.

    `host`: `user@host`, `host` or an alias of the ssh configuration. `python`: the host's
    Python as words of the host's shell (`python3`, `~/venv/bin/python`, `env VAR=1 python3`).
    `ssh_config`: an ssh configuration file (`ssh -F`), "" for ssh's own. `remote_data`: a
    dataset folder already on the host, laid out like the local one; "" copies the dataset
    into the host's cache.
    """

    host: str
    python: str = DEFAULT_PYTHON
    ssh_config: str = ""
    remote_data: str = ""

    def __post_init__(self) -> None:
        if not self.host or self.host != self.host.strip() or any(c.isspace() for c in self.host):
            raise ValueError(f"not an SSH host name: {self.host!r}")
        if self.host.startswith("-"):  # would be read as an option of ssh
            raise ValueError(f"an SSH host name cannot start with '-': {self.host!r}")
        if not self.python.strip():
            raise ValueError("the host's Python cannot be empty")


class RemoteError(Exception):
    """Something about the host stops the comparison before it starts; `kind` says what (one
    subclass each), the message says it in words, `hint` what to do."""

    kind = "remote"

    def __init__(self, message: str, hint: str = "", details: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details = details


class NoSsh(RemoteError):
    kind = "no_ssh"


class HostNotFound(RemoteError):
    kind = "host_not_found"


class HostUnreachable(RemoteError):
    kind = "unreachable"


class AuthFailed(RemoteError):
    kind = "auth_failed"


class PythonMissing(RemoteError):
    kind = "python_missing"


class XlaguiMissing(RemoteError):
    kind = "xlagui_missing"


class VersionMismatch(RemoteError):
    kind = "version_mismatch"


class TensorFlowMissing(RemoteError):
    kind = "tensorflow_missing"


class RemoteDataMissing(RemoteError):
    kind = "remote_data_missing"


class ConnectionLost(RemoteError):
    kind = "connection_lost"


class RemoteCommandFailed(RemoteError):
    kind = "command_failed"


def ssh_binary() -> str:
    found = shutil.which("ssh")
    if found is None:
        raise NoSsh(
            "no ssh command on this computer",
            hint="Install the OpenSSH client (Debian/Ubuntu: apt install openssh-client; "
            "Windows: the optional feature 'OpenSSH Client').",
        )
    return found


# What ssh prints (255) for each way a connection fails, in the order they are told apart.
_HOST_NOT_FOUND = re.compile(
    r"Could not resolve hostname|Name or service not known|nodename nor servname|"
    r"No address associated with hostname|Temporary failure in name resolution"
)
_UNREACHABLE = re.compile(
    r"Connection refused|Connection timed out|Operation timed out|No route to host|"
    r"Network is unreachable|Connection reset|Connection closed by|banner exchange|"
    r"closed by remote host|Broken pipe|Timeout, server .* not responding"
)
_AUTH = re.compile(
    r"Permission denied|Host key verification failed|Too many authentication failures|"
    r"REMOTE HOST IDENTIFICATION HAS CHANGED|No more authentication methods"
)


def connection_error(target: SshTarget, returncode: int, stderr: str) -> RemoteError | None:
    """The `RemoteError` for an ssh that could not get a command to run on the host (exit
    status 255), or None when the failure is the command's own."""
    if returncode != 255:
        return None
    said = last_lines(stderr)
    host = target.host
    if _AUTH.search(stderr):
        return AuthFailed(
            f"{host} refused the login: {said}",
            hint="xlagui logs in with keys only (BatchMode). Check that `ssh "
            f"{host}` logs in without a password prompt (ssh-copy-id, ssh-add, IdentityFile in "
            "~/.ssh/config); a changed host key must be accepted in a terminal first.",
            details=stderr,
        )
    if _HOST_NOT_FOUND.search(stderr):
        return HostNotFound(
            f"no host called {host}: {said}",
            hint="Check the name, or the Host alias in your ssh configuration.",
            details=stderr,
        )
    if _UNREACHABLE.search(stderr):
        return HostUnreachable(
            f"{host} cannot be reached: {said}",
            hint="Check that the host is up, the network or VPN is there, and the port is "
            "the one ssh uses.",
            details=stderr,
        )
    return HostUnreachable(
        f"ssh could not run a command on {host}" + (f": {said}" if said else ""),
        hint=f"Try `ssh {host} true` in a terminal.",
        details=stderr,
    )


def last_lines(text: str, lines: int = 2) -> str:
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    kept = [ln for ln in kept if not ln.startswith("Warning: Permanently added")]
    return " ".join(kept[-lines:])


class Ssh:
    """Command lines for one target, over one master connection once `open` has run.

    `argv(command)` is the `ssh` command line that runs `command` (a line of the host's shell)
    on the host; `run` runs one and waits; `close` ends the master. Safe to close twice.
    """

    def __init__(self, target: SshTarget) -> None:
        self.target = target
        self._control_dir: Path | None = None

    def base(self) -> list[str]:
        argv = [
            ssh_binary(),
            "-T",  # no terminal: the worker's stdin and stdout are pipes of lines
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={CONNECT_TIMEOUT_SECONDS}",
        ]
        for option in SERVER_ALIVE:
            argv += ["-o", option]
        if self.target.ssh_config:
            argv += ["-F", self.target.ssh_config]
        if self._control_dir is not None:
            # Our own socket, whatever the user's configuration says; a call finding no master
            # there connects by itself.
            argv += ["-o", "ControlMaster=no", "-o", f"ControlPath={self._control_path}"]
        return argv

    @property
    def _control_path(self) -> Path:
        assert self._control_dir is not None
        return self._control_dir / "cm"

    def argv(self, command: str) -> list[str]:
        return [*self.base(), self.target.host, "--", command]

    def open(self, timeout: float = CONNECT_TIMEOUT_SECONDS + 15) -> None:
        """Log in once and keep the connection for the calls that follow. Raises the
        `RemoteError` of a failed login (unreachable, unknown host, refused key)."""
        if self._control_dir is not None:
            return
        ssh_binary()  # no ssh: said before anything is made
        # A short folder: a socket's path is limited to about 100 characters.
        folder = Path(tempfile.mkdtemp(prefix="xlagui-ssh-"))
        argv = [
            *self.base(),
            "-o",
            "ControlMaster=yes",
            "-o",
            f"ControlPath={folder / 'cm'}",
            "-o",
            f"ControlPersist={CONTROL_PERSIST_SECONDS}",
            "-N",  # no command: the connection alone
            "-f",  # into the background once logged in
            self.target.host,
        ]
        # The master lives on in the background holding its stderr: a file, never a pipe we
        # would wait on for an end of file.
        with tempfile.TemporaryFile() as err:
            try:
                proc = subprocess.run(
                    argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                    timeout=timeout,
                )
            except subprocess.TimeoutExpired:
                shutil.rmtree(folder, ignore_errors=True)
                raise HostUnreachable(
                    f"{self.target.host} did not answer within {timeout:.0f} s",
                    hint="Check that the host is up and the network or VPN is there.",
                ) from None
            err.seek(0)
            stderr = err.read().decode("utf-8", errors="replace")
        if proc.returncode != 0:
            shutil.rmtree(folder, ignore_errors=True)
            raise connection_error(self.target, 255, stderr) or HostUnreachable(
                f"ssh could not connect to {self.target.host}: {last_lines(stderr)}",
                details=stderr,
            )
        self._control_dir = folder

    def close(self) -> None:
        """End the master connection (the calls riding on it end with it)."""
        folder, self._control_dir = self._control_dir, None
        if folder is None:
            return
        with contextlib.suppress(OSError, subprocess.TimeoutExpired, NoSsh):
            subprocess.run(
                [
                    ssh_binary(),
                    *(["-F", self.target.ssh_config] if self.target.ssh_config else []),
                    "-o",
                    f"ControlPath={folder / 'cm'}",
                    "-O",
                    "exit",
                    self.target.host,
                ],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
            )
        shutil.rmtree(folder, ignore_errors=True)

    def run(
        self,
        command: str,
        *,
        input: bytes | None = None,
        timeout: float | None = None,
        state: TaskState | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run `command` on the host and wait; the caller reads the exit status. With `state`,
        a request to stop kills the local ssh (which ends the command there: its stdin closes)
        and raises `Cancelled`."""
        if state is None:
            return subprocess.run(
                self.argv(command),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=timeout,
            )
        deadline = None if timeout is None else time.monotonic() + timeout
        with subprocess.Popen(
            self.argv(command),
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as proc:
            pending = input
            while True:
                try:
                    out, err = proc.communicate(pending, timeout=POLL_SECONDS)
                    break
                except subprocess.TimeoutExpired:
                    pending = None  # communicate keeps sending what it started with
                    late = deadline is not None and time.monotonic() > deadline
                    if state.is_interruption_requested() or late:
                        proc.kill()
                        proc.communicate()
                        if late:
                            raise
                        raise Cancelled() from None
            return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def check(
        self, command: str, *, input: bytes | None = None, timeout: float | None = None,
        what: str = "",
    ) -> bytes:
        """`run`, and its stdout; a failure raises its `RemoteError` (`what`: the step, in
        words, for the message)."""
        proc = self.run(command, input=input, timeout=timeout)
        if proc.returncode == 0:
            return proc.stdout
        stderr = proc.stderr.decode("utf-8", errors="replace")
        lost = connection_error(self.target, proc.returncode, stderr)
        if lost is not None:
            raise lost
        raise RemoteCommandFailed(
            f"{what or 'a command'} failed on {self.target.host} (exit status "
            f"{proc.returncode}): {last_lines(stderr, 3)}",
            details=stderr,
        )

    def popen(
        self, command: str, *, stdin: Any, stdout: Any, stderr: IO[bytes] | int | None,
        text: bool = False,
    ) -> subprocess.Popen[Any]:
        """`command` on the host as a process of ours; killing it closes the host's side of
        its stdin, which ends a worker there (`xlagui.core.worker.child` exits at end of input)."""
        if text:
            return subprocess.Popen(
                self.argv(command), stdin=stdin, stdout=stdout, stderr=stderr, text=True,
                encoding="utf-8",
                # Like a local worker: a Ctrl+C in the terminal is the CLI's to handle.
                start_new_session=True,
            )
        return subprocess.Popen(
            self.argv(command), stdin=stdin, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )

    def __enter__(self) -> Ssh:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def config_hosts(path: Path | None = None) -> list[str]:
    """The hosts named in an ssh configuration file (`~/.ssh/config` by default), for a
    picker: each `Host` alias without wildcards or negations, in the file's order. `Include`d
    files are not followed ([] when there is no such file)."""
    path = path or Path.home() / ".ssh" / "config"
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    hosts: list[str] = []
    for line in text.splitlines():
        words = line.strip().split()
        if len(words) < 2 or words[0].lower() != "host":
            continue
        for alias in words[1:]:
            if alias.startswith("#"):
                break
            if not any(c in alias for c in "*?!") and alias not in hosts:
                hosts.append(alias)
    return hosts


def quote(word: str) -> str:
    return shlex.quote(word)


def command_line(words: Sequence[str]) -> str:
    """Words as one line of the host's shell, each quoted."""
    return " ".join(shlex.quote(w) for w in words)
