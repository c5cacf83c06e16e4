"""What the app needs at run time is installed by a plain `pip install .`, not only by an extra.

TensorFlow 2.21 stopped depending on `tensorboard`, which `tf.summary` needs; `tensorboard` sat in
the `test` extra, so CI always had it and every training run of a fresh install failed. These
tests read the imports of every module of `xlagui` (inside functions too: TensorFlow is imported
lazily) and the companion packages of the TensorFlow APIs it calls, and hold them against
`[project.dependencies]` in `pyproject.toml`.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "xlagui"

# TensorFlow APIs whose implementation lives in another distribution: a call to the API needs
# that distribution installed, although no `import` names it.
COMPANIONS = {
    # tf.summary is TensorBoard's implementation behind TensorFlow's name ("TensorBoard is not
    # installed, missing implementation for tf.summary.scalar" without it).
    "tensorboard": re.compile(r"\b(tf|summary)\.(summary\.)?(scalar|text|create_file_writer)\("),
}

# Optional extras: a distribution the app uses only behind its extra, and the one room of xlagui
# that may import it (which says how to install it when it is missing, `RayMissing`).
OPTIONAL = {"ray": ("ray", "xlagui/core/sweep/cluster/"),
            "jax": ("jax", "xlagui/core/worker/backends.py")}


def _pyproject() -> dict[str, object]:
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    raise RuntimeError("reading pyproject.toml needs Python 3.11's tomllib")


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _runtime_requirements() -> list[Requirement]:
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    reqs = [Requirement(r) for r in project["dependencies"]]
    return [r for r in reqs if r.marker is None or r.marker.evaluate()]


def _installed_by_plain_install() -> set[str]:
    """The listed runtime distributions and what they require in turn (no extras): what
    `pip install .` is bound to bring."""
    seen: set[str] = set()
    todo = [_name(r.name) for r in _runtime_requirements()]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = md.requires(name) or []
        except md.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_name(req.name))
    return seen


def imported_top_level_modules(package: Path) -> dict[str, list[str]]:
    """Every top-level module that some module of `package` imports, with where."""
    found: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                where = f"{path.relative_to(package.parent)}:{node.lineno}"
                found.setdefault(top, []).append(where)
    return found


def third_party(modules: dict[str, list[str]]) -> dict[str, list[str]]:
    return {
        m: where
        for m, where in modules.items()
        if m not in sys.stdlib_module_names and m != "xlagui"
    }


def test_every_third_party_import_is_a_runtime_dependency() -> None:
    dists = md.packages_distributions()
    installed = _installed_by_plain_install()
    missing = []
    for module, where in sorted(third_party(imported_top_level_modules(PACKAGE)).items()):
        if module in OPTIONAL:
            continue  # test_an_optional_extra_is_imported_only_in_its_room
        names = {_name(d) for d in dists.get(module, [])}
        assert names, f"{module} (imported at {where[0]}) is not installed at all"
        if not names & installed:
            missing.append(f"{module} ({', '.join(sorted(names))}), imported at {where[0]}")
    assert not missing, "imported but not installed by a plain `pip install .`: " + "; ".join(
        missing
    )


def test_an_optional_extra_is_imported_only_in_its_room() -> None:
    modules = third_party(imported_top_level_modules(PACKAGE))
    extras = _pyproject()["project"]["optional-dependencies"]  # type: ignore[index]
    for module, (extra, room) in OPTIONAL.items():
        outside = [w for w in modules.get(module, []) if not w.startswith(room)]
        assert not outside, f"{module} is optional ({extra!r} extra): imported at {outside}"
        assert module in {_name(Requirement(r).name) for r in extras[extra]}


def test_companion_packages_of_the_tensorflow_apis_used_are_runtime_dependencies() -> None:
    runtime = {_name(r.name) for r in _runtime_requirements()}
    for dist, call in COMPANIONS.items():
        users = [
            str(p.relative_to(ROOT))
            for p in sorted(PACKAGE.rglob("*.py"))
            if call.search(p.read_text(encoding="utf-8"))
        ]
        assert users, f"no module calls the API that needs {dist}: drop it from COMPANIONS"
        assert dist in runtime, f"{', '.join(users)} call(s) an API that needs {dist}"


def test_the_checks_see_a_missing_dependency(tmp_path: Path) -> None:
    """The import check is no rubber stamp: a module importing something that no runtime
    dependency brings is named."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    import pytestqt.plugin  # a test-only package\n")
    found = third_party(imported_top_level_modules(pkg))
    assert found == {"pytestqt": ["pkg/a.py:2"]}
    assert _name("pytest-qt") not in _installed_by_plain_install()
    assert _name("tensorflow") in _installed_by_plain_install()


@pytest.mark.parametrize("extra", ["test"])
def test_no_runtime_import_hides_in_an_extra(extra: str) -> None:
    """Nothing the package imports at run time is satisfied only through an extra (an optional
    extra's own distribution, `OPTIONAL`, aside: the test extra lists Ray so CI runs the test of
    a sweep on a real Ray head)."""
    project = _pyproject()["project"]
    assert isinstance(project, dict)
    extras = {_name(Requirement(r).name) for r in project["optional-dependencies"][extra]}
    runtime = {_name(r.name) for r in _runtime_requirements()}
    dists = md.packages_distributions()
    used = {
        _name(d)
        for m in third_party(imported_top_level_modules(PACKAGE))
        if m not in OPTIONAL
        for d in dists.get(m, [])
    } | set(COMPANIONS)
    assert not (used & extras) - runtime
