"""The SSH transport: measuring on another machine over the system's OpenSSH client.

- `client.py`: the `ssh` command lines of a `Target` over one master connection, and each way
  of failing as its kind of `MachineError`;
- `preflight.py`: what the host has (`HostInfo`), asked once before anything runs there;
  `hostside.py` is the part that runs on the host;
- `dataset.py`: the dataset copied once into the host's cache, or a folder already there;
- `transport.py`: `SshTransport`, the `Transport` every child of a comparison on that host
  starts through (and its registration: `connect`, `check`, `hosts`).

Nothing is re-exported here: the layers above reach it through `xlagui.core.measure.transports`.
"""
