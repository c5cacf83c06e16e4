"""What the screenshot scripts share: the arguments (a folder, the window's size, where the
PNGs go), a window opened with its settings, history and data in a temporary folder, a few
event-loop turns to let it draw, and a grab saved to a PNG."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def arguments(doc: str, what: str) -> argparse.Namespace:
    """`FOLDER [--size WxH] [--out DIR]`; `what` says what the folder holds."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("folder", type=Path, help=what)
    parser.add_argument("--size", default="1600x1000", help="the window's size, WIDTHxHEIGHT")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def open_window(size: str, prefix: str) -> tuple[Any, Any]:
    """(the application, the main window shown at `size`), everything it keeps in a new
    temporary folder."""
    width, height = (int(v) for v in size.split("x"))
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["XLAGUI_DATA_DIR"] = str(tmp / "data")
    sys.path.insert(0, str(ROOT))
    from PySide6.QtCore import QSettings

    from xlagui.ui.app import make_application
    from xlagui.ui.window.main_window import MainWindow

    app = make_application()
    window = MainWindow(settings=QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat),
                        history_root=tmp / "history", probe=lambda: [])
    window.resize(width, height)
    window.show()
    return app, window


def click_tab(tabs: Any, index: int) -> None:
    """A real click on tab `index` of the tab widget or bar `tabs`."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    bar = tabs.tabBar() if hasattr(tabs, "tabBar") else tabs
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())


def save(app: Any, window: Any, path: Path) -> bool:
    """Let the window draw for a second, then grab it into `path`."""
    from PySide6.QtTest import QTest

    for _ in range(20):
        app.processEvents()
        QTest.qWait(50)
    if not window.grab().save(str(path)):
        print(f"cannot write {path}", file=sys.stderr)
        return False
    print("saved", path, flush=True)
    return True
