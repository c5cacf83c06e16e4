"""The system's OpenSSH client, as xlagui uses it: a target's command lines, one shared
connection, and each way of failing as its kind of `MachineError` (`MachineFailure`).

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
from pathlib import Path
from typing import IO, Any

from xlagui.core.measure.transports.base import (
    MachineError,
    MachineFailure,
    Target,
    TransportOption,
)
from xlagui.core.protocol.task import Cancelled, TaskState

CONNECT_TIMEOUT_SECONDS = 15
# A connection that stops answering is given up after 3 × 15 s: a lost network becomes a
# failed run within a minute, not a hang.
SERVER_ALIVE = ("ServerAliveInterval=15", "ServerAliveCountMax=3")
# How long the master connection outlives its last user (a crashed app leaves none for long).
CONTROL_PERSIST_SECONDS = 120
POLL_SECONDS = 0.1  # how often a command that can be stopped checks whether it should


# The client program (`MachineFailure.NO_CLIENT`, `CLIENT_FAILED`: `present.hosts` words how
# to get it).
CLIENT = "ssh"
# The transport's own setting (`Target.options`): an ssh configuration file, `ssh -F`.
CONFIG = TransportOption(
    "ssh_config", "--ssh-config", "FILE",
    "an ssh configuration file, as ssh -F takes (default: ~/.ssh/config)", path=True)


def ssh_binary() -> str:
    found = shutil.which("ssh")
    if found is None:
        raise MachineError(MachineFailure.NO_CLIENT, client=CLIENT)
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


def connection_error(target: Target, returncode: int, stderr: str) -> MachineError | None:
    """The `MachineError` of an ssh that could not get a command to run on the host (exit
    status 255), or None when the failure is the command's own."""
    if returncode != 255:
        return None
    if _AUTH.search(stderr):
        kind = MachineFailure.AUTH_FAILED
    elif _HOST_NOT_FOUND.search(stderr):
        kind = MachineFailure.HOST_NOT_FOUND
    elif _UNREACHABLE.search(stderr):
        kind = MachineFailure.UNREACHABLE
    else:
        return MachineError(MachineFailure.CLIENT_FAILED, stderr, client=CLIENT,
                            host=target.host, said=last_lines(stderr))
    return MachineError(kind, stderr, host=target.host, said=last_lines(stderr))


def last_lines(text: str, lines: int = 2) -> str:
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    kept = [ln for ln in kept if not ln.startswith("Warning: Permanently added")]
    return " ".join(kept[-lines:])


class Ssh:
    """Command lines for one target, over one master connection once `open` has run.

    `argv(command)` is the `ssh` command line that runs `command` (a line of the host's shell)
    on the host; `run` runs one and waits; `close` ends the master. Safe to close twice.
    """

    def __init__(self, target: Target) -> None:
        self.target = target
        self._control_dir: Path | None = None

    @property
    def _config(self) -> list[str]:
        """`-F FILE` for the configuration file the user gave (`CONFIG`), else nothing."""
        config = self.target.option(CONFIG.name)
        return ["-F", config] if config else []

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
        argv += self._config
        if self._control_dir is not None:
            # Our own socket, whatever the user's configuration says; a call finding no master
            # there connects by itself.
            argv += ["-o", "ControlMaster=no", "-o", f"ControlPath={self._control_path}"]
        return argv

    @property
    def is_open(self) -> bool:
        """Whether the master connection is there (`open` ran, `close` did not)."""
        return self._control_dir is not None

    @property
    def _control_path(self) -> Path:
        assert self._control_dir is not None
        return self._control_dir / "cm"

    def argv(self, command: str) -> list[str]:
        return [*self.base(), self.target.host, "--", command]

    def open(self, timeout: float = CONNECT_TIMEOUT_SECONDS + 15) -> None:
        """Log in once and keep the connection for the calls that follow. Raises the
        `MachineError` of a failed login (unreachable, unknown host, refused key)."""
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
                raise MachineError(MachineFailure.NO_ANSWER, host=self.target.host,
                                   seconds=timeout) from None
            err.seek(0)
            stderr = err.read().decode("utf-8", errors="replace")
        if proc.returncode != 0:
            shutil.rmtree(folder, ignore_errors=True)
            raise connection_error(self.target, 255, stderr) or MachineError(
                MachineFailure.NO_CONNECTION, stderr, host=self.target.host, said=last_lines(stderr)
            )
        self._control_dir = folder

    def close(self) -> None:
        """End the master connection (the calls riding on it end with it)."""
        folder, self._control_dir = self._control_dir, None
        if folder is None:
            return
        with contextlib.suppress(OSError, subprocess.TimeoutExpired, MachineError):
            subprocess.run(
                [
                    ssh_binary(),
                    *self._config,
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
        step: str = "", file: str = "",
    ) -> bytes:
        """`run`, and its stdout; a failure raises its `MachineError` (`step`: which step it
        was, `xlagui.present.hosts.STEPS`; `file`: the file it was about)."""
        proc = self.run(command, input=input, timeout=timeout)
        if proc.returncode == 0:
            return proc.stdout
        stderr = proc.stderr.decode("utf-8", errors="replace")
        lost = connection_error(self.target, proc.returncode, stderr)
        if lost is not None:
            raise lost
        raise MachineError(MachineFailure.COMMAND_FAILED, stderr, host=self.target.host, step=step,
                           file=file, status=proc.returncode, said=last_lines(stderr, 3))

    def popen(
        self, command: str, *, stdin: Any, stdout: Any, stderr: IO[bytes] | int | None,
        text: bool = False,
    ) -> subprocess.Popen[Any]:
        """`command` on the host as a process of ours; killing it closes the host's side of
        its stdin, which ends a worker there (`xlagui.core.worker.child` exits at end of input)."""
        if text:
            return subprocess.Popen(
                self.argv(command), stdin=stdin, stdout=stdout, stderr=stderr, text=True,
                encoding="utf-8", errors="replace",
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
