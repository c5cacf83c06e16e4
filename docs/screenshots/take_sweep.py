"""The Sweep tab's screenshot, from a real sweep's folder (one `xlagui sweep` wrote):

    xlagui sweep --demo --batch 16,64 --image-size 48 --arms jit --budget 120 --out FOLDER
    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_sweep.py FOLDER \
        [--size 1600x1000] [--out DIR]

The folder is opened as "Open a sweep…" opens it, the Sweep tab chosen with a click on its tab,
and the window grabbed: `sweep.png`. Settings go to a temporary folder.
"""

from __future__ import annotations

import sys

from _window import arguments, click_tab, open_window, save


def main() -> int:
    args = arguments(__doc__, "a sweep's folder (its sweep.json)")
    app, window = open_window(args.size, "xlagui-sweep-shots-")
    click_tab(window.tabs, window.tabs.indexOf(window.sweep_tab))
    if not window.sweep_tab.open_folder(args.folder):
        print(f"cannot open {args.folder}", file=sys.stderr)
        return 1
    if not save(app, window, args.out / "sweep.png"):
        return 1
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
