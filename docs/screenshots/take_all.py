"""Every screenshot the README shows, from real runs of the window as the code now stands.

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_all.py \
        [--size 1600x1000] [--image-size 64] [--epochs 4] [--fake] [--out DIR]

One window, driven the way a user drives it (real clicks on the run button and the check
boxes), in this order:

1. `empty.png`: the window as it opens.
2. `problem.png`: a folder with a label conflict, the conflict selected (no TensorFlow).
3. `dataset.png`: the demo set loaded, one picture selected.
4. `measuring.png`, then `speed.png`: the speed measurement under way, and its answer (the
   README's main command: Measure speed only).
5. `arms.png` and `arms-report.png`: bf16 also measured; the window and its PNG report.
6. `running.png`, then `done.png`: a comparison with training runs, mid-way and done.
7. `xla-did.png`: the "What XLA did" tab of that comparison; `why.png`, `why-compiles.png`
   and `why-parity.png`: its Why tab, each page chosen with a click (`take_why.py` takes the
   same pages from any comparison folder).
8. `history.png`: the History tab with the three comparisons.
9. `sweep.png`: a small real sweep (`xlagui sweep --demo --batch 16,64 --image-size 48 --arms
   jit --budget 100`, about three minutes) opened in the Sweep tab (`take_sweep.py` does the same
   for any sweep folder). Not with `--fake`.

The defaults are settings where the demo set learns (96 px, 6 epochs: the loss falls and the
validation accuracy leaves 50%); the README's captions say them. Real TensorFlow workers on the
CPU by default (about 20 minutes on 2 cores); `--fake` uses the test suite's fake workers
(synthetic timings, seconds) to check the layout only — never for the README. History and
settings go to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHOTS = ("empty", "problem", "dataset", "measuring", "speed", "arms", "arms-report", "running",
         "done", "xla-did", "why", "why-compiles", "why-parity", "history")
WHY_PAGES = ("why", "why-compiles", "why-parity")  # the Why tab's pages, in their order
SWEEP = ["--demo", "--batch", "16,64", "--image-size", "48", "--arms", "jit", "--budget", "100"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", default="1600x1000", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--image-size", type=int, default=96)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--budget", type=int, default=60, help="each speed measurement's budget")
    parser.add_argument("--fake", action="store_true", help="fake workers: layout checks only")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    sys.path.insert(0, str(ROOT))
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QPoint, QSettings, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QCheckBox, QWidget
    from take_problem_screenshot import (  # type: ignore[import-not-found]
        make_folder,
        select_conflict,
    )

    from xlagui.ui.app import CrashHandler, _probe_devices, make_application
    from xlagui.ui.report_png import render_report_png
    from xlagui.ui.settings.model_panel import real_checker
    from xlagui.ui.window.main_window import TAB_DATASET, TAB_HISTORY, TAB_RUNS, MainWindow

    fakes: dict[str, Any] = {}
    if args.fake:
        from tests.helpers.streams import FakeWorker, run_events
        from tests.ui.conftest import fake_measure_command

        fakes = {
            "measure_command": fake_measure_command,
            "worker": FakeWorker(
                {
                    "baseline": run_events(variant="baseline", epoch_seconds=(3.0, 1.0, 1.0)),
                    "xla": run_events(variant="xla", xla_mode="jit",
                                      epoch_seconds=(6.0, 0.5, 0.5)),
                },
                delay=0.02,
            ),
        }
    app = make_application()
    window = MainWindow(
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        history_root=tmp / "history",
        probe=_probe_devices,
        model_checker=None if args.fake else real_checker,
        **fakes,
    )
    handler = CrashHandler(lambda: window).install()
    window.resize(width, height)
    window.move(0, 0)
    window.show()
    taken: list[str] = []
    steps: list[Callable[[], None]] = []

    def later(ms: int, fn: Callable[[], None]) -> None:
        QTimer.singleShot(ms, fn)

    def shot(name: str) -> None:
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        taken.append(name)
        print("saved", path, flush=True)

    def click(widget: QWidget) -> None:
        if isinstance(widget, QCheckBox):  # on the box, not on empty space right of its label
            QTest.mouseClick(widget, Qt.MouseButton.LeftButton,
                             pos=QPoint(8, widget.height() // 2))
        else:
            QTest.mouseClick(widget, Qt.MouseButton.LeftButton)

    def then() -> None:
        if steps:
            steps.pop(0)()
        else:
            window.close()

    # -- the stages, each ends by calling then() -------------------------------------------

    def on_devices(_devices: object) -> None:
        window.devices_ready.disconnect(on_devices)
        later(800, lambda: (shot("empty"), then()))

    def problem() -> None:
        def loaded(_scan: object) -> None:
            window.dataset_loaded.disconnect(loaded)
            select_conflict(window)
            later(1500, lambda: (shot("problem"), then()))

        window.dataset_loaded.connect(loaded)
        window.open_dataset(make_folder(tmp / "elephants"))

    def dataset() -> None:
        def loaded(_scan: object) -> None:
            window.dataset_loaded.disconnect(loaded)
            panel = window.dataset_panel
            panel.grid.setCurrentIndex(panel.thumbnails.index(6))
            window.tabs.setCurrentIndex(TAB_DATASET)
            later(2500, lambda: (shot("dataset"), then()))

        window.dataset_loaded.connect(loaded)
        window.open_demo()

    def run(*, speed_only: bool, bf16: bool, mid: str, end: Callable[[Any], None]) -> None:
        s = window.settings_panel
        s.image_size.setValue(args.image_size)
        s.epochs.setValue(args.epochs)
        s.batch_size.setValue(32)
        if s.arm_boxes["bf16"].isChecked() != bf16:
            click(s.arm_boxes["bf16"])
        s.budget.setValue(args.budget)
        if window.speed_only.isChecked() != speed_only:
            click(window.speed_only)
        mid_taken = [False]

        def on_update(comparison: Any) -> None:
            i = getattr(comparison, "interleaved", None)
            if not mid_taken[0] and mid == "measuring" and i is not None and i.pairs >= 6:
                mid_taken[0] = True
                later(200, lambda: shot("measuring"))

        def on_event(run_id: str, event: Any) -> None:
            if (not mid_taken[0] and mid == "running" and "-xla-" in run_id
                    and event.type == "epoch" and event.epoch >= max(1, args.epochs // 2)):
                mid_taken[0] = True
                later(300, lambda: shot("running"))

        def finished(report: Any) -> None:
            window.comparison_finished.disconnect(finished)
            later(1500, lambda: (end(report), then()))

        def started(_report: Any) -> None:
            # A comparison measured here first looks at the machine for a second (issue 37):
            # its supervisor exists once it has started, not when the button was clicked.
            window.comparisons.started.disconnect(started)
            supervisor = window.comparisons.supervisor
            assert supervisor is not None
            supervisor.measurement_updated.connect(on_update)
            supervisor.event_received.connect(on_event)

        window.comparison_finished.connect(finished)
        window.comparisons.started.connect(started)
        window.tabs.setCurrentIndex(TAB_RUNS)
        click(window.run_button)
        assert window.comparisons.supervisor is not None or window.comparisons.preflight_pending, (
            window.cannot_run_reason())

    def arms_end(report: Any) -> None:
        shot("arms")
        render_report_png(report, args.out / "arms-report.png")
        taken.append("arms-report")

    def done_end(_report: Any) -> None:
        shot("done")
        window.tabs.setCurrentIndex(window.tabs.indexOf(window.xla_did_panel))
        later(800, lambda: shot("xla-did"))
        later(1600, why_pages)

    def why_pages() -> None:
        bar = window.tabs.tabBar()
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton,
                         pos=bar.tabRect(window.tabs.indexOf(window.why_panel)).center())
        views = window.why_panel.views.tabBar()
        for i, name in enumerate(WHY_PAGES):
            later(800 * (i + 1), lambda i=i, name=name: (
                QTest.mouseClick(views, Qt.MouseButton.LeftButton, pos=views.tabRect(i).center()),
                later(500, lambda: shot(name))))

    def sweep() -> None:
        folder = tmp / "sweep"
        done = subprocess.run([sys.executable, "-m", "xlagui", "sweep", *SWEEP, "--out",
                               str(folder)], check=False, env=os.environ.copy())
        if done.returncode not in (0, 1):  # 1: a cell's verdict is unsure; the sweep ran
            print(f"the sweep failed ({done.returncode})", file=sys.stderr)
            then()
            return
        bar = window.tabs.tabBar()
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton,
                         pos=bar.tabRect(window.tabs.indexOf(window.sweep_tab)).center())
        if window.sweep_tab.open_folder(folder):
            later(1500, lambda: (shot("sweep"), then()))
        else:
            print(f"cannot open {folder}", file=sys.stderr)
            then()

    def history() -> None:
        window.tabs.setCurrentIndex(TAB_HISTORY)
        window.history_panel.refresh()
        later(1500, lambda: (shot("history"), then()))

    steps += [
        problem,
        dataset,
        lambda: run(speed_only=True, bf16=False, mid="measuring", end=lambda r: shot("speed")),
        lambda: run(speed_only=True, bf16=True, mid="", end=arms_end),
        lambda: run(speed_only=False, bf16=False, mid="running", end=done_end),
        lambda: later(5000, history),
    ]
    if not args.fake:
        steps.append(sweep)
    window.devices_ready.connect(on_devices)
    later(40 * 60 * 1000, app.quit)  # a safety net
    app.exec()
    handler.uninstall()
    shutil.rmtree(tmp, ignore_errors=True)
    missing = [s for s in SHOTS + (() if args.fake else ("sweep",)) if s not in taken]
    if missing:
        print("missing:", ", ".join(missing), file=sys.stderr)
    return 1 if missing or handler.last is not None else 0


if __name__ == "__main__":
    sys.exit(main())
