"""Packaging: the icons, .desktop and metainfo files, the PyInstaller spec, and the wheel.

The wheel test builds from a copy of the source (`python -m build --no-isolation`, offline),
installs it into a fresh virtual environment that sees the test run's own site-packages (so
TensorFlow is not downloaded again) and runs the installed commands from outside the source tree.
The PyInstaller build itself takes many minutes and gigabytes, so it stays a manual step
(packaging/build.sh); here the spec runs with PyInstaller's classes stubbed.
"""

from __future__ import annotations

import configparser
import importlib.resources
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image, ImageChops

from xlagui import APP_ID, __version__

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = ROOT / "resources"
PACKAGING = ROOT / "packaging"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _png(size: int) -> Path:
    return RESOURCES / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png"


# --- icons, .desktop, metainfo -------------------------------------------------------------


@pytest.mark.parametrize("size", PNG_SIZES)
def test_each_hicolor_png_has_its_size(size: int) -> None:
    with Image.open(_png(size)) as im:
        assert im.format == "PNG"
        assert im.size == (size, size)
        assert im.mode == "RGBA"
        # A rounded tile: transparent corners, an opaque middle.
        alpha = im.getchannel("A")
        assert alpha.getpixel((0, 0)) == 0
        assert alpha.getpixel((size // 2, size // 2)) == 255


def test_ico_and_icns_hold_the_sizes_each_os_asks_for() -> None:
    with Image.open(RESOURCES / "xlagui.ico") as ico:
        assert ico.info["sizes"] == {(n, n) for n in (16, 24, 32, 48, 64, 128, 256)}
    with Image.open(RESOURCES / "xlagui.icns") as icns:
        assert icns.size == (1024, 1024)
        assert {(w * scale) for w, _, scale in icns.info["sizes"]} >= {32, 64, 128, 256, 512}


def test_the_convenience_svg_is_the_scalable_icon() -> None:
    scalable = RESOURCES / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    assert (RESOURCES / "xlagui.svg").read_bytes() == scalable.read_bytes()
    root = ET.parse(scalable).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 128 128"


@pytest.mark.parametrize("size", [16, 48, 256])
def test_committed_pngs_are_rendered_from_the_current_svg(size: int) -> None:
    """Someone edited the SVG and forgot `python resources/make_icons.py`? (Loose tolerance:
    another Qt version may anti-alias an edge differently, not draw a different icon.)"""
    from xlagui.resources import make_icons

    svg = make_icons.SOURCE.read_text(encoding="utf-8")
    fresh = make_icons.render(
        make_icons.small_variant(svg) if size <= make_icons.SMALL else svg, size
    )
    with Image.open(_png(size)) as committed:
        diff = ImageChops.difference(fresh, committed.convert("RGBA"))
    # Per pixel, the largest difference over R, G, B and A; count pixels off by more than 48.
    worst = ImageChops.lighter(
        ImageChops.lighter(diff.getchannel("R"), diff.getchannel("G")),
        ImageChops.lighter(diff.getchannel("B"), diff.getchannel("A")),
    )
    differing = sum(worst.histogram()[49:])
    assert differing / (size * size) < 0.02


def test_desktop_file() -> None:
    path = RESOURCES / f"{APP_ID}.desktop"
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Exec"] == "xlagui %F"
    assert entry["Icon"] == APP_ID
    assert entry["Categories"] == "Education;Science;Development;"


def test_desktop_file_passes_desktop_file_validate() -> None:
    if not shutil.which("desktop-file-validate"):
        pytest.skip("desktop-file-validate is not installed (Debian/Ubuntu: desktop-file-utils)")
    path = RESOURCES / f"{APP_ID}.desktop"
    done = subprocess.run(
        ["desktop-file-validate", str(path)], capture_output=True, text=True, check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in done.stdout.lower()


def test_metainfo() -> None:
    path = RESOURCES / f"{APP_ID}.metainfo.xml"
    root = ET.parse(path).getroot()
    assert root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    assert "xlagui" in [b.text for b in root.iterfind("provides/binary")]
    assert root.find("description/p") is not None
    assert root.find("content_rating") is not None
    image = root.findtext("screenshots/screenshot/image") or ""
    assert image.startswith("https://") and image.endswith("docs/screenshots/done.png")
    assert root.find("releases/release").get("version") == __version__  # type: ignore[union-attr]


def test_metainfo_passes_appstreamcli_validate() -> None:
    if not shutil.which("appstreamcli"):
        pytest.skip("appstreamcli is not installed (Debian/Ubuntu: appstream)")
    path = RESOURCES / f"{APP_ID}.metainfo.xml"
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_resources_are_read_through_importlib() -> None:
    files = importlib.resources.files("xlagui.resources")
    assert (files / "xlagui.svg").read_bytes().startswith(b"<?xml")
    assert (files / "icons" / "hicolor" / "64x64" / "apps" / f"{APP_ID}.png").is_file()


# --- PyInstaller spec and launcher ---------------------------------------------------------


class _Recorder:
    """Stands in for one of PyInstaller's spec classes and keeps what it was given."""

    made: list[tuple[str, tuple[Any, ...], dict[str, Any]]]

    def __init__(self, kind: str, made: list[tuple[str, tuple[Any, ...], dict[str, Any]]]) -> None:
        self.kind = kind
        self.made = made

    def __call__(self, *args: Any, **kwargs: Any) -> SimpleNamespace:
        self.made.append((self.kind, args, kwargs))
        # What the spec reads back from an Analysis: a.pure, a.scripts, a.binaries, a.datas.
        return SimpleNamespace(**{"pure": [], "scripts": [], "binaries": [], "datas": [], **kwargs})


def _run_spec(
    monkeypatch: pytest.MonkeyPatch, platform: str = "linux", debug_console: bool = False
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    """Run packaging/xlagui.spec as PyInstaller would, with its classes stubbed; return what
    each class was called with, and the spec's namespace."""
    made: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
    spec = PACKAGING / "xlagui.spec"
    namespace: dict[str, Any] = {
        "__name__": "__main__",
        "__file__": str(spec),
        "SPEC": str(spec),
        "SPECPATH": str(PACKAGING),
        **{kind: _Recorder(kind, made) for kind in ("Analysis", "PYZ", "EXE", "COLLECT", "BUNDLE")},
    }
    if debug_console:
        monkeypatch.setenv("XLAGUI_DEBUG_CONSOLE", "1")
    else:
        monkeypatch.delenv("XLAGUI_DEBUG_CONSOLE", raising=False)
    with monkeypatch.context() as m:
        m.setattr(sys, "platform", platform)
        exec(compile(spec.read_text(encoding="utf-8"), str(spec), "exec"), namespace)
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for kind, args, kwargs in made:
        by_kind.setdefault(kind, []).append({"args": args, **kwargs})
    return by_kind, namespace


def test_spec_lists_existing_data_files_and_importable_hidden_imports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made, _ = _run_spec(monkeypatch, "linux")
    (analysis,) = made["Analysis"]
    (script,) = analysis["args"][0]
    assert Path(script) == PACKAGING / "xlagui_launcher.py"
    assert analysis["datas"]
    for src, dest in analysis["datas"]:
        assert Path(src).is_file(), src
        # Bundled where the frozen importer looks for the package's data.
        rel = Path(src).relative_to(RESOURCES).parent
        assert Path(dest) == Path("xlagui", "resources") / rel
    assert {"xlagui.core.worker.child", "xlagui.resources"} <= set(analysis["hiddenimports"])
    # Every registered transport is bundled: the registry imports them by name.
    from xlagui.core.measure.transports import TRANSPORTS

    assert set(TRANSPORTS.values()) <= set(analysis["hiddenimports"])
    for name in analysis["hiddenimports"]:
        assert importlib.util.find_spec(name) is not None, name
    (hooks,) = analysis["hookspath"]
    assert (Path(hooks) / "pre_find_module_path" / "hook-xlagui.resources.py").is_file()
    assert [e["name"] for e in made["EXE"]] == ["xlagui", "xlagui-cli"]
    assert all(e["icon"] is None for e in made["EXE"])
    assert "BUNDLE" not in made


def test_pyinstaller_hook_points_the_analysis_at_the_resources_folder() -> None:
    """PyInstaller does not see setuptools' editable finder; the hook tells it where
    `xlagui.resources` is, or the bundle would lack it (seen in a real build)."""
    path = PACKAGING / "hooks" / "pre_find_module_path" / "hook-xlagui.resources.py"
    spec = importlib.util.spec_from_file_location("hook_xlagui_resources", path)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    api = SimpleNamespace(module_name="xlagui.resources", search_dirs=[str(ROOT / "xlagui")])
    hook.pre_find_module_path(api)
    (where,) = api.search_dirs
    assert (Path(where) / "resources" / "__init__.py").is_file()


@pytest.mark.parametrize(("platform", "icon"), [("win32", "xlagui.ico"), ("darwin", "xlagui.icns")])
def test_spec_uses_each_os_icon(monkeypatch: pytest.MonkeyPatch, platform: str, icon: str) -> None:
    made, _ = _run_spec(monkeypatch, platform)
    assert {Path(e["icon"]) for e in made["EXE"]} == {RESOURCES / icon}
    assert (RESOURCES / icon).is_file()
    if platform == "darwin":
        (bundle,) = made["BUNDLE"]
        assert bundle["bundle_identifier"] == APP_ID
        assert bundle["version"] == __version__


@pytest.mark.parametrize("debug_console", [False, True])
def test_spec_debug_console_switch(monkeypatch: pytest.MonkeyPatch, debug_console: bool) -> None:
    made, _ = _run_spec(monkeypatch, "win32", debug_console=debug_console)
    console = {e["name"]: e["console"] for e in made["EXE"]}
    assert console == {"xlagui": debug_console, "xlagui-cli": True}


def _run_launcher(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PACKAGING / "xlagui_launcher.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_bundle_entry_hands_dash_m_worker_to_the_worker(tmp_path: Path) -> None:
    done = _run_launcher("-m", "xlagui.core.worker.child", cwd=tmp_path)
    # The worker's own usage message and exit code: it ran, with no spec argument.
    assert done.returncode == 2, done.stderr
    assert "usage: python -m xlagui.core.worker.child" in done.stderr


def test_bundle_entry_runs_the_cli_otherwise(tmp_path: Path) -> None:
    done = _run_launcher("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"xlagui {__version__}"


# --- the wheel -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source, so that no build/ or egg-info lands in the
    checkout and no stale build/lib from an earlier build can leak into it."""
    src = tmp_path_factory.mktemp("src")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("xlagui", "resources"):
        shutil.copytree(ROOT / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (whl,) = out.glob("xlagui-*.whl")
    return whl


def test_wheel_holds_every_module_and_the_resources(
    wheel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    modules = {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "xlagui").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    # A subpackage missing from [tool.setuptools] packages in pyproject.toml shows up here.
    assert modules - names == set()
    assert wheel.name.startswith(f"xlagui-{__version__}-")
    shipped = {
        n.removeprefix("xlagui/resources/")
        for n in names
        if n.startswith("xlagui/resources/") and not n.endswith(".py")
    }
    # The PyInstaller spec ships the same data files as the wheel.
    _, spec = _run_spec(monkeypatch)
    assert shipped == set(spec["RESOURCE_FILES"])
    assert "xlagui/resources/__init__.py" in names


def _sees_this_environment(python: Path) -> None:
    """Let the new venv import what the test run itself can: its dependencies live in the
    interpreter running the tests, which is often a venv of its own. (`system_site_packages`
    would show the *base* interpreter's packages instead, which on a fresh machine hold only
    the standard library.) A `.pth` line adds a folder to `sys.path` without running that
    folder's own `.pth` files, so this environment's editable xlagui stays out of it."""
    ours = [p for p in dict.fromkeys([*site.getsitepackages(), site.getusersitepackages()])
            if Path(p).is_dir()]
    done = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60, check=True,
    )
    (Path(done.stdout.strip()) / "_xlagui_test_parent.pth").write_text(
        "".join(f"{p}\n" for p in ours), encoding="utf-8"
    )


def test_wheel_installs_and_runs_outside_the_source_tree(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bindir / ("python.exe" if os.name == "nt" else "python")
    _sees_this_environment(python)
    # --force-reinstall: the system site-packages may hold xlagui already (an editable
    # install of this checkout); the venv must get its own copy from the wheel.
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--no-deps",
            "--force-reinstall",
            "--no-index",
            "--quiet",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for command in ("xlagui-cli", "xlagui"):
        done = subprocess.run(
            [str(bindir / command), "--version"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"xlagui {__version__}"
    probe = (
        "import importlib.resources as r, xlagui, xlagui.resources as res\n"
        "print(xlagui.__file__)\nprint(res.__file__)\n"
        "print(len((r.files('xlagui.resources') / 'xlagui.svg').read_bytes()))\n"
    )
    done = subprocess.run(
        [str(python), "-c", probe],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    pkg_file, res_file, svg_len = done.stdout.split("\n")[:3]
    site = env_dir.resolve()
    assert Path(pkg_file).resolve().is_relative_to(site), pkg_file
    assert Path(res_file).resolve().is_relative_to(site), res_file
    assert int(svg_len) == (RESOURCES / "xlagui.svg").stat().st_size
