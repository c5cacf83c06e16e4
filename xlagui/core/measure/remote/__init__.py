"""Measuring on another machine over SSH.

- `ssh.py`: the target (`SshTarget`), the `ssh` command lines over one master connection, and
  each way of failing as its own `RemoteError`;
- `preflight.py`: what the host has (`HostInfo`), asked once before anything runs there;
  `hostside.py` is the part that runs on the host;
- `dataset.py`: the dataset copied once into the host's cache, or a folder already there;
- `host.py`: `RemoteHost` (connected and preflighted) and `SshTransport`, the `Transport` every
  worker of a comparison on that host starts through.

Nothing is re-exported here: the command line imports `ssh.py` (standard library only) at
start-up, and the rest where it is used.
"""
