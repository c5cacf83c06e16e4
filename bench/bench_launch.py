"""How long `python -m xlagui` takes to show its window, in the three ways a user launches it
(issue 38): the very first launch (no settings yet), a launch with saved settings, and a launch
after a dataset folder was opened (the window remembers it).

    python bench/bench_launch.py [--launches 3] [--folder DIR] [--write]

Each launch runs with XLAGUI_LAUNCH_PROBE=1 (the app prints when its window is first shown and
closes), under the display it is given (DISPLAY, e.g. `xvfb-run -a`), from before the process
starts to the window's first show event; one unmeasured launch warms the page cache first. The
settings live in a temporary XDG_CONFIG_HOME: empty for every "first" launch; for "settings",
left by one launch that closed normally; for "folder", left by one launch given `--folder`.
Bytecode is written and used, as in an installed copy (the unmeasured launch writes it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import add_write, cpu_ticks, load_average, publish, section_text, steal_words

GOAL_S = 1.0
SCENARIOS = ("first", "settings", "folder")


def launch(env: dict[str, str], cwd: Path, *args: str) -> float:
    """One launch; seconds from before the process started to its window's first show."""
    before = time.time()
    res = subprocess.run([sys.executable, "-m", "xlagui", *args], env=env, capture_output=True,
                         text=True, timeout=120, cwd=cwd)
    line = next((x for x in res.stdout.splitlines() if x.startswith("shown_at=")), None)
    if res.returncode != 0 or line is None:
        raise RuntimeError(f"launch failed ({res.returncode}): {res.stderr[-2000:]}")
    return float(line.split("=", 1)[1]) - before


def scenario(name: str, times: int, folder: Path, tmp: Path) -> list[float]:
    """`times` launches of `name` (one of SCENARIOS), after one unmeasured."""
    config = tmp / name / "config"
    env = {
        **os.environ,
        "XLAGUI_LAUNCH_PROBE": "1",
        "XLAGUI_DATA_DIR": str(tmp / name / "data"),
        "XLAGUI_CACHE_DIR": str(tmp / name / "cache"),
        "XDG_CONFIG_HOME": str(config),
    }
    # As installed: pip writes every module's bytecode at install time; a shell that forbids it
    # (PYTHONDONTWRITEBYTECODE) would add compiling each module from source to every launch.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if name == "settings":
        launch(env, tmp)  # closes normally: the window's settings are saved
    elif name == "folder":
        launch(env, tmp, str(folder))  # the folder opened once: remembered
    walls = []
    for i in range(times + 1):
        if name == "first":
            shutil.rmtree(config, ignore_errors=True)
        wall = launch(env, tmp)
        if i > 0:
            walls.append(wall)
    return walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--folder", type=Path, default=None,
                        help="the dataset folder opened once for 'folder' (the demo set's)")
    parser.add_argument("--tag", default="", help="a label for the section (before, after)")
    add_write(parser)
    args = parser.parse_args()
    load_before = load_average()
    folder = args.folder
    if folder is None:
        from xlagui.core.data.demo import ensure_demo_dataset

        folder = Path(ensure_demo_dataset())
    rows = ["| launch | median | each | goal |", "|---|---|---|---|"]
    ticks = cpu_ticks()
    with tempfile.TemporaryDirectory(prefix="xlagui-bench-launch-") as tmp:
        for name in SCENARIOS:
            walls = scenario(name, args.launches, folder, Path(tmp))
            median = statistics.median(walls)
            each = ", ".join(f"{w:.2f}" for w in walls)
            verdict = "met" if median <= GOAL_S else "NOT met"
            print(f"{name}: median {median:.2f} s ({each})", flush=True)
            rows.append(f"| {name} | {median:.2f} s | {each} | ≤ {GOAL_S:.1f} s: {verdict} |")
    steal = steal_words(ticks, cpu_ticks())
    print(steal, flush=True)
    display = os.environ.get("DISPLAY") or "none (offscreen)"
    tag = f", {args.tag}" if args.tag else ""
    lines = [
        f"## Window launch, three ways (issue 38){tag}",
        "",
        f"`python bench/bench_launch.py --launches {args.launches}"
        f"{' --tag ' + args.tag if args.tag else ''}`: `python -m xlagui` with "
        f"XLAGUI_LAUNCH_PROBE=1 under DISPLAY={display}, from before the process starts to the "
        "window's first show event, median of the launches after one unmeasured. first: no "
        "settings (a new XDG_CONFIG_HOME each launch); settings: those one normal launch left; "
        "folder: those a launch given a dataset folder left (the folder remembered). Bytecode "
        "cached, as pip installs it.",
        "",
        *rows,
        "",
        f"During the launches: {steal} (the time this VM's hypervisor ran something else).",
    ]
    name = "launch" + (f"-{args.tag}" if args.tag else "")
    publish(name, section_text(lines, load_before, before="the launches"), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
