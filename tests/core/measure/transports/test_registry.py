"""The registry of transports: a target picks its transport by name; this computer needs no
connection; the names a machine is typed with are checked before anything runs."""

from __future__ import annotations

import pytest

from tests.helpers import elsewhere
from xlagui.core.measure import transports
from xlagui.core.measure.transports import LOCAL, Target
from xlagui.core.protocol.config import ConfigError


def test_this_computer_is_the_local_transport() -> None:
    assert transports.connect(None) is LOCAL
    assert transports.connect(Target()) is LOCAL
    assert Target().transport == "local" and Target("gpu").transport == "ssh"
    assert LOCAL.machine == "" and LOCAL.info is None
    assert LOCAL.environment()["hostname"]
    assert LOCAL.identity().machine and LOCAL.identity().tensorflow


def test_every_registered_transport_has_its_way_in() -> None:
    for name in transports.TRANSPORTS:
        module = transports.module_of(Target("h", via=name) if name != "local" else Target())
        assert callable(module.connect) and callable(module.check), name


def test_an_unknown_transport_is_refused() -> None:
    with pytest.raises(ValueError, match="no transport called 'ray'"):
        transports.connect(Target("head-node", via="ray"))
    # Typed as a host, it is a usage error the command line and the window say in words.
    with pytest.raises(ConfigError, match="no transport called 'ray'; one of local, ssh"):
        transports.check(Target("ray://head-node:10001"))


@pytest.mark.parametrize(
    ("host", "transport"),
    [("gpu", "ssh"), ("me@10.0.0.7", "ssh"), ("ssh://me@gpu:2222", "ssh"),
     ("ray://head-node:10001", "ray"), ("", "local")],
)
def test_a_host_typed_with_a_scheme_picks_its_transport(host: str, transport: str) -> None:
    assert Target(host).transport == transport


def test_a_made_up_transport_is_one_module_and_one_registration(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a newcomer adds (tests/helpers/elsewhere.py and its line in TRANSPORTS) is reached
    by the name a user types, offered among the hosts to pick, and checked and connected
    through the registry alone."""
    elsewhere.register(monkeypatch)
    target = Target(elsewhere.HOST)
    assert target.transport == elsewhere.NAME
    assert elsewhere.HOST in transports.suggested_hosts()
    assert transports.check(target).host == elsewhere.HOST
    transport = transports.connect(target)
    assert transport.machine == elsewhere.HOST
    assert transport.info is not None and transport.environment()["host"] == elsewhere.HOST


@pytest.mark.parametrize(
    ("host", "python", "words"),
    [
        ("-oProxyCommand=x", "python3", "cannot start with '-'"),
        ("two words", "python3", "not an SSH host name"),
        ("gpu", " ", "the host's Python cannot be empty"),
    ],
)
def test_a_target_that_cannot_be_a_host_is_refused(host: str, python: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        Target(host, python=python)


def test_a_host_needs_a_name() -> None:
    with pytest.raises(ValueError, match="not an SSH host name: ''"):
        Target("", via="ssh")
