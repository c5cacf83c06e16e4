"""The Sweep tab's screenshot, from a real sweep's folder (one `xlagui sweep` wrote):

    xlagui sweep --demo --batch 16,64 --image-size 48 --arms jit --budget 120 --out FOLDER
    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_sweep.py FOLDER \
        [--size 1600x1000] [--out DIR]

The folder is opened as "Open a sweep…" opens it, the Sweep tab chosen with a click on its tab,
and the window grabbed: `sweep.png`. Settings go to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a sweep's folder (its sweep.json)")
    parser.add_argument("--size", default="1600x1000", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-sweep-shots-"))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    sys.path.insert(0, str(ROOT))
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QSettings, Qt
    from PySide6.QtTest import QTest

    from xlagui.ui.app import make_application
    from xlagui.ui.window.main_window import MainWindow

    app = make_application()
    window = MainWindow(settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
                        history_root=tmp / "history", probe=lambda: [])
    window.resize(width, height)
    window.show()
    bar = window.tabs.tabBar()
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton,
                     pos=bar.tabRect(window.tabs.indexOf(window.sweep_tab)).center())
    if not window.sweep_tab.open_folder(args.folder):
        print(f"cannot open {args.folder}", file=sys.stderr)
        return 1
    for _ in range(20):
        app.processEvents()
        QTest.qWait(50)
    path = args.out / "sweep.png"
    if not window.grab().save(str(path)):
        print(f"cannot write {path}", file=sys.stderr)
        return 1
    print("saved", path, flush=True)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
