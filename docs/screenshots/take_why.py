"""The "Why" tab's screenshots, from a real comparison's folder (one `xlagui compare` wrote):

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_why.py FOLDER \
        [--size 1600x1000] [--out DIR]

The folder is opened as History opens it, the Why tab chosen with a click on its tab, and each
of its three pages grabbed: `why.png` (where the time goes), `why-compiles.png` and
`why-parity.png`. Settings go to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PAGES = ("why", "why-compiles", "why-parity")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder", type=Path, help="a comparison's folder (its comparison.json)")
    parser.add_argument("--size", default="1600x1000", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix="xlagui-why-shots-"))
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
    if not window.open_history_item(args.folder):
        print(f"cannot open {args.folder}", file=sys.stderr)
        return 1
    bar = window.tabs.tabBar()
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton,
                     pos=bar.tabRect(window.tabs.indexOf(window.why_panel)).center())
    views = window.why_panel.views
    for index, name in enumerate(PAGES):
        tabs = views.tabBar()
        QTest.mouseClick(tabs, Qt.MouseButton.LeftButton, pos=tabs.tabRect(index).center())
        for _ in range(20):
            app.processEvents()
            QTest.qWait(50)
        path = args.out / f"{name}.png"
        if not window.grab().save(str(path)):
            print(f"cannot write {path}", file=sys.stderr)
            return 1
        print("saved", path, flush=True)
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
