"""A screenshot of the problem view: a label conflict selected, its two images side by side.

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_problem_screenshot.py

Draws a small elephant folder (the demo's pictures) into a temporary folder, copies one
African picture into asian/ (a label conflict), opens it in the window, selects the
conflict and writes docs/screenshots/problem.png. No TensorFlow is needed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def make_folder(root: Path) -> Path:
    from xlagui.core.data.demo import generate_demo_dataset

    generate_demo_dataset(root, train_per_class=40, test_per_class=10, image_size=160)
    (root / "xlagui-demo.json").unlink()  # a folder of the user's, not the demo set
    african = sorted((root / "train" / "african").iterdir())
    asian = sorted((root / "train" / "asian").iterdir())
    shutil.copyfile(african[0], root / "train" / "asian" / "maybe-african.jpg")
    shutil.copyfile(asian[1], root / "test" / "asian" / "seen-in-training.jpg")
    return root


def select_conflict(window: Any) -> None:
    """Open the label-conflict group of the window's problem list and select its first case."""
    tree = window.dataset_panel.problem_tree
    for i in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(i)
        if group is not None and "different classes" in group.text(0):
            group.setExpanded(True)
            tree.setCurrentItem(group.child(0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "problem.png")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")

    from PySide6.QtCore import QSettings, QTimer

    from xlagui.ui.app import CrashHandler, make_application
    from xlagui.ui.window.main_window import MainWindow

    app = make_application()
    window = MainWindow(
        settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
        history_root=tmp / "history",
        preload_plots=False,
    )
    handler = CrashHandler(lambda: window).install()
    window.resize(1440, 900)
    window.move(0, 0)
    window.show()

    def on_dataset(_scan: object) -> None:
        select_conflict(window)
        QTimer.singleShot(1500, shoot)

    def shoot() -> None:
        window.grab().save(str(args.out))
        print("saved", args.out, flush=True)
        window.close()

    window.dataset_loaded.connect(on_dataset)
    window.open_dataset(make_folder(tmp / "elephants"))
    code = app.exec()
    handler.uninstall()
    shutil.rmtree(tmp, ignore_errors=True)
    return int(code or handler.last is not None)


if __name__ == "__main__":
    sys.exit(main())
