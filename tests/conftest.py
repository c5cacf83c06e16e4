"""Shared test setup: Qt without a display, and xlagui's own folders inside the session's tmp."""

from __future__ import annotations

import os

# Set before anything imports xlagui. Two tests side by side (CI's 2 workers) are each other's
# busy neighbour: the busy-machine rule (issue 37) would set every round aside and stretch each
# measurement to its budget, so it is off (100%) unless a test sets `busy_percent` itself, and
# so is the preflight's look before measuring (tests/core/machine, tests/cli test them).
os.environ.setdefault("XLAGUI_BUSY_PERCENT", "100")
os.environ.setdefault("XLAGUI_PREFLIGHT_SECONDS", "0")

import subprocess
from collections.abc import Iterator

import pytest

from tests.helpers.cli import RealComparison, real_comparison
from tests.helpers.ray_head import driver_env
from tests.helpers.sshd import SshdError, SshServer, start_sshd

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The machine-limits probe (seconds of real TensorFlow) runs only where a test asks for it.
os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")
# Ray's token authentication: the test run's own token, never one an earlier Ray left in
# ~/.ray; set before any test imports Ray, which reads it once per process (helpers/ray_head.py).
os.environ.update(driver_env())


@pytest.fixture(autouse=True, scope="session")
def _xlagui_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """History and caches go to temporary folders, never the user's."""
    saved = {k: os.environ.get(k) for k in ("XLAGUI_DATA_DIR", "XLAGUI_CACHE_DIR")}
    os.environ["XLAGUI_DATA_DIR"] = str(tmp_path_factory.mktemp("xlagui-data"))
    os.environ["XLAGUI_CACHE_DIR"] = str(tmp_path_factory.mktemp("xlagui-cache"))
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(autouse=True)
def _history_of_its_own(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test its own History: a comparison checks its interval against the earlier ones
    of its settings there (`history.earlier_estimates`), and another test's fake ratio is no
    earlier measurement of this one."""
    monkeypatch.setenv("XLAGUI_DATA_DIR", str(tmp_path_factory.mktemp("xlagui-data")))


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    """A real OpenSSH server on localhost (tests/helpers/sshd.py), one for the session. A test
    that needs it fails with the reason when it cannot start: it is never skipped."""
    try:
        server = start_sshd(tmp_path_factory.mktemp("sshd"))
    except (SshdError, OSError, subprocess.SubprocessError) as exc:
        pytest.fail(f"could not start an OpenSSH server for the SSH tests: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def shared_comparison(tmp_path_factory: pytest.TempPathFactory) -> RealComparison:
    """One real training comparison (tests/helpers/cli.py), made once per test process for the
    tests that only read what it left (tf tests only: it trains for real)."""
    return real_comparison(tmp_path_factory.mktemp("shared-comparison"))
