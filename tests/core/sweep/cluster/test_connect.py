"""Connecting to a cluster: an address where nothing listens is said at once (Ray itself would
retry its head for minutes)."""

from __future__ import annotations

import pytest

from tests.helpers.ray_head import free_ports
from xlagui.core.sweep.cluster import RayConnectError, RayExecutor, RayOptions


def test_an_address_where_nothing_listens_is_refused_at_once() -> None:
    address = f"127.0.0.1:{free_ports(1)[0]}"
    with pytest.raises(RayConnectError) as caught:
        RayExecutor(RayOptions(address=address)).connect()
    assert caught.value.address == address
    assert "refused" in caught.value.detail.lower()
