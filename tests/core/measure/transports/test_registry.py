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


def test_a_transports_own_setting_is_declared_by_it_and_reaches_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A setting of the made-up transport's own (`OPTIONS`) is listed by the registry, picks
    the hosts it offers, and reaches it in `Target.options`: nothing else names it."""
    elsewhere.register(monkeypatch)
    assert elsewhere.REGION in transports.options()
    assert f"{elsewhere.HOST}-north" in transports.suggested_hosts({"elsewhere_region": "north"})
    transports.connect(Target(elsewhere.HOST, options=(("elsewhere_region", "north"),)))
    assert elsewhere.REGIONS[-1] == "north"


def test_no_field_of_the_generic_layers_is_one_transports() -> None:
    """A machine, its failures and a sweep's shared job name no transport: what is SSH's is
    behind the ssh transport (its `OPTIONS`, its client's name as a fact)."""
    from dataclasses import fields

    from xlagui.core.measure.transports import MachineFailure
    from xlagui.core.sweep.cell import CellJob

    names = [f.name for f in fields(Target)] + [f.name for f in fields(CellJob)] + [
        m.name for m in MachineFailure]
    assert names and not [n for n in names if "ssh" in n.lower()]
    assert [o.flag for o in transports.options()] == ["--ssh-config"]


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
