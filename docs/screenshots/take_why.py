"""The "Why" tab's screenshots, from a real comparison's folder (one `xlagui compare` wrote):

    xvfb-run -s "-screen 0 1600x1000x24" python docs/screenshots/take_why.py FOLDER \
        [--size 1600x1000] [--out DIR]

The folder is opened as History opens it, the Why tab chosen with a click on its tab, and each
of its three pages grabbed: `why.png` (where the time goes), `why-compiles.png` and
`why-parity.png`. Settings go to a temporary folder.
"""

from __future__ import annotations

import sys

from _window import arguments, click_tab, open_window, save

PAGES = ("why", "why-compiles", "why-parity")


def main() -> int:
    args = arguments(__doc__, "a comparison's folder (its comparison.json)")
    app, window = open_window(args.size, "xlagui-why-shots-")
    if not window.open_history_item(args.folder):
        print(f"cannot open {args.folder}", file=sys.stderr)
        return 1
    click_tab(window.tabs, window.tabs.indexOf(window.why_panel))
    for index, name in enumerate(PAGES):
        click_tab(window.why_panel.views, index)
        if not save(app, window, args.out / f"{name}.png"):
            return 1
    window.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
