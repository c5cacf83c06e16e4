"""Screenshot of a comparison with arms: Baseline | XLA | bf16, the speed-up plot with a curve
per arm, the ranked summary.

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_arms_screenshot.py [--real]

Opens the demo set at 64 px, ticks bf16 under "Also measure" and "Measure speed only", presses
Run comparison with real mouse clicks and saves docs/screenshots/arms.png (and arms-report.png,
the PNG report) when the measurement has ended. By default the measuring workers are the test
suite's fake (`tests/helpers/fake_measure_worker.py`: synthetic timings, bf16 2.5x and XLA 2x
faster, a few seconds); with `--real` they are real TensorFlow workers (minutes on 2 cores; wrap
in `flock /tmp/xlagui-cpu.lock` on a shared machine).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def main() -> int:
    real = "--real" in sys.argv
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    sys.path.insert(0, str(ROOT))

    from PySide6.QtCore import QPoint, QSettings, Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QCheckBox

    from xlagui.core.spec import RunSpec
    from xlagui.ui.app import CrashHandler, make_application
    from xlagui.ui.main_window import MainWindow
    from xlagui.ui.report_png import render_report_png

    fake = ROOT / "tests" / "helpers" / "fake_measure_worker.py"

    def fake_command(spec: RunSpec) -> list[str]:
        return [sys.executable, str(fake), str(spec.run_dir / "spec.json")]

    app = make_application()
    window = MainWindow(
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        history_root=tmp / "history",
        **({} if real else {"measure_command": fake_command}),
    )
    handler = CrashHandler(lambda: window).install()
    window.resize(1600, 1000)
    window.move(0, 0)
    window.show()

    def tick(box: QCheckBox) -> None:
        # On the box itself, at the left end of the check box.
        QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))

    def on_dataset(_scan: object) -> None:
        panel = window.settings_panel
        panel.image_size.setValue(64)
        panel.budget.setValue(60)
        if not panel.arm_boxes["bf16"].isChecked():
            tick(panel.arm_boxes["bf16"])
        if not window.speed_only.isChecked():
            tick(window.speed_only)
        QTimer.singleShot(500, press)

    def press() -> None:
        QTest.mouseClick(window.run_button, Qt.MouseButton.LeftButton)

    def on_finished(_report: object) -> None:
        QTimer.singleShot(1000, shoot)

    def shoot() -> None:
        window.grab().save(str(HERE / "arms.png"))
        print("saved", HERE / "arms.png", flush=True)
        if window.comparisons.report is not None:
            render_report_png(window.comparisons.report, HERE / "arms-report.png")
            print("saved", HERE / "arms-report.png", flush=True)
        window.close()

    window.dataset_loaded.connect(on_dataset)
    window.comparison_finished.connect(on_finished)
    window.open_demo()
    code = app.exec()
    handler.uninstall()
    shutil.rmtree(tmp, ignore_errors=True)
    return int(code or handler.last is not None)


if __name__ == "__main__":
    sys.exit(main())
