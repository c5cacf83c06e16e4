"""CI's lanes (.ci/lanes.py) are the README's `python -m pytest` cut into pieces: every test in
exactly one pytest lane, and .ci/run runs every lane. Collected the way each lane collects
(pytest's own `-m` evaluation over each test's markers), in one subprocess."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "helpers" / "lane_markers.py"


def _lanes() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_lanes", ROOT / ".ci" / "lanes.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["ci_lanes"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def selected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[str]]:
    """Each pytest lane's test ids, and "all": every test `python -m pytest` collects."""
    lanes = _lanes()
    out = tmp_path_factory.mktemp("lanes") / "lanes.json"
    expressions = {lane.name: lane.marker for lane in lanes.LANES if lane.marker}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
         "-p", "tests.helpers.lane_markers", "-p", "no:cacheprovider"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
        env={**_env(), "XLAGUI_LANES_OUT": str(out),
             "XLAGUI_LANES": json.dumps(expressions)},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {name: set(ids) for name, ids in json.loads(out.read_text()).items()}


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}


def test_every_test_is_in_exactly_one_lane(selected: dict[str, set[str]]) -> None:
    everything = selected.pop("all")
    assert len(everything) > 1000  # the whole suite was collected, not an error's few
    seen: dict[str, list[str]] = {}
    for name, ids in selected.items():
        for test_id in ids:
            seen.setdefault(test_id, []).append(name)
    twice = {t: names for t, names in seen.items() if len(names) > 1}
    assert not twice, f"{len(twice)} tests in more than one lane, e.g. {sorted(twice.items())[:5]}"
    nowhere = everything - set(seen)
    assert not nowhere, f"{len(nowhere)} tests in no lane, e.g. {sorted(nowhere)[:5]}"


def test_every_lane_holds_tests(selected: dict[str, set[str]]) -> None:
    """An empty lane is a marker spelled wrong (pytest would exit 5 and fail CI later)."""
    assert all(selected[name] for name in selected if name != "all"), {
        name: len(ids) for name, ids in selected.items()}


def test_ci_runs_every_lane_and_only_through_the_lane_runner() -> None:
    lanes = _lanes()
    run = (ROOT / ".ci" / "run").read_text()
    loop = next(line for line in run.splitlines() if line.startswith("for lane in "))
    listed = loop.split(" in ", 1)[1].removesuffix("; do").split()
    assert listed == [lane.name for lane in lanes.LANES]
    # A pytest run of its own in .ci/run would run tests a second time, outside any budget.
    commands = [line for line in run.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if "-m pytest" in line or line.startswith("pytest")]


def test_a_lane_over_its_budget_fails_naming_the_budget_and_its_slowest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run for real with a command that sleeps past a one-second budget."""
    lanes = _lanes()
    script = tmp_path / "slow.sh"
    script.write_text('sleep 2\nprintf "2\\tthe slow step\\n1\\tthe quick one\\n" '
                      '>> "$XLAGUI_CI_STEPS"\n')
    lane = lanes.Lane("slowpoke", budget_s=1, command=("bash", str(script)))
    assert lanes.run(lane, lane.budget_s) == lanes.EXIT_OVER_BUDGET
    said = capsys.readouterr().out
    assert "slowpoke lane OVER BUDGET" in said and "over its budget of 1 s" in said
    assert "the slow step 2 s; the quick one 1 s" in said
    assert lanes.run(lane, 60) == 0  # the same lane within a budget passes
    assert "slowpoke lane passed" in capsys.readouterr().out


def test_the_guide_names_every_lane_with_its_budget() -> None:
    """The guide's table of lanes (docs/guide.md, "Tests and CI") says what .ci/lanes.py does:
    one row a lane, in order, each with its budget in minutes."""
    import re

    lanes = _lanes()
    readme = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\S+) \| .* \| (\d+) min \|$", readme, flags=re.MULTILINE)
    assert rows == [(lane.name, str(lane.budget_s // 60)) for lane in lanes.LANES]
    assert all(lane.budget_s % 60 == 0 for lane in lanes.LANES)


def test_a_lane_loads_the_test_extras_plugins_and_no_other() -> None:
    """Every pytest plugin a lane loads comes from a distribution the test extra names: a lane
    needs nothing the install did not bring."""
    from importlib.metadata import packages_distributions

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+, as CI
    lanes = _lanes()
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"]["test"]
    named = {canonicalize_name(Requirement(r).name) for r in extra}
    owners = packages_distributions()
    for plugin in (*lanes.PLUGINS, lanes.XDIST_PLUGIN):
        dists = {canonicalize_name(d) for d in owners[plugin.split(".")[0]]}
        assert dists & named, f"{plugin} comes from {dists}, not from the test extra"
    command = lanes.pytest_command(lanes.lane_named("fast"), Path("junit.xml"))
    loaded = [command[i + 1] for i, arg in enumerate(command) if arg == "-p"]
    assert loaded == [*lanes.PLUGINS, lanes.XDIST_PLUGIN]


def test_a_plugin_that_happens_to_be_installed_stays_out_of_a_lane(tmp_path: Path) -> None:
    """CI installs into the Python it is given. A pytest plugin installed there (on CI's machine,
    pytest-benchmark, which errs beside `-n 2`) is loaded by a bare `python -m pytest`, never
    by a lane."""
    import os

    site = tmp_path / "site"
    site.mkdir()
    (site / "stray_plugin.py").write_text(
        "def pytest_configure(config):\n    raise RuntimeError('a stray plugin was loaded')\n")
    info = site / "stray_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stray-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pytest11]\nstray = stray_plugin\n")
    env = {**_env(), "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]),
        "XLAGUI_LANE_PYTEST_ARGS": "--collect-only -q tests/test_lanes.py"}

    bare = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                           "tests/test_lanes.py"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert bare.returncode != 0 and "a stray plugin was loaded" in bare.stdout + bare.stderr
    lane = subprocess.run([sys.executable, str(ROOT / ".ci" / "lanes.py"), "run", "fast"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert lane.returncode == 0, lane.stdout[-2000:] + lane.stderr[-2000:]
    assert "fast lane passed" in lane.stdout
