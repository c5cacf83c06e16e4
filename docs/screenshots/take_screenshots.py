"""Screenshots of the real app at each stage: empty, dataset loaded, runs in progress, done.

    Xvfb :99 -screen 0 1600x1000x24 &
    DISPLAY=:99 python docs/screenshots/take_screenshots.py [--epochs 6] [--image-size 64]

Runs a real comparison (TensorFlow in worker processes, CPU) on the demo dataset and writes
docs/screenshots/{empty,dataset,running,done}.png. History and settings go to a temporary
folder; the demo set comes from (or is made in) the usual cache.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--image-size", type=int, default=64)
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")

    from PySide6.QtCore import QSettings, QTimer

    from xlagui.ui.app import CrashHandler, _probe_devices, make_application
    from xlagui.ui.main_window import TAB_DATASET, MainWindow

    app = make_application()
    window = MainWindow(settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
                        probe=_probe_devices)
    handler = CrashHandler(lambda: window).install()
    window.resize(1600, 1000)
    window.move(0, 0)
    window.show()
    taken: list[str] = []

    def shot(name: str) -> None:
        path = args.out / f"{name}.png"
        window.grab().save(str(path))
        taken.append(str(path))
        print("saved", path, flush=True)

    def later(ms: int, fn: Any) -> None:
        QTimer.singleShot(ms, fn)

    def on_devices(_devices: object) -> None:
        later(500, lambda: (shot("empty"), window.open_demo()))

    def on_dataset(_scan: object) -> None:
        panel = window.dataset_panel
        panel.grid.setCurrentIndex(panel.thumbnails.index(6))
        window.tabs.setCurrentIndex(TAB_DATASET)
        later(2500, lambda: (shot("dataset"), start()))

    def start() -> None:
        s = window.settings_panel
        s.epochs.setValue(args.epochs)
        s.batch_size.setValue(args.batch)
        s.image_size.setValue(args.image_size)
        window.start_comparison()
        assert window.comparisons.supervisor is not None
        window.comparisons.supervisor.event_received.connect(on_event)

    running_taken = [False]

    def on_event(run_id: str, event: Any) -> None:
        if running_taken[0] or "-xla-" not in run_id or event.type != "batch":
            return
        if event.epoch >= max(2, args.epochs // 2):
            running_taken[0] = True
            later(300, lambda: shot("running"))

    def on_finished(_report: object) -> None:
        later(1500, lambda: (shot("done"), window.close()))

    window.devices_ready.connect(on_devices)
    window.dataset_loaded.connect(on_dataset)
    window.comparison_finished.connect(on_finished)
    later(15 * 60 * 1000, app.quit)  # a safety net
    app.exec()
    handler.uninstall()
    print("\n".join(taken))
    return 0 if len(taken) == 4 else 1


if __name__ == "__main__":
    sys.exit(main())
