"""Screenshots of the speed phase: the demo set, "Measure speed only", real workers.

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_speed_screenshot.py

Opens the demo set at 64 px, presses Run comparison with a real mouse click, saves
docs/screenshots/measuring.png while the pairs arrive and docs/screenshots/speed.png when the
measurement has ended (about a minute and a half on 2 cores).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")

    from PySide6.QtCore import QSettings, Qt, QTimer
    from PySide6.QtTest import QTest

    from xlagui.ui.app import CrashHandler, make_application
    from xlagui.ui.main_window import MainWindow

    app = make_application()
    window = MainWindow(
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        history_root=tmp / "history",
    )
    handler = CrashHandler(lambda: window).install()
    window.resize(1600, 1000)
    window.move(0, 0)
    window.show()
    shots = {"measuring": False}

    def on_dataset(_scan: object) -> None:
        window.settings_panel.image_size.setValue(64)
        window.settings_panel.budget.setValue(60)
        window.speed_only.setChecked(True)
        QTimer.singleShot(500, press)

    def press() -> None:
        QTest.mouseClick(window.run_button, Qt.MouseButton.LeftButton)

    def on_update(c: object) -> None:
        i = getattr(c, "interleaved", None)
        if i is not None and i.pairs >= 10 and not shots["measuring"]:
            shots["measuring"] = True
            window.grab().save(str(HERE / "measuring.png"))

    def on_finished(_report: object) -> None:
        QTimer.singleShot(1000, shoot)

    def shoot() -> None:
        window.grab().save(str(HERE / "speed.png"))
        print("saved", HERE / "speed.png", flush=True)
        window.close()

    window.dataset_loaded.connect(on_dataset)
    window.comparison_started.connect(
        lambda _r: window.comparisons.supervisor.measurement_updated.connect(on_update)  # type: ignore[union-attr]
    )
    window.comparison_finished.connect(on_finished)
    window.open_demo()
    code = app.exec()
    handler.uninstall()
    shutil.rmtree(tmp, ignore_errors=True)
    return int(code or handler.last is not None)


if __name__ == "__main__":
    sys.exit(main())
