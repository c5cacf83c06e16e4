"""The registry of transports: a target picks its transport by name; this computer needs no
connection; the names a machine is typed with are checked before anything runs."""

from __future__ import annotations

import pytest

from xlagui.core.measure import transports
from xlagui.core.measure.transports import LOCAL, Target


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
