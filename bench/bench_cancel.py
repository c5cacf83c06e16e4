"""How fast a run stops when the user presses Stop or closes the window. Goal: within 2 s every
time (cooperative first, then terminate, then kill).

    python bench/bench_cancel.py [--repeats 3] [--write]

The runner (`run_worker`, the production grace periods) is asked to stop a real worker during
training, one second into the XLA compile and at the start of validation, and a fake worker that
ignores the request (and one that ignores SIGTERM too). The window (offscreen) is stopped with
its Stop action during a replayed run, and closed during a real one. The tests assert that these
stops happen and leave no process behind; how long they take is measured here.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import add_write, load_average, publish, section_text

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
from tests.helpers.images import make_split_dataset
from xlagui.core.data.scan import scan_dataset
from xlagui.core.measure.runner import run_worker, samples_from_scan
from xlagui.core.protocol.config import RunConfig, XlaMode
from xlagui.core.protocol.events import BatchEvent, CancelledEvent, Event, StartedEvent
from xlagui.core.protocol.spec import RunSpec
from xlagui.core.protocol.task import TaskState

GOAL = 2.0

# (what is stopped, how it is asked); the order of the table.
PHASES: dict[str, str] = {
    "training": "runner, real worker, during training (epoch 2)",
    "compile": "runner, real worker, 1 s into the XLA compile",
    "validation": "runner, real worker, at the start of validation (400 images)",
    "stuck": "runner, a worker that ignores the request (terminated)",
    "stuck-sigterm": "runner, a worker that also ignores SIGTERM (killed)",
    "gui-stop": "window, Stop action during a replayed run (fake worker, no TensorFlow)",
    "gui-close": "window closed during a real run (just after the worker started)",
}


def stop_latency(phase: str, work: Path, i: int) -> tuple[float, bool]:
    """Seconds from the Stop request to the run having ended, and whether it had to be forced."""
    scan = scan_dataset(work / "data")
    names, train, val = samples_from_scan(scan)
    mode = XlaMode.JIT if phase == "compile" else XlaMode.OFF
    cfg = RunConfig(epochs=100, batch_size=8, image_size=96)
    spec = RunSpec(
        "c",
        "xla" if mode is XlaMode.JIT else "baseline",
        mode,
        cfg,
        names,
        train,
        val,
        work / f"run-{phase}-{i}",
    )
    state = TaskState()
    asked: list[float] = []

    def ask() -> None:
        if not asked:
            asked.append(time.perf_counter())
            state.request_interruption()

    def on_event(e: Event) -> None:
        if phase == "compile" and isinstance(e, StartedEvent):
            # The first step traces and compiles; ask a moment into it.
            threading.Timer(1.0, ask).start()
        elif phase == "training" and isinstance(e, BatchEvent) and e.epoch == 2 and e.step == 2:
            ask()
        elif (
            phase == "validation"
            and isinstance(e, BatchEvent)
            and e.epoch == 2
            and (e.step == len(train) // 8)
        ):
            ask()  # the last training step of the epoch: validation is next
        elif phase.startswith("stuck") and isinstance(e, StartedEvent):
            ask()

    command = None
    if phase.startswith("stuck"):
        script = work / f"{phase}.py"
        ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if "sigterm" in phase else ""
        started = StartedEvent(run_id="c", variant="baseline").to_json()
        script.write_text(
            f"import signal, sys, time\n{ignore}"
            f"sys.stdout.write({started!r} + '\\n'); sys.stdout.flush()\n"
            "time.sleep(60)\n",
            encoding="utf-8",
        )
        command = [sys.executable, str(script)]
    result = run_worker(spec, state, on_event, command=command)
    ended = time.perf_counter()
    last = result.events[-1]
    return ended - asked[0], isinstance(last, CancelledEvent) and last.forced


class _Gui:
    """The offscreen main window, driven through its public API as the tests drive it."""

    def __init__(self, work: Path) -> None:
        from PySide6.QtCore import QSettings

        from xlagui.ui.app import make_application
        from xlagui.ui.shared import dialogs

        self.app = make_application()
        self.work = work
        self.settings = QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat)
        dialogs.ask = lambda *args, **kwargs: True  # "Stop and close"

    def wait(self, signal: Any, timeout_s: float, until: Callable[[], bool] | None = None) -> bool:
        """Run the event loop until `signal` fires (or `until()` holds); False on timeout."""
        fired: list[bool] = []
        slot = lambda *args: fired.append(True)  # noqa: E731
        if signal is not None:
            signal.connect(slot)
        deadline = time.monotonic() + timeout_s
        try:
            while not fired and not (until is not None and until()):
                if time.monotonic() > deadline:
                    return False
                self.app.processEvents()
                time.sleep(0.001)
        finally:
            if signal is not None:
                signal.disconnect(slot)
        return True

    def window(self, worker: Any, i: int) -> Any:
        from xlagui.ui.window.main_window import MainWindow

        window = MainWindow(
            settings=self.settings,
            worker=worker,
            history_root=self.work / f"history-{i}",
            preload_plots=False,
        )
        window.resize(1400, 900)
        window.show()
        window.open_dataset(self.work / "data")
        if not self.wait(window.dataset_loaded, 60):
            raise RuntimeError("the dataset did not load")
        return window

    def stop_latency(self, phase: str, i: int) -> tuple[float, bool]:
        from tests.helpers.streams import FakeWorker, run_events

        if phase == "gui-stop":
            # As tests/ui/runs/test_runs.py::test_stop_ends_the_run_early: 40 steps, 50 ms apart.
            fake = FakeWorker(
                {
                    "baseline": run_events(variant="baseline", steps=40),
                    "xla": run_events(variant="xla", xla_mode="jit", steps=40),
                },
                delay=0.05,
            )
            window = self.window(fake, i)
        else:
            window = self.window(None, i)  # the real runner and worker processes
        panel = window.settings_panel
        panel.epochs.setValue(50 if phase == "gui-close" else 3)
        panel.batch_size.setValue(8)
        panel.image_size.setValue(48)
        started: list[bool] = []
        if not window.start_comparison():
            raise RuntimeError(f"the comparison did not start: {window.cannot_run_reason()}")
        assert window.comparisons.supervisor is not None
        window.comparisons.supervisor.event_received.connect(
            lambda _run_id, event: started.append(True) if event.type == "started" else None
        )
        column = window.runs_view.columns["baseline"]
        if phase == "gui-stop":
            ok = self.wait(
                None, 30, lambda: column.trace is not None and column.trace.steps_done > 2
            )
        else:
            ok = self.wait(None, 300, lambda: bool(started))
        if not ok:
            raise RuntimeError(f"{phase}: the run never got going")
        finished: list[Any] = []
        window.comparison_finished.connect(finished.append)
        asked = time.perf_counter()
        if phase == "gui-stop":
            window.stop_action.trigger()
        else:
            window.close()
        if not self.wait(None, 60, lambda: bool(finished)):
            raise RuntimeError(f"{phase}: the run did not stop within 60 s")
        seconds = time.perf_counter() - asked
        forced = any(
            isinstance(e, CancelledEvent) and e.forced for r in finished[0].runs for e in r.events
        )
        window.comparisons.supervisor = None
        window.close()
        window.dataset_panel.shutdown()
        window.deleteLater()
        self.app.processEvents()
        return seconds, forced


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--phases", nargs="*", choices=list(PHASES), default=list(PHASES))
    add_write(p)
    args = p.parse_args(argv)
    load = load_average()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        # A validation set large enough that validating takes a while.
        make_split_dataset(work / "data", {"a": 24, "b": 24}, {"a": 200, "b": 200}, size=(120, 120))
        gui: _Gui | None = None
        for phase in args.phases:
            lat = []
            forced = 0
            for i in range(args.repeats):
                if phase.startswith("gui"):
                    gui = gui or _Gui(work)
                    seconds, was_forced = gui.stop_latency(phase, i)
                else:
                    seconds, was_forced = stop_latency(phase, work, i)
                lat.append(seconds)
                forced += was_forced
                print(
                    f"{phase}: stopped {seconds:.2f} s after the request"
                    f"{' (forced)' if was_forced else ''}",
                    flush=True,
                )
            worst = max(lat)
            rows.append(
                f"| {PHASES[phase]} | {statistics.median(lat):.2f} s | {worst:.2f} s | {forced} of "
                f"{len(lat)} | {'met' if worst <= GOAL else 'MISSED'} |"
            )
    lines = [
        "## Stop (cancel) latency",
        "",
        f"`python bench/bench_cancel.py --repeats {args.repeats}`: the time from the stop "
        "request to the run having ended (the worker process gone; for the window, its "
        "`comparison_finished` signal). Real runs are the article's CNN on CPU: 96 px, "
        "batch 8 for the runner rows, 48 px for the window; the window is offscreen. "
        "Cooperative stop at the next batch; after a 1 s grace the worker is terminated, "
        "0.5 s later killed. The tests assert that each stop happens and leaves no process "
        "behind; the times are measured only here.",
        "",
        "| what is stopped | median | worst | forced | goal ≤ 2 s |",
        "|---|---|---|---|---|",
        *rows,
    ]
    publish("cancel", section_text(lines, load), args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
