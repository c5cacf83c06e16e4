"""How long from Stop until the app is ready again, in each phase of a comparison (issue 28's
goal: within 3 s, in every phase, locally and on an SSH host).

    python bench/bench_stop.py [--repeats 3] [--phases starting warm-up ...]
                               [--ways window cli] [--write]

A real comparison of the demo dataset at 48 px, batch 8, the baseline, XLA and bf16 (three
measuring workers, as in the issue's report), real TensorFlow workers on this computer:

- the window (offscreen): Run and Stop are real mouse clicks on the buttons a user sees
  (`QTest.mouseClick`); ready = the Run button is enabled again and no worker process of the
  comparison is left;
- the CLI: `python -m xlagui compare --demo …` in a process of its own, stopped with SIGINT
  (Ctrl+C); ready = it has exited and no worker process of the comparison is left;
- ssh (`--ways ssh`): the same CLI with `--host` on the test SSH host of
  `tests/helpers/sshd.py` (a real sshd on localhost whose Python runs this checkout); ready =
  the CLI has exited and no worker is left under that sshd.

The phase is read from the workers' own events as they are written (`runs/<id>/events.jsonl`
of the comparison's folder) and from the worker processes that exist, never from a sleep:

- probing: the machine's peak probe is running (a first comparison on a machine, or after a
  TensorFlow upgrade: its limits are not cached yet; it runs before any worker), the probe
  switched on (`XLAGUI_PEAK_PROBE`, off in every other phase) and its cache emptied first;
- starting: every measuring worker has begun loading TensorFlow (its log holds TensorFlow's
  first lines, written as its library loads; on an SSH host, the host's log) and none has
  sent `started`;
- warm-up: the first measuring worker has sent `warmup`: the next one is compiling;
- measuring: two rounds of interleaved blocks are in;
- inspection: after a speed-only measurement, the untimed compile with XLA's dump has sent
  `started` (it is compiling);
- training: the first training run has sent its first `batch`.

The first four run speed only (the inspection follows a measurement of the 10 s minimum
budget); the training phase runs a comparison with training runs. Goal ≤ 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, add_write, load_average, publish, section_text

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("XLAGUI_PEAK_PROBE", "off")
import psutil

GOAL = 3.0
WORKER_MODULE = "xlagui.core.worker.child"
ARMS = ("bf16",)
MEASURING = 1 + 1 + len(ARMS)  # the baseline, XLA and the other arms
PHASE_TIMEOUT = 900.0  # seconds to reach a phase (three TensorFlow imports on two cores)
READY_TIMEOUT = 120.0

# How the comparison is run and stopped: the window (real clicks), the CLI (SIGINT), the CLI on
# the test SSH host of tests/helpers/sshd.py (a real sshd on localhost; the host's workers are
# its descendants).
WAYS = ("window", "cli", "ssh")
PHASES: dict[str, str] = {
    "probing": "probing: the machine's peak probe running, before any worker",
    "starting": "starting: 3 measuring workers loading TensorFlow, no `started` yet",
    "warm-up": "warm-up: the first worker warmed up, the next compiling",
    "measuring": "measuring: 2 interleaved rounds in",
    "inspection": "inspection: the compile with XLA's dump after a speed-only run",
    "training": "training: the first training run's first batch in",
}


def seen(out: Path) -> dict[str, list[str]]:
    """Run id → the types of the events its worker wrote so far."""
    found: dict[str, list[str]] = {}
    for path in sorted((out / "runs").glob("*/events.jsonl")):
        types = []
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                types.append(str(json.loads(line).get("type")))
            except json.JSONDecodeError:
                break  # a line still being written
        found[path.parent.name] = types
    return found


def workers(under: Path) -> list[psutil.Process]:
    """The worker processes of the comparisons under `under` (their spec is in it)."""
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info.get("cmdline") or []
        if WORKER_MODULE in cmd and any(str(under) in part for part in cmd):
            out.append(proc)
    return out


def host_workers(sshd: Any) -> list[psutil.Process]:
    """The worker processes on the test SSH host: the descendants of its sshd (they read
    their spec from stdin, so their command line names no folder)."""
    try:
        below = psutil.Process(sshd.process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    out = []
    for proc in below:
        try:
            if WORKER_MODULE in proc.cmdline():
                out.append(proc)
        except psutil.NoSuchProcess:
            continue
    return out


def probes() -> list[psutil.Process]:
    """The peak probe processes running (a child of the app with `--peak`)."""
    out = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info.get("cmdline") or []
        # `--peak` of the worker's module; before issue 28, a module of its own.
        if (WORKER_MODULE in cmd and "--peak" in cmd) or "xlagui.core.machine.peak" in cmd:
            out.append(proc)
    return out


def probing(cache: Path) -> dict[str, str]:
    """The environment of the probing phase: the probe on, its cache (`cache`) emptied."""
    (cache / "machine_limits.json").unlink(missing_ok=True)
    return {"XLAGUI_PEAK_PROBE": "on"}


def reached(phase: str, out: Path, host_cache: Path | None = None) -> bool:
    """Whether the comparison writing into `out` is in `phase` now. On an SSH host the
    workers' logs are the host's, under its cache `host_cache` (copied home at the end)."""
    if phase == "probing":
        return bool(probes())
    events = seen(out)
    measuring = {k: v for k, v in events.items() if k.startswith("m")}
    if phase == "starting":
        logs = list((out / "runs").glob("m*/worker.log"))
        if host_cache is not None:
            logs += list(host_cache.glob("**/runs/m*/worker.log"))
        loading = [p for p in logs if p.stat().st_size > 0]  # TensorFlow's first words
        return len(loading) >= MEASURING and not any("started" in v for v in measuring.values())
    if phase == "warm-up":
        return any("warmup" in v for v in measuring.values())
    if phase == "measuring":
        return sum(v.count("block") for v in measuring.values()) >= 2 * MEASURING
    if phase == "inspection":
        return any("started" in v for k, v in events.items() if k.startswith("i-"))
    if phase == "training":
        return any("batch" in v for k, v in events.items() if k[:2].isdigit())
    raise ValueError(phase)


@dataclass
class Stop:
    seconds: float  # from Stop to ready
    workers: int  # worker processes alive when Stop was pressed
    left: int  # worker processes left when it was called ready (0 unless it timed out)


def wait(until: Callable[[], bool], timeout: float, tick: Callable[[], None]) -> bool:
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            return False
        tick()
    return True


# -- the CLI -----------------------------------------------------------------------------------

def cli_stop(phase: str, out: Path, sshd: Any = None) -> Stop:
    """`xlagui compare` stopped with SIGINT in `phase`; on the test SSH host `sshd` if given."""
    speed_only = phase != "training"
    argv = [sys.executable, "-m", "xlagui", "compare", "--demo", "--image-size", "48",
            "--batch", "8", "--epochs", "3", "--arms", ",".join(ARMS), "--out", str(out),
            "--budget", "10" if phase in ("inspection", "training") else "120"]
    if speed_only:
        argv.append("--quick")
    if sshd is not None:
        from tests.helpers.sshd import ALIAS

        argv += ["--host", ALIAS, "--ssh-config", str(sshd.config), "--remote-python",
                 str(sshd.python)]

    def left() -> int:
        return (len(workers(out)) + len(probes())
                + (len(host_workers(sshd)) if sshd is not None else 0))

    out.mkdir(parents=True)
    with (out.parent / f"{out.name}.log").open("w") as log:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        if phase == "probing":
            env.update(probing(Path(os.environ["XLAGUI_CACHE_DIR"])))
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            cache = sshd.host_cache if sshd is not None else None
            if not wait(lambda: reached(phase, out, cache) or proc.poll() is not None,
                        PHASE_TIMEOUT, lambda: time.sleep(0.05)):
                raise RuntimeError(f"cli, {phase}: not reached in {PHASE_TIMEOUT:.0f} s")
            if proc.poll() is not None:
                raise RuntimeError(f"cli, {phase}: ended before the phase (see {log.name})")
            alive = left()
            asked = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            wait(lambda: proc.poll() is not None and not left(), READY_TIMEOUT,
                 lambda: time.sleep(0.01))
            return Stop(time.perf_counter() - asked, alive, left())
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


# -- the window --------------------------------------------------------------------------------

class Window:
    """The offscreen main window with the real runner, the demo dataset loaded once."""

    def __init__(self, work: Path) -> None:
        from bench_cancel import _Gui
        from PySide6.QtCore import QSettings

        try:
            from xlagui.ui.window.main_window import MainWindow
        except ImportError:  # a checkout before the window's rooms (the "before" figures)
            from xlagui.ui.main_window import MainWindow  # type: ignore[no-redef]

        self.gui = _Gui(work)  # the app, "Stop and close" answered, waiting on signals
        settings = QSettings(str(work / "window.ini"), QSettings.Format.IniFormat)
        self.window = MainWindow(settings=settings, history_root=work / "history",
                                 preload_plots=False)
        self.window.resize(1400, 900)
        self.window.show()
        self.window.open_demo()
        if not self.gui.wait(self.window.dataset_loaded, 300):
            raise RuntimeError("the demo dataset did not load")
        panel = self.window.settings_panel
        panel.epochs.setValue(3)
        panel.batch_size.setValue(8)
        panel.image_size.setValue(48)
        for name, box in panel.arm_boxes.items():
            box.setChecked(name in ARMS)

    def click(self, button: Any) -> None:
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        if not (button.isVisible() and button.isEnabled()):
            raise RuntimeError(f"the {button.text()!r} button cannot be clicked")
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    def tick(self) -> None:
        self.gui.app.processEvents()
        time.sleep(0.005)

    def stop(self, phase: str, work: Path) -> Stop:
        w = self.window
        if phase == "probing":
            os.environ.update(probing(Path(os.environ["XLAGUI_CACHE_DIR"])))
        else:
            os.environ["XLAGUI_PEAK_PROBE"] = "off"
        w.speed_only.setChecked(phase != "training")
        w.settings_panel.budget.setValue(10 if phase in ("inspection", "training") else 120)
        self.click(w.run_button)
        supervisor = w.comparisons.supervisor
        if supervisor is None:
            raise RuntimeError(f"window, {phase}: no comparison started: "
                               f"{w.cannot_run_reason()}")
        out = Path(supervisor.out_dir)
        if not wait(lambda: reached(phase, out) or not w.is_running(), PHASE_TIMEOUT, self.tick):
            raise RuntimeError(f"window, {phase}: not reached in {PHASE_TIMEOUT:.0f} s")
        if not w.is_running():
            raise RuntimeError(f"window, {phase}: the comparison ended before the phase")
        alive = len(workers(work)) + len(probes())
        asked = time.perf_counter()
        self.click(w.stop_button)
        wait(lambda: w.run_button.isEnabled() and not workers(work) and not probes(),
             READY_TIMEOUT, self.tick)
        seconds = time.perf_counter() - asked
        wait(lambda: not w.is_running(), READY_TIMEOUT, self.tick)
        return Stop(seconds, alive, len(workers(work)) + len(probes()))

    def close(self) -> None:
        self.window.close_without_asking()
        self.window.dataset_panel.shutdown()
        self.gui.app.processEvents()


def measure(ways: list[str], phases: list[str], repeats: int, work: Path) -> list[str]:
    rows = []
    window: Window | None = None
    sshd = None
    if "ssh" in ways:
        from tests.helpers.sshd import start_sshd

        sshd = start_sshd(work / "sshd")
    for way in ways:
        for phase in phases:
            stops = []
            for i in range(repeats):
                if way == "window":
                    window = window or Window(work)
                    stop = window.stop(phase, work)
                else:
                    stop = cli_stop(phase, work / way / f"{phase}-{i}",
                                    sshd if way == "ssh" else None)
                stops.append(stop)
                print(f"{way}, {phase}: ready {stop.seconds:.2f} s after Stop "
                      f"({stop.workers} workers up{f', {stop.left} LEFT' if stop.left else ''})",
                      flush=True)
            times = [s.seconds for s in stops]
            worst = max(times)
            rows.append(f"| {way} | {PHASES[phase]} | {statistics.median(times):.2f} s | "
                        f"{worst:.2f} s | {'met' if worst <= GOAL else 'MISSED'} |")
    if window is not None:
        window.close()
    if sshd is not None:
        sshd.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--phases", nargs="*", choices=list(PHASES), default=list(PHASES))
    p.add_argument("--ways", nargs="*", choices=WAYS, default=["window", "cli"])
    p.add_argument("--note", default="", help="a sentence for the section (the machine's load)")
    p.add_argument("--label", default="", help="said after the heading and in the section's "
                   "name (BENCHMARKS.md keeps one section per label)")
    add_write(p)
    args = p.parse_args(argv)
    load = load_average()
    with tempfile.TemporaryDirectory(prefix="xlagui-stop-") as tmp:
        work = Path(tmp)
        os.environ["XLAGUI_DATA_DIR"] = str(work / "data")
        os.environ["XLAGUI_CACHE_DIR"] = str(work / "cache")  # the demo set, made once
        rows = measure(args.ways, args.phases, args.repeats, work)
    lines = [
        f"## Stop in every phase{f', {args.label}' if args.label else ''}",
        "",
        f"`python bench/bench_stop.py --repeats {args.repeats}`: the time from Stop to the app "
        "being ready again, per phase of a comparison of the demo dataset (48 px, batch 8, "
        f"the baseline, XLA and {', '.join(ARMS)}: three measuring workers), real TensorFlow "
        "workers on this computer. Window (offscreen): Run and Stop are real mouse clicks; "
        "ready = the Run button is enabled again and no worker process is left. CLI: "
        "`xlagui compare --demo` stopped with SIGINT (Ctrl+C); ready = it has exited and no "
        "worker process is left. The phase is read from the workers' events as they are "
        "written, never from a sleep (the bench's docstring says how).",
        *(["", "ssh: the same CLI with `--host` on the test SSH host of `tests/helpers/sshd.py` "
           "(a real sshd on this computer; the host's Python runs this checkout, the dataset "
           "is copied to it first); ready = the CLI has exited and no worker is left under "
           "that sshd."] if "ssh" in args.ways else []),
        *(["", args.note] if args.note else []),
        "",
        f"| way | phase | median | worst | goal ≤ {GOAL:g} s |",
        "|---|---|---|---|---|",
        *rows,
    ]
    name = f"stop-{args.label}" if args.label else "stop"
    publish(name, section_text(lines, load), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
