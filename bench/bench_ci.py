"""CI on a clean clone, as CI runs it: `git clone` of HEAD into a temporary folder, a fresh virtual
environment (no system site-packages: its base interpreter's packages are not seen), `CI=true`,
no display, then `.ci/run`. Prints the whole time, each lane's time against its budget, and
the 10 slowest tests of the run; `--write` puts that in BENCHMARKS.md as "CI on a clean clone,
run N".

    python bench/bench_ci.py --write --run 1
    python bench/bench_ci.py --log ci.log --run 2 --write   # read a log .ci/run already wrote

Run it on a machine doing nothing else: CI's lanes use both cores, and the times are the point.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, add_write, load_average, publish, section_text

LANE = re.compile(r"^ci: (\S+ lane( passed| FAILED| OVER BUDGET|: the cores)"
                  r"|plain-install (step|lane starts|lane runs)|the whole run)")
DURATION = re.compile(r"^(\d+\.\d+)s (call|setup|teardown)\s+(\S.*?)\s*$")
WHOLE = re.compile(r"^ci: every lane ran in (\d+) s; the whole run, installs included, (\d+) s")
COUNTS = re.compile(r"^=+ (.*\d+ passed.*) in [\d.]+s")


def run_clean_clone(log: Path) -> tuple[int, float]:
    """`.ci/run` in a fresh clone and venv; its output goes to `log`. (exit code, seconds)."""
    with tempfile.TemporaryDirectory(prefix="xlagui-ci-") as tmp:
        clone, venv = Path(tmp) / "clone", Path(tmp) / "venv"
        subprocess.run(["git", "clone", "-q", "--no-local", str(ROOT), str(clone)], check=True)
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", str(venv)], check=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "VIRTUAL_ENV", "PYTHONPATH")
               and not k.startswith(("XLAGUI_", "PYTEST_"))}
        env.update(CI="true", PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
                   VIRTUAL_ENV=str(venv))
        start = time.monotonic()
        with log.open("w", encoding="utf-8") as out:
            code = subprocess.run([str(clone / ".ci" / "run")], cwd=clone, env=env,
                                  stdout=out, stderr=subprocess.STDOUT, check=False).returncode
        return code, time.monotonic() - start


def read_log(text: str) -> tuple[list[str], list[tuple[float, str]], list[str]]:
    """The lane lines, every test's duration (seconds, id) and the pytest summaries of a log."""
    lanes, durations, counts = [], [], []
    for line in text.splitlines():
        if LANE.match(line) or WHOLE.match(line):
            lanes.append(line.removeprefix("ci: "))
        elif (d := DURATION.match(line)) and d.group(2) == "call":
            durations.append((float(d.group(1)), d.group(3)))
        elif c := COUNTS.match(line):
            counts.append(c.group(1))
    return lanes, sorted(durations, reverse=True), counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=int, default=1, help="which run this is (its section)")
    parser.add_argument("--log", type=Path, help="read this .ci/run log instead of running")
    parser.add_argument("--commit", default="HEAD",
                        help="with --log: the commit the logged run ran (default: HEAD)")
    add_write(parser)
    args = parser.parse_args()
    load = load_average()
    commit = subprocess.run(["git", "rev-parse", "--short", args.commit], cwd=ROOT, text=True,
                            capture_output=True, check=True).stdout.strip()
    if args.log:
        text, how = args.log.read_text(encoding="utf-8"), f"read from {args.log.name}"
        code = (3 if "ci: FAILED: over budget" in text
                else 0 if "ci: FAILED" not in text and "FAILED (exit" not in text else 1)
    else:
        with tempfile.NamedTemporaryFile(suffix=".log", delete=False) as fh:
            log = Path(fh.name)
        code, took = run_clean_clone(log)
        text, how = log.read_text(encoding="utf-8"), f"{took:.0f} s by the clock, log {log}"
    lanes, durations, counts = read_log(text)
    where = ("with the Python it was given (this machine's base Python, as CI runs it)"
             if args.log else "in a fresh virtual environment")
    lines = [
        f"`.ci/run` on a clean clone of {commit} {where}, `CI=true`, no display ({how}): "
        f"{'passed' if code == 0 else f'FAILED (exit {code})'}.",
        "",
        *[f"- {line}" for line in lanes],
        f"- pytest, lane by lane: {'; '.join(counts)}",
        "",
        "The 10 slowest tests (call time, on 2 xdist workers in the fast and tf lanes):",
        "",
        *[f"{n}. {s:.1f} s `{name}`" for n, (s, name) in enumerate(durations[:10], 1)],
    ]
    # A log read later does not say the load before its run: the load now is after it.
    stamp = (section_text(lines, f"the run not recorded (read after it: {load})") if args.log
             else section_text(lines, load, before="the run"))
    publish(f"ci-run-{args.run}", f"## CI on a clean clone (issue 36), run {args.run}\n\n"
            + stamp, args.write)
    return code


if __name__ == "__main__":
    sys.exit(main())
